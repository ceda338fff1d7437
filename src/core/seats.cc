#include "core/seats.h"

#include <algorithm>

namespace boxoffice {

bool IsValidRowLabel(std::string_view row) {
  if (row.empty() || row.size() > kMaxRowLabelLength) return false;
  return std::all_of(row.begin(), row.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
}

std::optional<SeatCode> ParseSeatCode(std::string_view code) {
  if (code.empty() || code.size() > kMaxSeatCodeLength) return std::nullopt;
  size_t letters = 0;
  while (letters < code.size() && code[letters] >= 'A' && code[letters] <= 'Z') ++letters;
  if (letters == 0 || letters > kMaxRowLabelLength) return std::nullopt;
  const std::string_view digits = code.substr(letters);
  if (digits.empty() || digits.size() > 3 || digits[0] == '0') return std::nullopt;
  int number = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    number = number * 10 + (c - '0');
  }
  BOX_ASSERT(number >= 1 && number <= kMaxSeatNumber);  // 1-3 digits, no leading zero
  return SeatCode{std::string(code.substr(0, letters)), number};
}

bool RowLess(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

Result<std::vector<std::string>> ValidateHoldSeats(const std::vector<std::string>& seats) {
  if (seats.empty()) return Status(Code::kInvalid, "seats must list at least one seat");
  if (seats.size() > kMaxSeatsPerHold) {
    return Status(Code::kInvalid,
                  "at most " + std::to_string(kMaxSeatsPerHold) + " seats can be held at once");
  }
  for (const auto& s : seats) {
    if (!ParseSeatCode(s)) {
      // Only echo codes that are short and printable; anything else is described.
      const bool printable =
          s.size() <= kMaxSeatCodeLength &&
          std::all_of(s.begin(), s.end(), [](char c) { return c > 32 && c < 127; });
      return Status(Code::kInvalid, printable ? "malformed seat code \"" + s + "\""
                                              : std::string("malformed seat code"));
    }
  }
  std::vector<std::string> sorted = seats;
  std::sort(sorted.begin(), sorted.end());
  if (auto dup = std::adjacent_find(sorted.begin(), sorted.end()); dup != sorted.end()) {
    return Status(Code::kInvalid, "seat " + *dup + " is listed twice");
  }
  // What every store and the gate rely on: 1..8 distinct seats in lock order.
  BOX_ASSERT(!sorted.empty() && sorted.size() <= kMaxSeatsPerHold);
  return sorted;
}

std::string JoinSeats(const std::vector<std::string>& seats) {
  std::string out = "[";
  for (size_t i = 0; i < seats.size(); ++i) {
    if (i) out += ", ";
    out += seats[i];
  }
  return out + "]";
}

}  // namespace boxoffice
