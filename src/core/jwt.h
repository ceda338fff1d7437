// JWT (RFC 7519) signing and verification, HS256 only.
//
// Verification is strict on purpose: the header must say alg HS256 (so "none" and every
// other algorithm fail before any signature work), the signature is compared in constant
// time, exp is required and enforced with at most kJwtLeeway of clock skew (nbf, when
// present, likewise), a `crit` header is refused (we implement no extension), and sub must
// be the decimal string of a positive 64-bit integer: the customer id.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/status.h"

namespace boxoffice {

inline constexpr Millis kJwtLeeway{30'000};  // API.md: at most 30 s of skew
// A token longer than this is refused before parsing (tokens we issue are ~200 bytes).
inline constexpr size_t kMaxJwtLength = 4096;

struct Principal {
  int64_t customer_id = 0;
  bool admin = false;
  bool door = false;       // scope "door" (or "admin", which implies it): may check tickets in
  std::string email = {};  // the `email` claim, when the token carries a valid one (IsValidEmail)
};

// Errors are kInvalid with a short reason (never echoing the token). An `email` claim that
// is not an address we can send to (IsValidEmail) is left out of the Principal.
Result<Principal> VerifyJwt(std::string_view token, std::string_view secret, Instant now);

std::string SignJwt(const Principal& who, Instant expires_at, std::string_view secret);

}  // namespace boxoffice
