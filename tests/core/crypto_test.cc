// Proves the crypto helpers against published vectors (RFC 4231, RFC 4648).
#include "core/crypto.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

namespace boxoffice {
namespace {

TEST(Crypto, HmacSha256MatchesRfc4231Case2) {
  EXPECT_EQ(HexEncode(HmacSha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(Crypto, Base64UrlRoundTripsAndRejectsNonCanonical) {
  struct Case {
    std::string raw, encoded;
  };
  for (const Case& c : std::vector<Case>{{"", ""},
                                         {"f", "Zg"},
                                         {"fo", "Zm8"},
                                         {"foo", "Zm9v"},
                                         {"foob", "Zm9vYg"},
                                         {"\xfb\xff", "-_8"}}) {
    EXPECT_EQ(Base64UrlEncode(c.raw), c.encoded);
    EXPECT_EQ(Base64UrlDecode(c.encoded), c.raw);
  }
  EXPECT_FALSE(Base64UrlDecode("Zm9v="));  // padding
  EXPECT_FALSE(Base64UrlDecode("Zh"));     // non-zero leftover bits
  EXPECT_FALSE(Base64UrlDecode("a"));      // impossible length
  EXPECT_FALSE(Base64UrlDecode("Zm+v"));   // not the url alphabet
}

TEST(Crypto, ConstantTimeEquals) {
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "ab"));
}

TEST(Crypto, UuidsAreVersion4AndDistinct) {
  const std::string a = NewUuid(), b = NewUuid();
  EXPECT_TRUE(IsUuid(a));
  EXPECT_NE(a, b);
  EXPECT_EQ(a[14], '4');
  EXPECT_FALSE(IsUuid("not-a-uuid"));
  EXPECT_FALSE(IsUuid("123E4567-E89B-12D3-A456-426614174000"));  // we only emit lower case
}

// Request ids: the same form, distinct across threads (each seeds its own generator).
TEST(Crypto, FastUuidsAreVersion4AndDistinctAcrossThreads) {
  std::vector<std::vector<std::string>> made(4);
  std::vector<std::thread> threads;
  for (auto& ids : made) {
    threads.emplace_back([&ids] {
      for (int i = 0; i < 10'000; ++i) ids.push_back(NewFastUuid());
    });
  }
  for (auto& t : threads) t.join();
  std::set<std::string> all;
  for (const auto& ids : made) {
    for (const auto& id : ids) {
      ASSERT_TRUE(IsUuid(id)) << id;
      ASSERT_EQ(id[14], '4');
      ASSERT_TRUE(id[19] == '8' || id[19] == '9' || id[19] == 'a' || id[19] == 'b') << id;
      all.insert(id);
    }
  }
  EXPECT_EQ(all.size(), 40'000u);
}

}  // namespace
}  // namespace boxoffice
