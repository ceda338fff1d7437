// Text that may enter the service from outside (query parameters, JSON strings): API.md asks
// for valid UTF-8 without U+0000. PostgreSQL cuts a string at U+0000 and refuses invalid
// UTF-8 with its own error text, so both are refused at the edge, where the client can be
// told which field is wrong, instead of in a store.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace boxoffice {

// True for well-formed UTF-8 (no overlong forms, no surrogates, nothing past U+10FFFF)
// without any NUL.
bool IsCleanText(std::string_view text);

// At most max_bytes of text as clean text: bytes that are not part of well-formed UTF-8, and
// NULs, become '?', and a character cut by the limit is dropped. For messages from outside
// (a gateway's error body) that go into a database column or a log.
std::string CleanTextPrefix(std::string_view text, size_t max_bytes);

// Appends text as a JSON string literal, quotes included, without building a JSON tree (the
// hot answers: holds and refusals). Bytes that are not well-formed UTF-8 become U+FFFD.
void AppendJsonString(std::string* out, std::string_view text);

// Text for an HTML page: &, <, >, " and ' as entities (for element text and quoted
// attribute values).
std::string HtmlEscape(std::string_view text);

// ASCII case-insensitive equality (HTTP header names and tokens).
bool EqualsNoCase(std::string_view a, std::string_view b);

// The one spelling of an id that comes from outside (API.md Conventions): a positive
// decimal with no sign, no leading zero and at most 19 digits that fits in 64 bits. Ids in
// paths, payment references and token subjects are read with it, so one id has one
// spelling ("07" and "7" never name the same booking); anything else is no id.
std::optional<int64_t> ParseDecimalId(std::string_view text);

// An e-mail address we send tickets to: local@domain in printable ASCII, at most 254 bytes
// (RFC 5321's path limit), a local part of 1–64 characters without spaces, quotes or the
// characters that delimit addresses in a header (<>()[],;:\"), a domain of dot-separated
// labels of letters, digits and hyphens. Nothing that could end a header or an SMTP command
// (no CR, LF or other control character) passes. International addresses (SMTPUTF8) are not
// accepted.
inline constexpr size_t kMaxEmailLength = 254;
bool IsValidEmail(std::string_view address);

}  // namespace boxoffice
