// Proves JWT verification is strict: HS256 only, signature checked in constant time, exp
// required with at most 30 s of leeway, sub a positive integer, scope admin recognised.
#include "core/jwt.h"

#include <gtest/gtest.h>

#include "core/crypto.h"

namespace boxoffice {
namespace {

const std::string kSecret = "test-secret-that-is-long-enough-000000";
const Instant kNow = FromEpochMs(1'800'000'000'000);

std::string Make(const std::string& header, const std::string& claims,
                 const std::string& secret = kSecret) {
  const std::string input = Base64UrlEncode(header) + "." + Base64UrlEncode(claims);
  return input + "." + Base64UrlEncode(HmacSha256(secret, input));
}

TEST(Jwt, SignedTokensVerify) {
  const std::string token = SignJwt(Principal{42, false}, kNow + Millis(60'000), kSecret);
  auto who = VerifyJwt(token, kSecret, kNow);
  ASSERT_TRUE(who.ok()) << who.status().message();
  EXPECT_EQ(who->customer_id, 42);
  EXPECT_FALSE(who->admin);
  auto admin =
      VerifyJwt(SignJwt(Principal{7, true}, kNow + Millis(60'000), kSecret), kSecret, kNow);
  ASSERT_TRUE(admin.ok());
  EXPECT_TRUE(admin->admin);
}

TEST(Jwt, AnEmailClaimIsKeptWhenWeCanSendToItAndIgnoredOtherwise) {
  const std::string hs = R"({"alg":"HS256","typ":"JWT"})";
  auto with = [&](const std::string& email) {
    return VerifyJwt(
        Make(hs, R"({"sub":"5","exp":1900000000,"scope":"door","email":)" + email + "}"), kSecret,
        kNow);
  };
  auto ok = with(R"("ana@example.com")");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->email, "ana@example.com");
  EXPECT_TRUE(ok->door);
  EXPECT_FALSE(ok->admin);
  // An address we cannot send to (international, quoted, not a string) leaves the customer
  // signed in, without an address: checkout then takes one from its body, or none.
  for (const char* odd :
       {R"("josé@example.com")", R"("\"a b\"@example.com")", "5", R"("a@b.c\r\nBcc: x@y.z")"}) {
    auto who = with(odd);  // (std::string from the literal)
    ASSERT_TRUE(who.ok()) << odd << ": " << who.status().message();
    EXPECT_EQ(who->email, "") << odd;
    EXPECT_EQ(who->customer_id, 5);
  }
}

TEST(Jwt, RejectsEverythingElse) {
  const std::string hs = R"({"alg":"HS256","typ":"JWT"})";
  const std::string exp_ok = std::to_string(ToEpochMs(kNow) / 1000 + 60);
  const std::string good_claims = R"({"sub":"42","exp":)" + exp_ok + "}";
  const std::string good = Make(hs, good_claims);
  struct Case {
    const char* name;
    std::string token;
  };
  const std::vector<Case> cases = {
      {"empty", ""},
      {"garbage", "abc"},
      {"two parts", Base64UrlEncode(hs) + "." + Base64UrlEncode(good_claims)},
      {"four parts", good + ".x"},
      {"alg none", Base64UrlEncode(R"({"alg":"none"})") + "." + Base64UrlEncode(good_claims) + "."},
      {"alg HS512", Make(R"({"alg":"HS512"})", good_claims)},
      {"alg RS256", Make(R"({"alg":"RS256"})", good_claims)},
      {"no alg", Make(R"({"typ":"JWT"})", good_claims)},
      {"wrong secret", Make(hs, good_claims, "another-secret-another-secret-0000")},
      {"tampered claims", Base64UrlEncode(hs) + "." +
                              Base64UrlEncode(R"({"sub":"43","exp":)" + exp_ok + "}") +
                              good.substr(good.rfind('.'))},
      {"no exp", Make(hs, R"({"sub":"42"})")},
      {"exp string", Make(hs, R"({"sub":"42","exp":")" + exp_ok + "\"}")},
      {"expired past leeway",
       Make(hs, R"({"sub":"42","exp":)" + std::to_string(ToEpochMs(kNow) / 1000 - 31) + "}")},
      {"no sub", Make(hs, R"({"exp":)" + exp_ok + "}")},
      {"numeric sub", Make(hs, R"({"sub":42,"exp":)" + exp_ok + "}")},
      {"zero sub", Make(hs, R"({"sub":"0","exp":)" + exp_ok + "}")},
      {"negative sub", Make(hs, R"({"sub":"-4","exp":)" + exp_ok + "}")},
      {"padded sub", Make(hs, R"({"sub":"042","exp":)" + exp_ok + "}")},
      {"overflowing sub", Make(hs, R"({"sub":"99999999999999999999","exp":)" + exp_ok + "}")},
      {"claims not object", Make(hs, "[1]")},
      {"too long", std::string(kMaxJwtLength + 1, 'a')},
      {"crit header", Make(R"({"alg":"HS256","crit":["exp"]})", good_claims)},
      {"empty crit header", Make(R"({"alg":"HS256","crit":[]})", good_claims)},
      {"nbf in the future past leeway",
       Make(hs, R"({"sub":"42","exp":)" + exp_ok + R"(,"nbf":)" +
                    std::to_string(ToEpochMs(kNow) / 1000 + 31) + "}")},
      {"nbf string", Make(hs, R"({"sub":"42","exp":)" + exp_ok + R"(,"nbf":"0"})")},
  };
  for (const Case& c : cases) {
    auto r = VerifyJwt(c.token, kSecret, kNow);
    EXPECT_FALSE(r.ok()) << c.name;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), Code::kInvalid) << c.name;
    }
  }
}

TEST(Jwt, LeewayIsThirtySeconds) {
  const std::string hs = R"({"alg":"HS256"})";
  const int64_t now_s = ToEpochMs(kNow) / 1000;
  EXPECT_TRUE(
      VerifyJwt(Make(hs, R"({"sub":"1","exp":)" + std::to_string(now_s - 29) + "}"), kSecret, kNow)
          .ok());
  EXPECT_FALSE(
      VerifyJwt(Make(hs, R"({"sub":"1","exp":)" + std::to_string(now_s - 30) + "}"), kSecret, kNow)
          .ok());
}

TEST(Jwt, NotBeforeHasTheSameLeeway) {
  const std::string hs = R"({"alg":"HS256"})";
  const int64_t now_s = ToEpochMs(kNow) / 1000;
  auto with_nbf = [&](int64_t nbf) {
    return Make(hs, R"({"sub":"1","exp":)" + std::to_string(now_s + 600) + R"(,"nbf":)" +
                        std::to_string(nbf) + "}");
  };
  EXPECT_TRUE(VerifyJwt(with_nbf(now_s - 100), kSecret, kNow).ok());
  EXPECT_TRUE(VerifyJwt(with_nbf(now_s + 29), kSecret, kNow).ok());
  EXPECT_FALSE(VerifyJwt(with_nbf(now_s + 31), kSecret, kNow).ok());
}

TEST(Jwt, ScopeMayBeAStringOrAnArray) {
  const std::string hs = R"({"alg":"HS256"})";
  const std::string exp = std::to_string(ToEpochMs(kNow) / 1000 + 60);
  EXPECT_TRUE(
      VerifyJwt(Make(hs, R"({"sub":"1","exp":)" + exp + R"(,"scope":"read admin"})"), kSecret, kNow)
          ->admin);
  EXPECT_TRUE(
      VerifyJwt(Make(hs, R"({"sub":"1","exp":)" + exp + R"(,"scope":["admin"]})"), kSecret, kNow)
          ->admin);
  EXPECT_FALSE(VerifyJwt(Make(hs, R"({"sub":"1","exp":)" + exp + R"(,"scope":"administrator"})"),
                         kSecret, kNow)
                   ->admin);
}

}  // namespace
}  // namespace boxoffice
