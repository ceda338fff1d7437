// Fuzz target: the JWT verifier. Twice per input: the input as a whole token (nearly all
// refused before any signature work), and the input as the claims of a token signed with
// the right key, so the claims' parsing and the exp/nbf/sub rules are reached too. A token
// that verifies always names a positive customer.
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "core/crypto.h"
#include "core/jwt.h"

using namespace boxoffice;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string kSecret = "fuzz-secret-fuzz-secret-fuzz-secret-0";
  const Instant now = FromEpochMs(1'900'000'000'000);
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (auto who = VerifyJwt(text, kSecret, now); who.ok() && who->customer_id <= 0) std::abort();
  // Split: header JSON before the first newline, claims after it.
  const size_t nl = text.find('\n');
  const std::string header = nl == std::string::npos ? R"({"alg":"HS256"})" : text.substr(0, nl);
  const std::string claims = nl == std::string::npos ? text : text.substr(nl + 1);
  const std::string input = Base64UrlEncode(header) + "." + Base64UrlEncode(claims);
  const std::string token = input + "." + Base64UrlEncode(HmacSha256(kSecret, input));
  auto who = VerifyJwt(token, kSecret, now);
  if (who.ok() && who->customer_id <= 0) std::abort();
  // A header with a crit member never verifies (RFC 7515: we understand no extension).
  const auto parsed = nlohmann::json::parse(header, nullptr, false);
  if (who.ok() && parsed.is_object() && parsed.contains("crit")) std::abort();
  return 0;
}
