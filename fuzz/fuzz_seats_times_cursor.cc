// Fuzz target: the small parsers of identifiers and values, each with its round trip:
// seat codes and row labels, hold seat lists, RFC 3339 times (a parsed time formats and
// parses back to itself), durations, list cursors (a decoded cursor encodes back to one
// that decodes the same), and clean-text checks. The first byte picks the parser.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "api/json_io.h"
#include "core/seats.h"
#include "core/text.h"
#include "fuzz/fuzz_support.h"
#include "core/time_format.h"

using namespace boxoffice;

using boxoffice::fuzz::Require;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 6) {
    case 0:
      if (auto code = ParseSeatCode(text)) {
        Require(text.size() <= kMaxSeatCodeLength && IsValidRowLabel(code->row));
      }
      break;
    case 1: {
      std::vector<std::string> seats;
      size_t pos = 0;
      while (pos <= text.size() && seats.size() < 16) {
        const size_t comma = text.find(',', pos);
        seats.push_back(text.substr(pos, comma - pos));
        if (comma == std::string::npos) break;
        pos = comma + 1;
      }
      if (auto valid = ValidateHoldSeats(seats); valid.ok()) {
        Require(!valid->empty() && valid->size() <= kMaxSeatsPerHold);
        for (size_t i = 1; i < valid->size(); ++i) Require((*valid)[i - 1] < (*valid)[i]);
      }
      break;
    }
    case 2:
      if (auto t = ParseRfc3339(text)) {
        const std::string formatted = FormatRfc3339(*t);
        auto again = ParseRfc3339(formatted);
        Require(again && *again == *t);
      }
      break;
    case 3:
      if (auto d = ParseDuration(text)) Require(d->count() >= 0);
      break;
    case 4:
      if (auto cursor = api::DecodeCursor(text)) {
        Require(cursor->second > 0);
        auto again = api::DecodeCursor(api::EncodeCursor(cursor->first, cursor->second));
        Require(again && *again == *cursor);
      }
      break;
    case 5:
      (void)IsCleanText(text);
      break;
  }
  return 0;
}
