// Proves the API's time format (RFC 3339, UTC, milliseconds) and the duration flags.
#include "core/time_format.h"

#include <gtest/gtest.h>

namespace boxoffice {
namespace {

TEST(TimeFormat, FormatsUtcWithMilliseconds) {
  EXPECT_EQ(FormatRfc3339(FromEpochMs(0)), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatRfc3339(FromEpochMs(1'796'152'200'123)), "2026-12-01T19:10:00.123Z");
}

TEST(TimeFormat, ParsesWhatItFormatsAndOffsets) {
  struct Case {
    const char* text;
    std::optional<int64_t> ms;
  };
  const Case cases[] = {
      {"2026-12-01T19:10:00.123Z", 1'796'152'200'123},
      {"2026-12-01T19:10:00Z", 1'796'152'200'000},
      {"2026-12-01T20:10:00.123+01:00", 1'796'152'200'123},
      {"2026-12-01T19:10:00.1239999Z", 1'796'152'200'123},
      {"2026-02-30T00:00:00Z", std::nullopt},
      {"2026-12-01 19:10:00Z", std::nullopt},
      {"2026-12-01T19:10:00", std::nullopt},
      {"2026-12-01T24:00:00Z", std::nullopt},
      {"2026-12-01T19:10:00.Z", std::nullopt},
      {"tomorrow", std::nullopt},
  };
  for (const Case& c : cases) {
    auto t = ParseRfc3339(c.text);
    EXPECT_EQ(t.has_value(), c.ms.has_value()) << c.text;
    if (t && c.ms) {
      EXPECT_EQ(ToEpochMs(*t), *c.ms) << c.text;
    }
  }
}

TEST(TimeFormat, Durations) {
  EXPECT_EQ(ParseDuration("500ms"), Millis(500));
  EXPECT_EQ(ParseDuration("15s"), Millis(15'000));
  EXPECT_EQ(ParseDuration("10m"), Millis(600'000));
  EXPECT_EQ(ParseDuration("1h"), Millis(3'600'000));
  EXPECT_EQ(ParseDuration("1h30m"), Millis(5'400'000));
  EXPECT_FALSE(ParseDuration(""));
  EXPECT_FALSE(ParseDuration("10"));
  EXPECT_FALSE(ParseDuration("m"));
  EXPECT_FALSE(ParseDuration("10x"));
  EXPECT_FALSE(ParseDuration("-5s"));
}

}  // namespace
}  // namespace boxoffice
