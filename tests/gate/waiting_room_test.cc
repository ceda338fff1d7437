// The waiting room's contract, run against both implementations (in process, and Redis
// with a redis-server of the test's own), on a clock the test moves: first come first
// served, at most activeLimit admitted, admissions end at their expiry or when the
// customer leaves (a confirmed booking) and the next in line comes in, and no slot leaks.
#include "gate/waiting_room.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <barrier>
#include <random>
#include <set>
#include <thread>

#include "support/backends.h"
#include "support/redis_server.h"
#include "support/test_env.h"

namespace boxoffice {
namespace {

using testing::Backend;

const Instant kT0 = FromEpochMs(1'900'000'000'000);

class WaitingRoomContract : public testing::BackendContract {
 protected:
  void SetUp() override {
    BackendContract::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (redis()) {
      room_ = std::make_unique<RedisWaitingRoom>(client_.get());
    } else {
      room_ = std::make_unique<InProcessWaitingRoom>();
    }
  }
  QueuePlace Join(int64_t customer, Instant now = kT0) {
    auto p = room_->Join(kShowtime, customer, config_, now);
    EXPECT_TRUE(p.ok()) << p.status().message();
    return p.ok() ? p.value() : QueuePlace{};
  }
  bool Admitted(int64_t customer, Instant now) {
    auto a = room_->Admitted(kShowtime, customer, now);
    EXPECT_TRUE(a.ok());
    return a.ok() && a.value();
  }
  RoomSizes Sizes(Instant now) {
    auto s = room_->Advance(kShowtime, config_, now);
    EXPECT_TRUE(s.ok());
    return s.ok() ? s.value() : RoomSizes{};
  }

  static constexpr int64_t kShowtime = 42;
  WaitingRoomConfig config_{true, 10, Millis(60'000)};
  std::unique_ptr<WaitingRoom> room_;
};

TEST_P(WaitingRoomContract, AThousandJoinersAreServedInArrivalOrder) {
  for (int64_t c = 1; c <= 1000; ++c) {
    QueuePlace p = Join(c);
    if (c <= 10) {
      EXPECT_TRUE(p.admitted) << c;
      EXPECT_EQ(p.admitted_until, kT0 + config_.admission_ttl);
    } else {
      EXPECT_FALSE(p.admitted);
      EXPECT_EQ(p.position, c - 10) << c;
    }
  }
  // Joining again keeps one's place.
  EXPECT_EQ(Join(500).position, 490);
  EXPECT_TRUE(Join(3).admitted);
  // As admissions end, the line moves in order: ten at a time, each at its expiry.
  Instant now = kT0;
  for (int round = 1; round < 100; ++round) {
    now += config_.admission_ttl;
    EXPECT_EQ(Sizes(now).admitted, 10);
    for (int64_t c = round * 10 + 1; c <= round * 10 + 10; ++c) {
      ASSERT_TRUE(Admitted(c, now)) << "round " << round << " customer " << c;
    }
    EXPECT_FALSE(Admitted(round * 10, now)) << "the previous round's admission ended";
    EXPECT_FALSE(Admitted(round * 10 + 11, now));
  }
}

TEST_P(WaitingRoomContract, ConcurrentJoinersGetDistinctPlaces) {
  constexpr int kThreads = 8, kEach = 125;
  std::barrier start(kThreads);
  std::vector<std::vector<int64_t>> positions(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int i = 0; i < kEach; ++i) {
        auto p = room_->Join(kShowtime, 1 + t * kEach + i, config_, kT0);
        positions[t].push_back(p.ok() ? (p->admitted ? 0 : p->position) : -1);
      }
    });
  }
  for (auto& t : threads) t.join();
  std::multiset<int64_t> all;
  for (const auto& v : positions) {
    // Each thread's joins come one after another: their places only grow.
    EXPECT_TRUE(std::is_sorted(v.begin(), v.end()));
    all.insert(v.begin(), v.end());
  }
  EXPECT_EQ(all.count(0), 10u);
  EXPECT_EQ(all.count(-1), 0u);
  for (int64_t p = 1; p <= 990; ++p) EXPECT_EQ(all.count(p), 1u) << p;
}

TEST_P(WaitingRoomContract, LeavingAdmitsTheNextInLineAtOnce) {
  config_.active_limit = 2;
  for (int64_t c = 1; c <= 4; ++c) Join(c);
  EXPECT_TRUE(Admitted(2, kT0));
  EXPECT_FALSE(Admitted(3, kT0));
  ASSERT_TRUE(room_->Leave(kShowtime, 2, config_, kT0 + Millis(5)).ok());
  EXPECT_FALSE(Admitted(2, kT0 + Millis(5)));
  EXPECT_TRUE(Admitted(3, kT0 + Millis(5)));
  auto three = room_->Find(kShowtime, 3, config_, kT0 + Millis(5));
  ASSERT_TRUE(three.ok());
  EXPECT_TRUE(three->admitted);
  EXPECT_EQ(three->admitted_until, kT0 + Millis(5) + config_.admission_ttl);
  EXPECT_EQ(room_->Find(kShowtime, 4, config_, kT0)->position, 1);
  EXPECT_EQ(room_->Find(kShowtime, 2, config_, kT0).status().code(), Code::kNotFound);
  EXPECT_EQ(room_->Find(kShowtime, 99, config_, kT0).status().code(), Code::kNotFound);
  // Leaving while queued gives the place up; those behind move up.
  Join(5);
  ASSERT_TRUE(room_->Leave(kShowtime, 4, config_, kT0 + Millis(6)).ok());
  EXPECT_EQ(room_->Find(kShowtime, 5, config_, kT0 + Millis(6))->position, 1);
  // Rooms of other showtimes are apart.
  EXPECT_TRUE(room_->Join(kShowtime + 1, 5, config_, kT0)->admitted);
}

TEST_P(WaitingRoomContract, ARaisedLimitAdmitsMoreAtOnce) {
  config_.active_limit = 1;
  for (int64_t c = 1; c <= 5; ++c) Join(c);
  EXPECT_EQ(Sizes(kT0).admitted, 1);
  config_.active_limit = 4;
  RoomSizes s = Sizes(kT0);
  EXPECT_EQ(s.admitted, 4);
  EXPECT_EQ(s.queued, 1);
}

// Joins, walk-aways (who never come back: their admission must end by itself), bookings
// (leave) and time, at random; after every step the room must be exactly what a model of
// it says, and once the clock passes every admission, nothing is left inside.
TEST_P(WaitingRoomContract, NoSlotLeaksInARandomizedRun) {
  config_.active_limit = 5;
  std::mt19937_64 rng(20261201);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  Instant now = kT0;
  std::set<int64_t> ever;
  int64_t next_customer = 1;
  int joins = 0, leaves = 0, ticks = 0;
  for (int step = 0; step < 600; ++step) {
    const int action = pick(10);
    if (action < 5) {
      const int64_t c = next_customer++;
      ever.insert(c);
      Join(c, now);
      ++joins;
    } else if (action < 7 && !ever.empty()) {
      const int64_t c = 1 + pick(static_cast<int>(next_customer - 1));
      ASSERT_TRUE(room_->Leave(kShowtime, c, config_, now).ok());
      ++leaves;
    } else {
      now += Millis(1 + pick(20'000));
      ++ticks;
    }
    RoomSizes s = Sizes(now);
    ASSERT_LE(s.admitted, config_.active_limit) << "step " << step;
    if (s.queued > 0) {
      ASSERT_EQ(s.admitted, config_.active_limit) << "a free slot while people wait";
    }
    if (step % 20 == 0) {  // everyone asked (a round trip each with Redis)
      int64_t admitted = 0;
      for (int64_t c : ever) admitted += Admitted(c, now);
      ASSERT_EQ(admitted, s.admitted) << "step " << step;
    }
  }
  // Everyone walks away: in at most (queued / limit + 1) admission TTLs the room is empty.
  RoomSizes s = Sizes(now);
  const int64_t rounds = s.queued / config_.active_limit + 2;
  for (int64_t r = 0; r < rounds; ++r) {
    now += config_.admission_ttl;
    s = Sizes(now);
  }
  EXPECT_EQ(s.admitted, 0);
  EXPECT_EQ(s.queued, 0);
  std::cout << "joins " << joins << ", leaves " << leaves << ", clock moves " << ticks << "\n";
}

TEST_P(WaitingRoomContract, TheRateOfAdmissionsIsMeasuredOverFiveMinutes) {
  for (int64_t c = 1; c <= 30; ++c) Join(c);
  auto p = room_->Find(kShowtime, 30, config_, kT0);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->recent_admissions, 10);
  EXPECT_EQ(room_->Find(kShowtime, 30, config_, kT0 + WaitingRoom::kRateWindow + Millis(1))
                ->recent_admissions,
            10)
      << "the admissions made when the window moved on count; the first ten do not";
}

// Ten thousand rooms that open and empty leave no room in memory behind: a room is
// dropped once nobody is queued or admitted, and Forget drops one switched off.
TEST(InProcessWaitingRoom, EmptiedRoomsAreForgotten) {
  InProcessWaitingRoom room;
  const WaitingRoomConfig config{true, 1, Millis(60'000)};
  for (int64_t id = 1; id <= 10'000; ++id) {
    ASSERT_TRUE(room.Join(id, 1, config, kT0).ok());
    ASSERT_TRUE(room.Join(id, 2, config, kT0).ok());
    if (id % 2) {
      ASSERT_TRUE(room.Leave(id, 1, config, kT0).ok());
      ASSERT_TRUE(room.Leave(id, 2, config, kT0).ok());
    } else {
      // Expiry: customer 1's admission ends, 2 is admitted, then 2's ends.
      ASSERT_TRUE(room.Advance(id, config, kT0 + Millis(60'000)).ok());
      ASSERT_TRUE(room.Advance(id, config, kT0 + Millis(120'000)).ok());
    }
  }
  EXPECT_EQ(room.RoomCount(), 0u);
  ASSERT_TRUE(room.Join(1, 1, config, kT0).ok());
  EXPECT_EQ(room.RoomCount(), 1u);
  room.Forget(1);
  EXPECT_EQ(room.RoomCount(), 0u);
  EXPECT_EQ(room.Find(1, 1, config, kT0).status().code(), Code::kNotFound);
}

INSTANTIATE_TEST_SUITE_P(Kinds, WaitingRoomContract, testing::AllBackends(), testing::BackendName);

}  // namespace
}  // namespace boxoffice
