// Proves the seat-code grammar of API.md and the hold-request rules: 1–8 distinct,
// well-formed codes, returned sorted (the lock order of every store).
#include "core/seats.h"

#include <gtest/gtest.h>

namespace boxoffice {
namespace {

TEST(SeatCode, Grammar) {
  struct Case {
    const char* code;
    bool valid;
    const char* row;
    int number;
  };
  const Case cases[] = {
      {"F5", true, "F", 5},  {"AA12", true, "AA", 12}, {"ZZZ999", true, "ZZZ", 999},
      {"A1", true, "A", 1},  {"", false, "", 0},       {"F", false, "", 0},
      {"5", false, "", 0},   {"f5", false, "", 0},     {"F0", false, "", 0},
      {"F05", false, "", 0}, {"F1000", false, "", 0},  {"AAAA1", false, "", 0},
      {"F5A", false, "", 0}, {"F-5", false, "", 0},    {" F5", false, "", 0},
      {"F5 ", false, "", 0}, {"É5", false, "", 0},     {"F+5", false, "", 0},
  };
  for (const Case& c : cases) {
    auto parsed = ParseSeatCode(c.code);
    EXPECT_EQ(parsed.has_value(), c.valid) << c.code;
    if (parsed && c.valid) {
      EXPECT_EQ(parsed->row, c.row);
      EXPECT_EQ(parsed->number, c.number);
    }
  }
}

TEST(SeatCode, RowOrderIsHallOrder) {
  EXPECT_TRUE(RowLess("A", "B"));
  EXPECT_TRUE(RowLess("Z", "AA"));
  EXPECT_TRUE(RowLess("AZ", "BA"));
  EXPECT_FALSE(RowLess("AA", "Z"));
}

TEST(HoldRequest, Validation) {
  struct Case {
    std::vector<std::string> seats;
    bool ok;
    std::string message_part;
  };
  const std::vector<Case> cases = {
      {{"F6", "F5"}, true, ""},
      {{"A1"}, true, ""},
      {{"A1", "A2", "A3", "A4", "A5", "A6", "A7", "A8"}, true, ""},
      {{}, false, "at least one"},
      {{"A1", "A2", "A3", "A4", "A5", "A6", "A7", "A8", "A9"}, false, "at most 8"},
      {{"F5", "F5"}, false, "twice"},
      {{"F5", "f6"}, false, "malformed seat code \"f6\""},
      {{"F5", std::string(100, 'X')}, false, "malformed seat code"},
  };
  for (const Case& c : cases) {
    auto r = ValidateHoldSeats(c.seats);
    EXPECT_EQ(r.ok(), c.ok);
    if (!c.ok) {
      EXPECT_EQ(r.status().code(), Code::kInvalid);
      EXPECT_NE(r.status().message().find(c.message_part), std::string::npos)
          << r.status().message();
    }
  }
  EXPECT_EQ(ValidateHoldSeats({"F6", "F10", "F5"}).value(),
            (std::vector<std::string>{"F10", "F5", "F6"}));
}

TEST(HoldRequest, JoinSeatsLikeTheSeeds) {
  EXPECT_EQ(JoinSeats({"F6", "F7"}), "[F6, F7]");
  EXPECT_EQ(JoinSeats({}), "[]");
}

}  // namespace
}  // namespace boxoffice
