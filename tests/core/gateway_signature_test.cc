// Proves callback signatures: right secret and body within 5 minutes pass; anything else
// (missing, malformed, wrong secret, tampered body, stale or future timestamp) fails.
#include "core/gateway_signature.h"

#include <gtest/gtest.h>

#include "core/crypto.h"

namespace boxoffice {
namespace {

const Instant kSignedAt = FromEpochMs(1'800'000'000'000);
const std::string kBody = R"({"paymentId":"pay_1","status":"SUCCEEDED"})";

TEST(GatewaySignature, AcceptsWhatTheGatewaySigns) {
  EXPECT_TRUE(
      VerifyGatewaySignature(SignGatewayPayload("s3cret", kSignedAt, kBody), kBody, "s3cret", kSignedAt)
          .ok());
  EXPECT_TRUE(VerifyGatewaySignature(SignGatewayPayload("s3cret", kSignedAt - Millis(299'000), kBody),
                                     kBody, "s3cret", kSignedAt)
                  .ok());
}

// The 5 minutes are exact to the millisecond, whatever fraction of a second now is.
TEST(GatewaySignature, TheToleranceIsExact) {
  const Instant now = kSignedAt + Millis(999);  // kSignedAt is on a whole second
  const int64_t now_s = ToEpochMs(kSignedAt) / 1000;
  auto header = [&](int64_t t) {
    const std::string message = std::to_string(t) + "." + kBody;
    return "t=" + std::to_string(t) + ",v1=" + HexEncode(HmacSha256("s3cret", message));
  };
  EXPECT_FALSE(VerifyGatewaySignature(header(now_s - 300), kBody, "s3cret", now).ok())
      << "300.999 s old";
  EXPECT_TRUE(VerifyGatewaySignature(header(now_s - 299), kBody, "s3cret", now).ok());
  EXPECT_TRUE(VerifyGatewaySignature(header(now_s + 300), kBody, "s3cret", now).ok());
  EXPECT_FALSE(VerifyGatewaySignature(header(now_s + 301), kBody, "s3cret", now).ok());
}

TEST(GatewaySignature, RefusesEverythingElse) {
  const std::string good = SignGatewayPayload("s3cret", kSignedAt, kBody);
  const std::string v1 = good.substr(good.find("v1="));
  struct Case {
    const char* name;
    std::string header;
    std::string body;
  };
  const std::vector<Case> cases = {
      {"missing", "", kBody},
      {"no v1", "t=" + std::to_string(ToEpochMs(kSignedAt) / 1000), kBody},
      {"no t", v1, kBody},
      {"bad t", "t=abc," + v1, kBody},
      {"wrong secret", SignGatewayPayload("other", kSignedAt, kBody), kBody},
      {"tampered body", good, R"({"paymentId":"pay_2","status":"SUCCEEDED"})"},
      {"an hour old", SignGatewayPayload("s3cret", kSignedAt - Millis(3'600'000), kBody), kBody},
      {"from the future", SignGatewayPayload("s3cret", kSignedAt + Millis(301'000), kBody), kBody},
      {"other t with same mac", "t=" + std::to_string(ToEpochMs(kSignedAt) / 1000 - 1) + "," + v1,
       kBody},
      {"too long", good + std::string(2000, ' '), kBody},
      // Found by fuzz_gateway_signature: t × 1000 overflowed (undefined behaviour, which
      // UBSan reports in make test-asan); such a t is simply far from now.
      {"t past int64 milliseconds", "t=19000000000000000," + v1, kBody},
      {"t most negative", "t=-9223372036854775808," + v1, kBody},
  };
  for (const Case& c : cases)
    EXPECT_FALSE(VerifyGatewaySignature(c.header, c.body, "s3cret", kSignedAt).ok()) << c.name;
}

}  // namespace
}  // namespace boxoffice
