#include "http/encoding.h"

#include <gtest/gtest.h>

#include <string>

namespace boxoffice::http {
namespace {

Encoding For(const std::string& accept) { return PreferredEncoding(&accept); }

TEST(Encoding, TheClientsWeightsChooseAmongBrAndGzip) {
  EXPECT_EQ(PreferredEncoding(nullptr), Encoding::kIdentity);
  EXPECT_EQ(For(""), Encoding::kIdentity);
  EXPECT_EQ(For("gzip, deflate, br, zstd"), Encoding::kBrotli);  // a browser's
  EXPECT_EQ(For("GZIP"), Encoding::kGzip);
  EXPECT_EQ(For("x-gzip"), Encoding::kGzip);
  EXPECT_EQ(For("gzip;q=1.0, br;q=0.999"), Encoding::kGzip);
  EXPECT_EQ(For("gzip;q=0.5, br;q=0.5"), Encoding::kBrotli);  // a tie: the smaller
  EXPECT_EQ(For("br;q=0.001"), Encoding::kBrotli);
  EXPECT_EQ(For("br;q=0, gzip;q=0.000"), Encoding::kIdentity);
  EXPECT_EQ(For("*;q=0.3, br;q=0"), Encoding::kGzip) << "* stands for the codings not named";
  EXPECT_EQ(For("*;q=0"), Encoding::kIdentity);
  EXPECT_EQ(For("identity"), Encoding::kIdentity);
  // Elements that do not parse are ignored, the rest still count.
  EXPECT_EQ(For("br;q=1.5, gzip"), Encoding::kGzip);
  EXPECT_EQ(For("br;q=, gzip;q=0.1234"), Encoding::kIdentity);
  EXPECT_EQ(For("br;level=3, gzip ; q=0.2"), Encoding::kGzip);
  EXPECT_EQ(For(",,, ;q=1, br"), Encoding::kBrotli);
}

TEST(Encoding, EachCodingRoundTripsAndRefusesWhatIsNotItsOwn) {
  std::string text;
  for (int i = 0; i < 300; ++i) text += R"({"code":"A)" + std::to_string(i) + R"(","status":"AVAILABLE"},)";
  for (Encoding e : {Encoding::kGzip, Encoding::kBrotli}) {
    auto coded = Compress(e, text);
    ASSERT_TRUE(coded.has_value());
    EXPECT_LT(coded->size(), text.size() / 8) << EncodingName(e);
    EXPECT_EQ(Decompress(e, *coded), text) << EncodingName(e);
    EXPECT_FALSE(Decompress(e, coded->substr(0, coded->size() / 2))) << "truncated";
    EXPECT_FALSE(Decompress(e, *coded + "x")) << "trailing bytes";
    EXPECT_FALSE(Decompress(e, text)) << "not coded";
    EXPECT_FALSE(Decompress(e, *coded, text.size() - 1)) << "past the bound";
    EXPECT_EQ(Decompress(e, *Compress(e, "")), "");
  }
  EXPECT_EQ(Decompress(Encoding::kGzip, *Compress(Encoding::kBrotli, text)), std::nullopt);
  // A bomb: 64 MiB of zeros in a few kilobytes is refused at the bound.
  const std::string zeros(size_t{64} << 20, '\0');
  for (Encoding e : {Encoding::kGzip, Encoding::kBrotli}) {
    auto bomb = Compress(e, zeros);
    ASSERT_TRUE(bomb.has_value());
    EXPECT_LT(bomb->size(), size_t{128} << 10);
    EXPECT_FALSE(Decompress(e, *bomb, size_t{1} << 20)) << EncodingName(e);
  }
}

}  // namespace
}  // namespace boxoffice::http
