// Fuzz target: the gateway's X-Gateway-Signature header. The input is a header and a body
// (split at the first newline): verified as given, which must never crash, and then the
// body signed properly, which must always verify, while any other body must not.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/gateway_signature.h"

using namespace boxoffice;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string kSecret = "fuzz-gateway-secret-0123";
  const Instant now = FromEpochMs(1'900'000'000'000);
  const std::string text(reinterpret_cast<const char*>(data), size);
  const size_t nl = text.find('\n');
  const std::string header = text.substr(0, nl);
  const std::string body = nl == std::string::npos ? "" : text.substr(nl + 1);
  (void)VerifyGatewaySignature(header, body, kSecret, now);
  const std::string good = SignGatewayPayload(kSecret, now, body);
  if (!VerifyGatewaySignature(good, body, kSecret, now).ok()) std::abort();
  if (VerifyGatewaySignature(good, body + "x", kSecret, now).ok()) std::abort();
  return 0;
}
