// Seat codes and hold requests: the rules every layer agrees on.
//
// A seat code is a row of 1–3 upper-case letters and a number 1–999 without a leading
// zero ("F5", "AA12"), so that every seat has exactly one spelling and string equality is
// seat equality. A hold request asks for 1..kMaxSeatsPerHold distinct seats; validation
// returns them sorted, which is the lock order every store uses.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace boxoffice {

// A customer holds at most this many seats at once (API.md: all or nothing, up to 8).
inline constexpr size_t kMaxSeatsPerHold = 8;
// API.md's HOLD_LIMIT: seats of one showtime one customer may hold at once, across holds.
inline constexpr int64_t kMaxSeatsPerCustomer = 8;
// The longest seat code: 3 letters and 3 digits (the schema's VARCHAR(8) leaves room).
inline constexpr size_t kMaxSeatCodeLength = 8;
inline constexpr int kMaxSeatNumber = 999;
inline constexpr size_t kMaxRowLabelLength = 3;

struct SeatCode {
  std::string row;
  int number = 0;
};

bool IsValidRowLabel(std::string_view row);

// Parses "F5" into {"F", 5}; nullopt for anything that is not a canonical seat code.
std::optional<SeatCode> ParseSeatCode(std::string_view code);

// Orders rows as a hall does: A..Z, then AA..ZZ, then AAA..ZZZ.
bool RowLess(std::string_view a, std::string_view b);

// Validates the seats of a hold request and returns them sorted by code (byte order, the
// same order the databases use for the seat_code column). Errors are kInvalid with a
// message fit for the customer.
Result<std::vector<std::string>> ValidateHoldSeats(const std::vector<std::string>& seats);

// "[F6, F7]", the seeds' way of listing seats in a message.
std::string JoinSeats(const std::vector<std::string>& seats);

}  // namespace boxoffice
