#include "core/time_format.h"

#include <cstdio>

#include "core/status.h"

namespace boxoffice {
namespace {

bool ReadDigits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

}  // namespace

std::string FormatRfc3339(Instant t) {
  using namespace std::chrono;
  const auto day = floor<days>(t);
  const year_month_day ymd{day};
  const hh_mm_ss<Millis> tod{t - day};
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ",
                static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                static_cast<unsigned>(ymd.day()), static_cast<int>(tod.hours().count()),
                static_cast<int>(tod.minutes().count()), static_cast<int>(tod.seconds().count()),
                static_cast<int>(tod.subseconds().count()));
  return buf;
}

std::optional<Instant> ParseRfc3339(std::string_view s) {
  using namespace std::chrono;
  int y, mo, d, h, mi, sec;
  if (!ReadDigits(s, 0, 4, &y) || s.size() < 20 || s[4] != '-' || !ReadDigits(s, 5, 2, &mo) ||
      s[7] != '-' || !ReadDigits(s, 8, 2, &d) || (s[10] != 'T' && s[10] != 't') ||
      !ReadDigits(s, 11, 2, &h) || s[13] != ':' || !ReadDigits(s, 14, 2, &mi) || s[16] != ':' ||
      !ReadDigits(s, 17, 2, &sec)) {
    return std::nullopt;
  }
  const year_month_day ymd{year{y}, month{static_cast<unsigned>(mo)},
                           day{static_cast<unsigned>(d)}};
  if (!ymd.ok() || h > 23 || mi > 59 || sec > 59) return std::nullopt;
  size_t pos = 19;
  int ms = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int digits = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (digits < 3) ms = ms * 10 + (s[pos] - '0');
      ++digits;
      ++pos;
    }
    if (digits == 0 || digits > 9) return std::nullopt;
    for (int i = digits; i < 3; ++i) ms *= 10;
  }
  BOX_ASSERT(ms >= 0 && ms <= 999);  // at most three digits were kept
  int offset_min = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om;
    if (!ReadDigits(s, pos + 1, 2, &oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !ReadDigits(s, pos + 4, 2, &om) || oh > 23 || om > 59) {
      return std::nullopt;
    }
    offset_min = (oh * 60 + om) * (s[pos] == '+' ? 1 : -1);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  const auto t =
      sys_days{ymd} + hours{h} + minutes{mi} + seconds{sec} + Millis{ms} - minutes{offset_min};
  return time_point_cast<Millis>(t);
}

std::optional<Millis> ParseDuration(std::string_view s) {
  if (s.empty()) return std::nullopt;
  int64_t total = 0;
  size_t pos = 0;
  while (pos < s.size()) {
    int64_t n = 0;
    size_t start = pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      n = n * 10 + (s[pos] - '0');
      if (n > 1'000'000'000) return std::nullopt;
      ++pos;
    }
    if (pos == start) return std::nullopt;
    int64_t unit_ms;
    if (s.substr(pos, 2) == "ms") {
      unit_ms = 1;
      pos += 2;
    } else if (pos < s.size() && s[pos] == 's') {
      unit_ms = 1000;
      ++pos;
    } else if (pos < s.size() && s[pos] == 'm') {
      unit_ms = 60'000;
      ++pos;
    } else if (pos < s.size() && s[pos] == 'h') {
      unit_ms = 3'600'000;
      ++pos;
    } else {
      return std::nullopt;
    }
    total += n * unit_ms;
  }
  return Millis(total);
}

}  // namespace boxoffice
