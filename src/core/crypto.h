// Small cryptographic helpers over OpenSSL: HMAC-SHA256, constant-time compare,
// base64url, random UUIDs. Pure functions, thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace boxoffice {

// Raw 32-byte HMAC-SHA256 of message under key.
std::string HmacSha256(std::string_view key, std::string_view message);
std::string HexEncode(std::string_view bytes);
// True when a and b are equal, in time that depends only on their lengths.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

std::string Base64UrlEncode(std::string_view bytes);                // no padding
std::optional<std::string> Base64UrlDecode(std::string_view text);  // padding not accepted

// A random (version 4) UUID in lower-case canonical form, from the CSPRNG: for ids that
// must not be guessed (holds, payments, events).
std::string NewUuid();
// The same form from a per-thread generator seeded once from the CSPRNG: unique, not
// secret, and an order of magnitude cheaper; for request ids, made for every request.
std::string NewFastUuid();
bool IsUuid(std::string_view text);

}  // namespace boxoffice
