// Strict JSON: a text is exactly one JSON value and nothing else (API.md Conventions).
//
// nlohmann's parser alone is lenient where a request must not be: it skips a UTF-8
// byte-order mark, takes a NUL byte for the end of its input, and lets the last of two
// equal keys win, so a body (or a token's claims) naming "sub" twice would act as the
// second to us and as the first to a proxy or a log reader that checked it. Every text from
// outside is parsed here instead.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace boxoffice {

// The value, or nullopt with *why set (a message fit for the client) when text is not
// exactly one JSON value: a byte-order mark, a NUL byte anywhere, invalid JSON or UTF-8,
// bytes after the value, or an object that names one key twice.
std::optional<nlohmann::json> ParseStrictJson(std::string_view text, std::string* why);

}  // namespace boxoffice
