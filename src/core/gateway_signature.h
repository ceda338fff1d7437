// Signed payment-gateway callbacks (API.md "Payment gateway callback").
//
// Header `X-Gateway-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>." + raw body)>`.
// Verification compares in constant time and refuses a timestamp more than
// kSignatureTolerance away from now, so a captured callback cannot be replayed later.
#pragma once

#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/status.h"

namespace boxoffice {

inline constexpr Millis kSignatureTolerance{5 * 60'000};  // API.md: 5 minutes
inline constexpr size_t kMaxSignatureHeader = 1024;       // refused before parsing past this

// The header value for body signed at time t.
std::string SignGatewayPayload(std::string_view secret, Instant t, std::string_view body);

// OK, or kInvalid with a short reason (never echoing the header).
Status VerifyGatewaySignature(std::string_view header, std::string_view body,
                              std::string_view secret, Instant now);

}  // namespace boxoffice
