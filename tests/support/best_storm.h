// A storm of "best N" holds and what it must leave behind, shared by the store's and the
// gate's suites: threads released at once, each asking with a new customer per attempt
// until it is refused, and the checks of the seat rules on the hall that is left.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/seats.h"
#include "holds/seat_rules.h"
#include "store/store.h"

namespace boxoffice::testing {

struct BestStorm {
  std::map<std::string, std::string> owner;    // seat → the hold that won it
  int double_held = 0;                         // seats two wins named
  int errors = 0;                              // answers other than a win or "no block"
  int refusals = 0;                            // "no block" (409 with no seats)
  int64_t last_win_asked = -1;                 // when the last win was asked (a sequence)
  int64_t first_refusal_answered = INT64_MAX;  // when the first refusal was answered
};

// `hold(customer)` asks best N for a new customer; every thread stops at its first refusal.
// Without releases a refusal means no block was left, so no win may have been asked after
// a refusal was answered (last_win_asked < first_refusal_answered).
inline BestStorm RunBestStorm(int threads, const std::function<Result<Hold>(int64_t)>& hold) {
  BestStorm out;
  std::atomic<int64_t> sequence{0};
  std::mutex mu;  // guards out
  std::barrier start(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int k = 0;; ++k) {
        const int64_t asked = sequence++;
        auto r = hold(100'000 + t * 1'000 + k);
        const int64_t answered = sequence++;
        std::lock_guard lock(mu);
        if (r.ok()) {
          out.last_win_asked = std::max(out.last_win_asked, asked);
          for (const auto& seat : r->seats) {
            if (!out.owner.emplace(seat, r->hold_id).second) ++out.double_held;
          }
          continue;
        }
        if (r.status().code() == Code::kConflict && r.status().seats().empty()) {
          ++out.refusals;
        } else {
          ++out.errors;
          std::fprintf(stderr, "unexpected: %s\n", r.status().message().c_str());
        }
        out.first_refusal_answered = std::min(out.first_refusal_answered, answered);
        return;
      }
    });
  }
  for (auto& t : pool) t.join();
  return out;
}

// The storm's outcome checked on the hall's final map: each held seat is the storm's win,
// no block of `count` the rules allow is left free, and, when gaps are forbidden, no free
// seat is alone in its section. Returns how many seats are free.
inline size_t ExpectBestStormLeftNoBlock(const BestStorm& storm, const SeatMap& map, bool forbid,
                                         size_t count) {
  EXPECT_EQ(storm.errors, 0);
  EXPECT_EQ(storm.double_held, 0);
  EXPECT_LT(storm.last_win_asked, storm.first_refusal_answered)
      << "a hold was won after a refusal said no block was free";
  std::set<std::string> free;
  for (const auto& s : map.seats) {
    if (s.status == SeatStatus::kAvailable) free.insert(s.code);
    EXPECT_EQ(s.status == SeatStatus::kHeld, storm.owner.count(s.code) == 1) << s.code;
  }
  EXPECT_EQ(storm.owner.size() + free.size(), map.seats.size());
  const HallLayout layout(map, forbid);
  auto is_free = [&](const std::string& code) { return free.count(code) == 1; };
  for (const auto& pick : layout.BestBlocks(count, map.seats.front().category)) {
    EXPECT_FALSE(CheckPick(pick.seats, pick.guards, is_free).ok())
        << JoinSeats(pick.seats) << " is still free";
  }
  if (forbid) {  // no free seat alone in its section
    const auto& seats = map.seats;
    for (size_t i = 0; i < seats.size(); ++i) {
      if (!is_free(seats[i].code)) continue;
      const bool left = i > 0 && seats[i - 1].row == seats[i].row && !seats[i - 1].aisle_after &&
                        is_free(seats[i - 1].code);
      const bool right = i + 1 < seats.size() && seats[i + 1].row == seats[i].row &&
                         !seats[i].aisle_after && is_free(seats[i + 1].code);
      const bool alone_section =
          !(i > 0 && seats[i - 1].row == seats[i].row && !seats[i - 1].aisle_after) &&
          !(i + 1 < seats.size() && seats[i + 1].row == seats[i].row && !seats[i].aisle_after);
      EXPECT_TRUE(left || right || alone_section) << seats[i].code << " is alone";
    }
  }
  return free.size();
}

}  // namespace boxoffice::testing
