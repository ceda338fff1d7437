// A race of holds and releases on a few seats, and the check that no seat ever has two live
// holds at once: shared by the store's race (store_contract_test.cc) and the gate's fault
// tests (seat_gate_test.cc), and proven there on CarelessSeats, a store that sells seats
// twice on purpose.
//
// The check. The race cannot see when the store makes a hold live or ends it, only when its
// calls are made and answered. What it knows for sure is that a hold is live from the moment
// the store answered the hold (it was granted before that) until the moment the release is
// asked (it cannot end before that): the hold's certain life. Each seat carries a mark, made
// and removed by the thread whose hold has the seat:
//   1. win:      the store answered the hold; the thread marks each seat (free → its mark);
//   2. release:  just before asking the store, it flags its marks "releasing";
//   3. released: once the store has answered the release, it clears them.
// A mark therefore covers the whole hold, from the win until the release returned, and an
// unflagged mark lies inside its hold's certain life. A winner (itself inside its certain
// life) that finds one of its seats marked by another holder reports a double sale when
//   * the mark is not flagged: the other hold's certain life is now too, so two holds of
//     the seat are live at this instant; or
//   * the mark is flagged and the store, asked now (`held`), still counts that hold as live:
//     again both are live at this instant.
// Neither can happen with a correct store. What a flagged mark alone cannot tell (the store
// may have freed the seat before answering the release and given it to this winner, which
// is correct) is never reported: the winner asks the store, then waits for the mark to go
// (at most kMarkWait; past it the seat is counted unchecked) and marks the seat itself. So
// a seat granted to a second hold while the first is live is caught when either winner
// marks it while the other has not yet asked to release, or has asked and the store has not
// yet done it; it slips through only when the release takes effect between the second
// grant and the second winner's question.
//
// Why not simpler: clearing the marks before asking for the release checks only the instant
// between the win and the release, and almost never sees a second winner; keeping plain
// marks until the release returned reports correct stores, which may grant the seat again
// before the first holder has heard its release answered.
//
// Ordering: the flag is stored (sequentially consistent) before the release is asked, and the
// store orders its release before any grant it makes of the freed seat (a lock, a transaction),
// which comes before the winner's mark; so a winner granted a freed seat sees the flag, or
// a later value of the mark. A holder's hold id is published (under a mutex) before it marks,
// with the mark's round, so a winner asks about the hold that made the mark and no other.
// Holds never expire during a race (the tests' clocks stand still), or `held` would lie.
#pragma once

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"
#include "store/store.h"

namespace boxoffice::testing {

// What the race asks of whatever holds seats: a store, or a HoldService in front of one.
struct SeatRaceOps {
  // A hold of these seats for the customer, all or nothing; the hold names its seats.
  std::function<Result<Hold>(int64_t customer, const std::vector<std::string>& seats)> hold;
  std::function<Status(const std::string& hold_id, int64_t customer)> release;
  // Whether the store counts the hold as live right now (a read that changes nothing).
  std::function<Result<bool>(const std::string& hold_id, int64_t customer)> held;
};

struct SeatRace {
  std::vector<std::string> seats;  // the seats raced for
  size_t most_per_hold = 1;        // each attempt asks for 1..most_per_hold of them, at random
  int threads = 8;
  int rounds = 0;              // attempts per thread; 0: until `meanwhile` has returned
  int64_t first_customer = 1;  // thread t is customer first_customer + t
  uint64_t seed = 1;
};

struct SeatRaceOutcome {
  int wins = 0;
  int conflicts = 0;
  int errors = 0;        // answers other than a hold or kConflict, failed releases and reads
  int double_sales = 0;  // seats found with two live holds
  int unchecked = 0;     // seats a releasing holder kept marked past kMarkWait: not checked
  std::vector<uint32_t> hold_us;  // every hold attempt's latency, in microseconds
};

// How long a winner waits for a releasing holder's mark to go. A release answers far sooner
// (the gate's fault tests' paused Redis costs its 100 ms timeout); past this the seat goes
// unchecked for that win, never reported.
constexpr std::chrono::seconds kMarkWait{10};

namespace race_internal {

constexpr uint64_t kReleasing = 1;
constexpr int kHolderBits = 16;  // holders are threads, 1..65535

// Each seat's mark: 0 when free, else (round << 17) | (holder << 1) | releasing.
class SeatMarks {
 public:
  SeatMarks(const std::vector<std::string>& seats, int holders)
      : published_(std::make_unique<Published[]>(static_cast<size_t>(holders) + 1)) {
    for (const auto& s : seats) cells_[s] = 0;
  }

  // Holder's next hold: published with its mark, which is returned.
  uint64_t Publish(int holder, uint64_t round, const std::string& hold_id, int64_t customer) {
    const uint64_t mark = (round << (kHolderBits + 1)) | (static_cast<uint64_t>(holder) << 1);
    Published& p = published_[static_cast<size_t>(holder)];
    std::lock_guard lock(p.mu);
    p.mark = mark;
    p.hold_id = hold_id;
    p.customer = customer;
    return mark;
  }

  enum class Claim { kMarked, kDoubleSale, kUnchecked, kError, kUnknownSeat };

  // Marks a seat of a granted hold (step 1), or says why not.
  Claim Mark(const std::string& seat, uint64_t mark, const SeatRaceOps& ops, std::string* why) {
    auto it = cells_.find(seat);
    if (it == cells_.end()) return Claim::kUnknownSeat;
    std::atomic<uint64_t>& cell = it->second;
    const auto deadline = std::chrono::steady_clock::now() + kMarkWait;
    uint64_t asked_about = 0;  // the flagged mark whose hold the store was last asked about
    for (int tries = 0;; ++tries) {
      uint64_t seen = 0;
      if (cell.compare_exchange_strong(seen, mark)) return Claim::kMarked;
      if (!(seen & kReleasing)) {
        std::string hold_id = "?";
        int64_t customer = 0;
        HoldOf(seen, &hold_id, &customer);
        *why = seat + " of hold " + hold_id + ", not yet asked to release";
        return Claim::kDoubleSale;
      }
      if (seen != asked_about) {
        asked_about = seen;
        std::string hold_id;
        int64_t customer = 0;
        if (HoldOf(seen, &hold_id, &customer)) {
          auto live = ops.held(hold_id, customer);
          if (!live.ok()) {
            *why = live.status().message();
            return Claim::kError;
          }
          if (live.value()) {
            *why = seat + " of hold " + hold_id + ", still live while its release is asked";
            return Claim::kDoubleSale;
          }
        }
      }
      if (std::chrono::steady_clock::now() > deadline) return Claim::kUnchecked;
      if (tries < 64) {
        std::this_thread::yield();
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(50));  // a release in flight
      }
    }
  }
  // Step 2, on the seats Mark marked.
  void Flag(const std::vector<std::string>& marked) {
    for (const auto& s : marked) cells_.find(s)->second.fetch_or(kReleasing);
  }
  // Step 3.
  void Clear(const std::vector<std::string>& marked) {
    for (const auto& s : marked) cells_.find(s)->second.store(0);
  }

 private:
  struct Published {
    std::mutex mu;
    uint64_t mark = 0;  // unflagged
    std::string hold_id;
    int64_t customer = 0;
  };

  // The hold that made `seen`, unless its holder has moved on to another since.
  bool HoldOf(uint64_t seen, std::string* hold_id, int64_t* customer) {
    const uint64_t holder = (seen >> 1) & ((uint64_t{1} << kHolderBits) - 1);
    Published& p = published_[holder];
    std::lock_guard lock(p.mu);
    if (p.mark != (seen & ~kReleasing)) return false;
    *hold_id = p.hold_id;
    *customer = p.customer;
    return true;
  }

  std::map<std::string, std::atomic<uint64_t>> cells_;  // keys fixed at construction
  std::unique_ptr<Published[]> published_;              // by holder
};

}  // namespace race_internal

// Runs the race: race.threads threads released together, each asking for random seats and
// releasing what it won, marking as above; with rounds == 0 until `meanwhile`, run on the
// calling thread once they are released, has returned. Prints the first few double sales.
inline SeatRaceOutcome RunSeatRace(const SeatRace& race, const SeatRaceOps& ops,
                                   const std::function<void()>& meanwhile = {}) {
  BOX_ASSERT(race.threads > 0 && race.threads < (1 << race_internal::kHolderBits));
  BOX_ASSERT(race.most_per_hold >= 1 && race.most_per_hold <= race.seats.size());
  BOX_ASSERT(race.rounds > 0 || meanwhile);
  race_internal::SeatMarks marks(race.seats, race.threads);
  std::atomic<int> wins{0}, conflicts{0}, errors{0}, double_sales{0}, unchecked{0};
  std::atomic<bool> stop{false};
  std::vector<std::vector<uint32_t>> hold_us(static_cast<size_t>(race.threads));
  std::barrier start(race.threads + 1);
  constexpr int kPrinted = 5;  // enough to debug, not a page per broken store
  auto report = [&](const char* what, const std::string& detail) {
    if (double_sales.load() + errors.load() <= kPrinted)
      std::fprintf(stderr, "%s: %s\n", what, detail.c_str());
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < race.threads; ++t) {
    threads.emplace_back([&, t] {
      const int holder = t + 1;
      const int64_t customer = race.first_customer + t;
      std::mt19937_64 rng(race.seed * 1'000'003 + static_cast<uint64_t>(t));
      start.arrive_and_wait();
      for (uint64_t round = 1;
           race.rounds > 0 ? round <= static_cast<uint64_t>(race.rounds) : !stop.load(); ++round) {
        std::vector<std::string> pick = race.seats;
        std::shuffle(pick.begin(), pick.end(), rng);
        pick.resize(1 + rng() % race.most_per_hold);
        const auto t0 = std::chrono::steady_clock::now();
        auto r = ops.hold(customer, pick);
        const auto took = std::chrono::steady_clock::now() - t0;
        hold_us[static_cast<size_t>(t)].push_back(static_cast<uint32_t>(
            std::chrono::duration_cast<std::chrono::microseconds>(took).count()));
        if (!r.ok()) {
          if (r.status().code() == Code::kConflict) {
            ++conflicts;
          } else {
            ++errors;
            report("unexpected", r.status().message());
          }
          continue;
        }
        ++wins;
        const uint64_t mark = marks.Publish(holder, round, r->hold_id, customer);
        std::vector<std::string> marked;
        for (const auto& seat : r->seats) {
          std::string why;
          switch (marks.Mark(seat, mark, ops, &why)) {
            case race_internal::SeatMarks::Claim::kMarked:
              marked.push_back(seat);
              break;
            case race_internal::SeatMarks::Claim::kDoubleSale:
              ++double_sales;
              report("double sale", "hold " + r->hold_id + " was granted " + why);
              break;
            case race_internal::SeatMarks::Claim::kUnchecked:
              ++unchecked;
              break;
            case race_internal::SeatMarks::Claim::kError:
              ++errors;
              report("held", why);
              break;
            case race_internal::SeatMarks::Claim::kUnknownSeat:
              ++errors;
              report("unknown seat", seat + " in hold " + r->hold_id);
              break;
          }
        }
        marks.Flag(marked);
        Status released = ops.release(r->hold_id, customer);
        if (!released.ok()) {
          ++errors;
          report("release", released.message());
        }
        marks.Clear(marked);
      }
    });
  }
  start.arrive_and_wait();
  if (meanwhile) meanwhile();
  stop = true;
  for (auto& t : threads) t.join();
  SeatRaceOutcome out;
  out.wins = wins.load();
  out.conflicts = conflicts.load();
  out.errors = errors.load();
  out.double_sales = double_sales.load();
  out.unchecked = unchecked.load();
  for (auto& v : hold_us) out.hold_us.insert(out.hold_us.end(), v.begin(), v.end());
  return out;
}

// An in-memory seat store to prove the check with. Careful (one_in == 0), it refuses a seat
// a live hold has, as every store must; careless, it grants every one_in-th attempt it would
// have refused anyway, selling the seats twice. Each call takes `latency` on the way in and
// again on the way back, as a database's does, so that holds overlap even on one core.
class CarelessSeats {
 public:
  CarelessSeats(int one_in, std::chrono::microseconds latency)
      : one_in_(one_in), latency_(latency) {}

  SeatRaceOps Ops() {
    SeatRaceOps ops;
    ops.hold = [this](int64_t customer, const std::vector<std::string>& seats) {
      return Grant(customer, seats);
    };
    ops.release = [this](const std::string& hold_id, int64_t) { return Free(hold_id); };
    ops.held = [this](const std::string& hold_id, int64_t) -> Result<bool> {
      std::lock_guard lock(mu_);
      return live_.count(hold_id) > 0;
    };
    return ops;
  }
  // Grants made over a live hold.
  int sold_twice() {
    std::lock_guard lock(mu_);
    return sold_twice_;
  }

 private:
  Result<Hold> Grant(int64_t customer, const std::vector<std::string>& seats) {
    std::this_thread::sleep_for(latency_);
    Hold granted;
    {
      std::lock_guard lock(mu_);
      std::vector<std::string> taken;
      for (const auto& s : seats) {
        if (holder_.count(s)) taken.push_back(s);
      }
      if (!taken.empty()) {
        if (one_in_ == 0 || ++refused_ % one_in_ != 0)
          return Status(Code::kConflict, "taken", std::move(taken));
        ++sold_twice_;
      }
      granted.hold_id = "hold-" + std::to_string(++last_id_);
      granted.customer_id = customer;
      granted.seats = seats;
      live_[granted.hold_id] = seats;
      for (const auto& s : seats) holder_[s] = granted.hold_id;
    }
    std::this_thread::sleep_for(latency_);
    return granted;
  }

  Status Free(const std::string& hold_id) {
    std::this_thread::sleep_for(latency_);
    {
      std::lock_guard lock(mu_);
      if (auto it = live_.find(hold_id); it != live_.end()) {
        for (const auto& s : it->second) {
          auto seat = holder_.find(s);
          if (seat != holder_.end() && seat->second == hold_id) holder_.erase(seat);
        }
        live_.erase(it);
      }
    }
    std::this_thread::sleep_for(latency_);
    return Status::Ok();
  }

  const int one_in_;
  const std::chrono::microseconds latency_;
  std::mutex mu_;
  int refused_ = 0;
  int sold_twice_ = 0;
  uint64_t last_id_ = 0;
  std::map<std::string, std::string> holder_;             // seat → the hold granted it last
  std::map<std::string, std::vector<std::string>> live_;  // hold id → its seats
};

}  // namespace boxoffice::testing
