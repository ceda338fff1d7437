// The seat rules on hand-drawn halls: best available's ranking, the single-seat gap rule,
// alternatives. A row is drawn as "A ..x|..": its label, then a character per seat:
//   .  free           x  held           B  booked
//   a  free wheelchair place            p  free premium   P  premium taken
//   |  an aisle after the seat before it
#include "holds/seat_rules.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/seats.h"

namespace boxoffice {
namespace {

using Seats = std::vector<std::string>;

SeatMap Draw(const std::vector<std::string>& rows) {
  SeatMap map;
  map.showtime_id = 1;
  for (const auto& drawn : rows) {
    const auto space = drawn.find(' ');
    const std::string row = drawn.substr(0, space);
    int number = 0;
    for (char c : drawn.substr(space + 1)) {
      if (c == '|') {
        map.seats.back().aisle_after = true;
        continue;
      }
      SeatView s;
      s.row = row;
      s.number = ++number;
      s.code = row + std::to_string(number);
      s.category = (c == 'p' || c == 'P') ? "premium" : "standard";
      s.accessible = c == 'a';
      s.status = c == 'x' || c == 'P' ? SeatStatus::kHeld
                 : c == 'B'           ? SeatStatus::kBooked
                                      : SeatStatus::kAvailable;
      map.seats.push_back(s);
    }
  }
  return map;
}

// CheckPick on a drawn state: what the stores and the gate decide.
PickCheck Check(const SeatMap& map, const Seats& seats, const std::vector<SeatGuard>& guards) {
  auto free = [&](const std::string& code) {
    for (const auto& s : map.seats) {
      if (s.code == code) return s.status == SeatStatus::kAvailable;
    }
    return false;
  };
  return CheckPick(seats, guards, free);
}

std::vector<Seats> SeatsOf(const std::vector<SeatPick>& picks, size_t n) {
  std::vector<Seats> out;
  for (size_t i = 0; i < picks.size() && i < n; ++i) out.push_back(picks[i].seats);
  return out;
}

TEST(BestAvailable, MiddleRowFirstThenTheCentreThenLowerNumbers) {
  const SeatMap hall =
      Draw({"A ..........", "B ..........", "C ..........", "D ..........", "E .........."});
  HallLayout layout(hall, false);
  auto best = layout.BestBlocks(2, "standard");
  EXPECT_EQ(best.size(), 5u * 9u);
  EXPECT_EQ(SeatsOf(best, 4),
            (std::vector<Seats>{{"C5", "C6"}, {"C4", "C5"}, {"C6", "C7"}, {"C3", "C4"}}));
  // After row C's nine blocks: D (as near the middle as B, further back), then B.
  EXPECT_EQ(best[9].seats, (Seats{"D5", "D6"}));
  EXPECT_EQ(best[18].seats, (Seats{"B5", "B6"}));
  EXPECT_EQ(best.back().seats, (Seats{"A10", "A9"}));  // seats sorted by code
  EXPECT_TRUE(best.front().guards.empty());            // gaps allowed: no guards
}

TEST(BestAvailable, EvenRowCountsPreferTheBackOfTheTwoMiddleRows) {
  HallLayout layout(Draw({"A ....", "B ....", "C ....", "D ...."}), false);
  auto best = layout.BestBlocks(3, "standard");
  ASSERT_EQ(best.size(), 8u);
  EXPECT_EQ(SeatsOf(best, 4),
            (std::vector<Seats>{
                {"C1", "C2", "C3"}, {"C2", "C3", "C4"}, {"B1", "B2", "B3"}, {"B2", "B3", "B4"}}));
}

TEST(BestAvailable, NeverAcrossAnAisleNorOnAWheelchairPlaceNorAnotherCategory) {
  struct Case {
    std::string row;
    size_t count;
    std::string category;
    std::vector<Seats> blocks;  // all of them, best first
  };
  const std::vector<Case> cases = {
      {"A ...|...", 2, "standard", {{"A2", "A3"}, {"A4", "A5"}, {"A1", "A2"}, {"A5", "A6"}}},
      {"A ...|...", 4, "standard", {}},
      {"A a..|..a", 2, "standard", {{"A2", "A3"}, {"A4", "A5"}}},
      {"A ..pp..", 2, "premium", {{"A3", "A4"}}},
      {"A ..pp..", 2, "standard", {{"A1", "A2"}, {"A5", "A6"}}},
      {"A ..pp..", 3, "standard", {}},
      {"A ....", 1, "standard", {{"A2"}, {"A3"}, {"A1"}, {"A4"}}},
      {"A ....", 2, "balcony", {}},
  };
  for (const auto& c : cases) {
    HallLayout layout(Draw({c.row}), false);
    EXPECT_EQ(SeatsOf(layout.BestBlocks(c.count, c.category), 100), c.blocks)
        << c.row << " best " << c.count << " " << c.category;
  }
}

TEST(SingleSeatGaps, WhatAPickWouldStrand) {
  struct Case {
    std::string row;
    Seats pick;
    Seats taken;  // CheckPick's verdict
    Seats stranded;
  };
  const std::vector<Case> cases = {
      {"A ......", {"A1", "A2"}, {}, {}},
      {"A ......", {"A2"}, {}, {"A1"}},  // against the row's end
      {"A ......", {"A2", "A3"}, {}, {"A1"}},
      {"A ......", {"A5", "A6"}, {}, {}},
      {"A ......", {"A4", "A5"}, {}, {"A6"}},
      {"A x.....", {"A3"}, {}, {"A2"}},        // against a held seat
      {"A B.....", {"A3", "A4"}, {}, {"A2"}},  // against a booked seat
      {"A x.....", {"A4"}, {}, {}},            // leaves two on each side
      {"A ...|...", {"A2", "A3"}, {}, {"A1"}},
      {"A ...|...", {"A3"}, {}, {}},       // leaves two, then the aisle
      {"A ....|...", {"A3"}, {}, {"A4"}},  // against the aisle
      {"A ...|...", {"A4", "A5"}, {}, {"A6"}},
      {"A .....", {"A1", "A3"}, {}, {"A2"}},   // between two seats of the pick
      {"A x.x...", {"A4", "A5"}, {}, {"A6"}},  // A2 was alone before: not this pick's
      {"A x.x...", {"A4"}, {}, {}},
      {"A x.x...", {"A2"}, {}, {}},  // filling a gap is always fine
      {"A .x....", {"A1"}, {}, {}},
      {"A ......", {"A2", "A3", "A5"}, {}, {"A1", "A4", "A6"}},
      {"A ..x...", {"A2", "A3"}, {"A3"}, {}},  // taken comes first
      {"A ......", {"A3", "A4"}, {}, {}},
      {"A ...", {"A2"}, {}, {"A1", "A3"}},
      {"A .", {"A1"}, {}, {}},
      {"A ..", {"A1"}, {}, {"A2"}},
  };
  for (const auto& c : cases) {
    const SeatMap map = Draw({c.row});
    HallLayout layout(map, true);
    auto check = Check(map, c.pick, layout.GuardsFor(c.pick));
    EXPECT_EQ(check.taken, c.taken) << c.row << " pick " << JoinSeats(c.pick);
    Seats stranded = check.stranded;
    std::sort(stranded.begin(), stranded.end());
    EXPECT_EQ(stranded, c.stranded) << c.row << " pick " << JoinSeats(c.pick);
    EXPECT_TRUE(HallLayout(map, false).GuardsFor(c.pick).empty());  // allowed: no guards
  }
}

TEST(SingleSeatGaps, TheGuardsOfTwoRowsAreTheirOwn) {
  const SeatMap map = Draw({"A .....", "B ....."});
  HallLayout layout(map, true);
  auto guards = layout.GuardsFor({"A2", "B4"});
  EXPECT_EQ(guards, (std::vector<SeatGuard>{{"A1", ""}, {"A3", "A4"}, {"B3", "B2"}, {"B5", ""}}));
  EXPECT_EQ(Check(map, {"A2", "B4"}, guards).stranded, (Seats{"A1", "B5"}));
}

TEST(SingleSeatGaps, BestAvailableOffersOnlyBlocksThatStrandNoSeatOnTheStateItMeets) {
  const SeatMap map = Draw({"A x......"});  // A2..A7 free
  HallLayout layout(map, true);
  std::vector<Seats> winners;
  for (const auto& pick : layout.BestBlocks(2, "standard")) {
    if (Check(map, pick.seats, pick.guards).ok()) winners.push_back(pick.seats);
  }
  // A3A4 and A5A6 would strand A2 or A7; A4A5 leaves two on each side.
  EXPECT_EQ(winners, (std::vector<Seats>{{"A4", "A5"}, {"A2", "A3"}, {"A6", "A7"}}));
}

TEST(Alternatives, FreeBlocksOfTheSameSizeAndCategoryNearestFirst) {
  struct Case {
    std::vector<std::string> hall;
    Seats refused;
    bool forbid;
    std::vector<Seats> alternatives;
  };
  const std::vector<Case> cases = {
      // The same row first, the closest centre first.
      {{"A ........", "B xx.xx...", "C ........"},
       {"B4", "B5"},
       false,
       {{"B6", "B7"}, {"B7", "B8"}, {"A4", "A5"}}},
      // Nothing left in the row: the rows around it.
      {{"A ....", "B xx.x", "C ....."},
       {"B3", "B4"},
       false,
       {{"A3", "A4"}, {"C3", "C4"}, {"A2", "A3"}}},
      // The refused seats themselves are never offered, even when the map shows them free.
      {{"A ...."}, {"A2", "A3"}, false, {}},
      // Category of the first seat, wheelchair places left out.
      {{"A pp..a", "B pppp."}, {"A1", "A2"}, false, {{"B1", "B2"}, {"B2", "B3"}, {"B3", "B4"}}},
      // Gaps forbidden: blocks that would strand a seat on the map are not offered.
      // (A4A5 would strand A6; the refused A2A3 count as free, as the map shows them.)
      {{"A x.....x"}, {"A2", "A3"}, true, {{"A5", "A6"}}},
      {{"A ........"}, {"A4", "A5"}, false, {{"A2", "A3"}, {"A6", "A7"}, {"A1", "A2"}}},
      // Unknown seats: none.
      {{"A ...."}, {"Z1", "Z2"}, false, {}},
  };
  for (const auto& c : cases) {
    const SeatMap map = Draw(c.hall);
    HallLayout layout(map, c.forbid);
    EXPECT_EQ(layout.Alternatives(c.refused, map, 3), c.alternatives)
        << c.hall.front() << " refused " << JoinSeats(c.refused);
  }
}

}  // namespace
}  // namespace boxoffice
