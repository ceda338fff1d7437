// The Redis seat gate against a real redis-server started by the test:
//  * the third article's tests: one winner among 100 concurrent claimers of a seat, a key
//    that expires by itself, a stale token that cannot release another hold's key, and a
//    multi-seat claim that is all or nothing;
//  * a differential test: the same random sequence of holds and releases with and without
//    the gate yields the same winners (a gate "no" is always right);
//  * faults: Redis killed, wiped (FLUSHALL) and paused (SIGSTOP, longer than the timeout)
//    in the middle of 8 threads holding seats: never a double sale, and the gate recovers
//    by itself (the double-sale check itself proven on a store that sells seats twice).
#include "gate/seat_gate.h"

#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <cstring>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "core/seats.h"
#include "holds/hold_service.h"
#include "store/store_fixture.h"
#include "support/best_storm.h"
#include "support/redis_cluster.h"
#include "support/redis_server.h"
#include "support/seat_race.h"

namespace boxoffice {
namespace {

// This instance's seat maps as a test chooses them: each answer a function, unset ones as
// an instance that has no map yet (layouts then load from the store).
class ChosenSeatMaps final : public SeatMapView {
 public:
  explicit ChosenSeatMaps(Store* store) : store_(store) {}
  std::function<io::asio::awaitable<Result<std::shared_ptr<const SeatMap>>>(int64_t)> load;
  std::function<std::shared_ptr<const SeatMap>(int64_t)> recent;
  std::function<bool(int64_t, const std::vector<std::string>&)> shows_available;

  io::asio::awaitable<Result<std::shared_ptr<const SeatMap>>> Load(int64_t showtime_id) override {
    if (load) co_return co_await load(showtime_id);
    auto map = co_await store_->GetSeatMapAsync(showtime_id);
    if (!map.ok()) co_return map.status();
    co_return std::make_shared<const SeatMap>(std::move(map.value()));
  }
  std::shared_ptr<const SeatMap> Recent(int64_t showtime_id) override {
    return recent ? recent(showtime_id) : nullptr;
  }
  bool ShowsAvailable(int64_t showtime_id, const std::vector<std::string>& seats) override {
    return shows_available && shows_available(showtime_id, seats);
  }

 private:
  Store* store_;
};

class RedisFixture {
 public:
  // The server, or null when redis-server is missing: a skip, but a failure under
  // `make test`, whose BOXOFFICE_TEST_REQUIRE_PG=1 asks for every engine.
  static std::unique_ptr<testing::RedisServer> Start() {
    if (!testing::RedisInstalled()) return nullptr;
    auto server = std::make_unique<testing::RedisServer>();
    return server->ok() ? std::move(server) : nullptr;
  }
  // Timeouts generous enough that a loaded test machine never trips them by accident;
  // the fault tests set a short one on purpose.
  static std::unique_ptr<RedisSeatGate> Gate(const testing::RedisServer& server, Metrics* metrics,
                                             size_t pool = 8, Millis timeout = Millis(1'000)) {
    return Gate(server.url(), metrics, pool, timeout);
  }
  // A gate on any Redis: a lone one or a node of a cluster.
  static std::unique_ptr<RedisSeatGate> Gate(const std::string& url, Metrics* metrics,
                                             size_t pool = 8, Millis timeout = Millis(1'000)) {
    RedisOptions o = *ParseRedisUrl(url);
    o.pool_size = pool;
    o.connect_timeout = timeout;
    o.command_timeout = timeout;
    o.acquire_timeout = timeout;
    return std::make_unique<RedisSeatGate>(std::make_unique<RedisClient>(o),
                                           RedisGateOptions{Millis(100)}, metrics);
  }
};

#define START_REDIS(server)                                                  \
  auto server = RedisFixture::Start();                                       \
  if (!server) {                                                             \
    if (testing::PostgresRequired()) FAIL() << "redis-server did not start"; \
    GTEST_SKIP() << "redis-server is not installed (scripts/deps.sh)";       \
  }

TEST(SeatGate, OneWinnerAmongAHundredConcurrentClaimers) {
  START_REDIS(redis);
  Metrics metrics;
  auto gate = RedisFixture::Gate(*redis, &metrics, 16, Millis(5'000));
  constexpr int kClaimers = 100;
  std::barrier start(kClaimers);
  std::atomic<int> claimed{0}, taken{0}, skipped{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kClaimers; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      auto d = gate->Claim(42, {"F5"}, "hold-" + std::to_string(i), Millis(60'000));
      if (d.verdict == SeatGate::Verdict::kClaimed) ++claimed;
      if (d.verdict == SeatGate::Verdict::kTaken) ++taken;
      if (d.verdict == SeatGate::Verdict::kSkipped) ++skipped;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(claimed.load(), 1);
  EXPECT_EQ(taken.load() + skipped.load(), kClaimers - 1);
  EXPECT_EQ(skipped.load(), 0) << "Redis on loopback should answer 100 claims in time";
  EXPECT_EQ(redis->Cli("EXISTS seat:{42}:F5"), "1\n");
}

TEST(SeatGate, AKeyExpiresByItself) {
  START_REDIS(redis);
  Metrics metrics;
  auto gate = RedisFixture::Gate(*redis, &metrics);
  ASSERT_EQ(gate->Claim(1, {"A1"}, "h1", Millis(1'000)).verdict, SeatGate::Verdict::kClaimed);
  EXPECT_EQ(gate->Claim(1, {"A1"}, "h2", Millis(1'000)).verdict, SeatGate::Verdict::kTaken);
  std::this_thread::sleep_for(std::chrono::milliseconds(1'200));
  EXPECT_EQ(gate->Claim(1, {"A1"}, "h2", Millis(1'000)).verdict, SeatGate::Verdict::kClaimed);
}

TEST(SeatGate, AStaleTokenCannotReleaseOrExtendAnotherHold) {
  START_REDIS(redis);
  Metrics metrics;
  auto gate = RedisFixture::Gate(*redis, &metrics);
  ASSERT_EQ(gate->Claim(1, {"A1"}, "mine", Millis(60'000)).verdict, SeatGate::Verdict::kClaimed);
  gate->Release(1, {"A1"}, "stale");
  gate->Rearm(1, {"A1"}, "stale", Millis(1));
  EXPECT_EQ(redis->Cli("GET seat:{1}:A1"), "mine\n");
  EXPECT_GT(std::stoi(redis->Cli("PTTL seat:{1}:A1")), 50'000);
  gate->Rearm(1, {"A1"}, "mine", Millis(5'000));
  EXPECT_LE(std::stoi(redis->Cli("PTTL seat:{1}:A1")), 5'000);
  gate->Release(1, {"A1"}, "mine");
  EXPECT_EQ(redis->Cli("EXISTS seat:{1}:A1"), "0\n");
}

TEST(SeatGate, AMultiSeatClaimIsAllOrNothing) {
  START_REDIS(redis);
  Metrics metrics;
  auto gate = RedisFixture::Gate(*redis, &metrics);
  ASSERT_EQ(gate->Claim(7, {"A1", "A2"}, "first", Millis(60'000)).verdict,
            SeatGate::Verdict::kClaimed);
  auto d = gate->Claim(7, {"A2", "A3", "A4"}, "second", Millis(60'000));
  EXPECT_EQ(d.verdict, SeatGate::Verdict::kTaken);
  EXPECT_EQ(d.taken, (std::vector<std::string>{"A2"}));
  EXPECT_EQ(redis->Cli("EXISTS seat:{7}:A3 seat:{7}:A4"), "0\n");
  EXPECT_EQ(gate->Claim(7, {"A3", "A4"}, "third", Millis(60'000)).verdict,
            SeatGate::Verdict::kClaimed);
}

TEST(SeatGate, ScriptsAreLoadedAgainAfterRedisForgetsThem) {
  START_REDIS(redis);
  Metrics metrics;
  auto gate = RedisFixture::Gate(*redis, &metrics);
  ASSERT_EQ(gate->Claim(1, {"A1"}, "h1", Millis(60'000)).verdict, SeatGate::Verdict::kClaimed);
  redis->Cli("SCRIPT FLUSH");
  EXPECT_EQ(gate->Claim(1, {"A2"}, "h2", Millis(60'000)).verdict, SeatGate::Verdict::kClaimed);
  EXPECT_TRUE(gate->Up());
}

TEST(SeatGate, ADownRedisIsSkippedAndTheGateRecovers) {
  START_REDIS(redis);
  Metrics metrics;
  auto gate = RedisFixture::Gate(*redis, &metrics);
  redis->Kill();
  // Asked and unanswered: uncertain; then the gate rests and is not asked at all.
  EXPECT_EQ(gate->Claim(1, {"A1"}, "h1", Millis(60'000)).verdict, SeatGate::Verdict::kUncertain);
  EXPECT_EQ(gate->Claim(1, {"A1"}, "h1", Millis(60'000)).verdict, SeatGate::Verdict::kSkipped);
  EXPECT_FALSE(gate->Up());
  EXPECT_FALSE(gate->Ping().ok());
  EXPECT_NE(metrics.Render().find("boxoffice_gate_up 0"), std::string::npos);
  ASSERT_TRUE(redis->Start());
  SeatGate::Verdict v = SeatGate::Verdict::kSkipped;
  for (int i = 0; i < 50 && v != SeatGate::Verdict::kClaimed; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    v = gate->Claim(1, {"A1"}, "h1", Millis(60'000)).verdict;
  }
  EXPECT_EQ(v, SeatGate::Verdict::kClaimed);
  EXPECT_TRUE(gate->Up());
}

// HoldService over a real store (SQLite and PostgreSQL), with and without the gate.
class GatedHolds : public StoreContract {};

// The same random sequence of holds and releases, with and without the gate: the same
// winners, and the same seats named in every refusal.
TEST_P(GatedHolds, TheGateNeverChangesWhoWins) {
  START_REDIS(redis);
  Metrics metrics;
  auto gate = RedisFixture::Gate(*redis, &metrics);
  auto plain_store = std::move(store_);
  store_ = NewStore();
  const int64_t gated_st = MakePricedShowtime();
  std::swap(store_, plain_store);
  const int64_t plain_st = MakePricedShowtime();
  ASSERT_EQ(gated_st, plain_st);
  HoldService plain(store_.get(), HoldPolicy{}, &metrics);
  HoldService gated(plain_store.get(), HoldPolicy{}, &metrics, gate.get());

  std::mt19937_64 rng(20261130);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  const std::vector<std::string> rows = {"E", "F"};
  std::vector<std::pair<Hold, Hold>> live;  // the same hold in both worlds
  int rejected_by_gate_before = 0;
  for (int op = 0; op < 600; ++op) {
    if (!live.empty() && pick(4) == 0) {
      const size_t i = static_cast<size_t>(pick(static_cast<int>(live.size())));
      EXPECT_TRUE(plain.ReleaseHold(live[i].first.hold_id, live[i].first.customer_id).ok());
      EXPECT_TRUE(gated.ReleaseHold(live[i].second.hold_id, live[i].second.customer_id).ok());
      live.erase(live.begin() + static_cast<long>(i));
      continue;
    }
    const int64_t customer = 1 + pick(20);
    std::vector<std::string> seats;
    for (int n = 1 + pick(3); n > 0; --n)
      seats.push_back(rows[static_cast<size_t>(pick(2))] + std::to_string(1 + pick(10)));
    auto a = plain.HoldSeats(plain_st, customer, seats);
    auto b = gated.HoldSeats(gated_st, customer, seats);
    ASSERT_EQ(a.ok(), b.ok()) << "op " << op;
    if (a.ok()) {
      EXPECT_EQ(a->seats, b->seats);
      live.emplace_back(a.value(), b.value());
    } else {
      EXPECT_EQ(a.status().code(), b.status().code()) << "op " << op;
      EXPECT_EQ(a.status().seats(), b.status().seats()) << "op " << op;
    }
  }
  const std::string counters = metrics.Render();
  const std::string series = "boxoffice_gate_total{outcome=\"rejected\"} ";
  const size_t at = counters.find(series);
  ASSERT_NE(at, std::string::npos);
  rejected_by_gate_before = std::stoi(counters.substr(at + series.size()));
  EXPECT_GT(rejected_by_gate_before, 100) << "the gate should have turned most refusals away";
}

// A seat map that lags (every seat shown free, as a stale cache shows a hold in flight or
// made on another instance) must not turn the gate off in a storm: losers go to the store
// at most once per showtime per HoldService::kDisputeInterval, the rest are refused by the
// gate as before. Every winner is still the store's.
TEST_P(GatedHolds, ALaggingMapNeverSendsAStormToTheStore) {
  START_REDIS(redis);
  Metrics metrics;
  auto gate = RedisFixture::Gate(*redis, &metrics, 16, Millis(5'000));
  const int64_t st = MakePricedShowtime();
  ChosenSeatMaps maps(store_.get());
  maps.shows_available = [](int64_t, const std::vector<std::string>&) { return true; };
  HoldService holds(HoldServiceDeps{.store = store_.get(), .metrics = &metrics,
                                    .gate = gate.get(), .maps = &maps},
                    HoldPolicy{});
  ASSERT_TRUE(holds.HoldSeats(st, 1, {"E1", "E2"}).ok());
  constexpr int kLosers = 64;
  std::barrier start(kLosers);
  std::atomic<int> won{0};
  std::vector<std::thread> threads;
  const auto began = std::chrono::steady_clock::now();
  for (int i = 0; i < kLosers; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      for (int n = 0; n < 10; ++n) won += holds.HoldSeats(st, 100 + i, {"E1", "E2"}).ok();
    });
  }
  for (auto& t : threads) t.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  EXPECT_EQ(won.load(), 0);
  const std::string text = metrics.Render();
  const std::string series = "\nboxoffice_gate_disputed_total ";
  const double disputed = std::stod(text.substr(text.find(series) + series.size()));
  EXPECT_GE(disputed, 1);
  EXPECT_LE(disputed,
            1 + seconds / std::chrono::duration<double>(HoldService::kDisputeInterval).count())
      << "of " << kLosers * 10 << " refusals in " << seconds << " s";
}

// A gate whose answers are lost on the way back: Redis applies each claim (through the real
// gate) but the caller hears kUncertain, as after a timeout; releases can be lost too, or
// (late_releases) those sent aside arrive only after the caller has answered.
class LostAnswers final : public SeatGate {
 public:
  explicit LostAnswers(SeatGate* real) : real_(real) {}
  bool lose_releases = false;
  bool late_releases = false;
  bool late_repairs = false;  // a repair sent aside is still on its way when the test looks
  bool lost_picks = false;    // a picks claim lost before Redis applied it: uncertain
  Decision Claim(int64_t st, const std::vector<std::string>& seats, const std::string& hold_id,
                 Millis ttl) override {
    real_->Claim(st, seats, hold_id, ttl);
    return Decision{Verdict::kUncertain, {}};
  }
  void Release(int64_t st, const std::vector<std::string>& seats,
               const std::string& hold_id) override {
    if (!lose_releases && !late_releases) real_->Release(st, seats, hold_id);
  }
  io::asio::awaitable<void> ReleaseNow(int64_t st, std::vector<std::string> seats,
                                       std::string hold_id) override {
    if (!lose_releases) co_await real_->ReleaseNow(st, std::move(seats), std::move(hold_id));
  }
  void Rearm(int64_t st, const std::vector<std::string>& seats, const std::string& hold_id,
             Millis ttl) override {
    real_->Rearm(st, seats, hold_id, ttl);
  }
  void KeepUntil(int64_t st, const std::vector<std::string>& seats, const std::string& hold_id,
                 Instant until) override {
    real_->KeepUntil(st, seats, hold_id, until);
  }
  void Repair(int64_t st, const std::vector<std::string>& seats, const std::string& hold_id,
              Millis ttl) override {
    if (!late_repairs) real_->Repair(st, seats, hold_id, ttl);
  }
  io::asio::awaitable<void> RepairNow(int64_t st, std::vector<std::string> seats,
                                      std::string hold_id, Millis ttl) override {
    co_await real_->RepairNow(st, std::move(seats), std::move(hold_id), ttl);
  }
  PendingPicks SendPicks(int64_t st, Picks picks, const std::string& hold_id, Millis ttl) override {
    if (lost_picks) return PendingPicks{nullptr, nullptr, picks ? picks->size() : 0};
    return real_->SendPicks(st, std::move(picks), hold_id, ttl);
  }
  io::asio::awaitable<PicksDecision> AwaitPicks(PendingPicks pending) override {
    if (lost_picks) co_return PicksDecision{Verdict::kUncertain, 0, {}, {}};
    co_return co_await real_->AwaitPicks(std::move(pending));
  }
  bool Up() const override { return real_->Up(); }
  Status Ping() override { return real_->Ping(); }

 private:
  SeatGate* real_;
};

// The real gate over a test's Redis, seen through LostAnswers.
struct LossyGate {
  explicit LossyGate(const testing::RedisServer& redis)
      : real(RedisFixture::Gate(redis, &metrics)), gate(real.get()) {}
  Metrics metrics;
  std::unique_ptr<RedisSeatGate> real;
  LostAnswers gate;
};

// The claim went through but its answer was lost, and the store refused the hold (its seat
// was held without the gate knowing): the claim's keys are released, or else the seat
// would be turned away while the store has it free.
TEST_P(GatedHolds, AClaimWhoseAnswerWasLostIsReleasedWhenTheStoreRefuses) {
  START_REDIS(redis);
  LossyGate lossy(*redis);
  const int64_t st = MakePricedShowtime();
  HoldService holds(store_.get(), HoldPolicy{}, &lossy.metrics, &lossy.gate);
  auto first = TryHold(st, 1, {"E5"});  // straight to the store: the gate knows nothing
  ASSERT_TRUE(first.ok());
  auto refused = holds.HoldSeats(st, 2, {"E5", "E6"});
  ASSERT_EQ(refused.status().code(), Code::kConflict);
  const std::string e6 = "seat:{" + std::to_string(st) + "}:E6";
  EXPECT_EQ(redis->Cli("EXISTS " + e6), "0\n") << "E6 is free in the store";
  // Once the store frees E5, anyone can hold both.
  ASSERT_TRUE(store_->ReleaseHold(first->hold_id, 1).ok());
  EXPECT_TRUE(holds.HoldSeats(st, 3, {"E5", "E6"}).ok());
}

// A customer who releases a hold and at once tells a friend to take the seats: the friend is
// not turned away by the released hold's keys (the release is answered once they are gone).
TEST_P(GatedHolds, AReleaseIsAnsweredOnceItsKeysAreGone) {
  START_REDIS(redis);
  LossyGate lossy(*redis);
  lossy.gate.late_releases = true;
  const int64_t st = MakePricedShowtime();
  HoldService holds(store_.get(), HoldPolicy{}, &lossy.metrics, &lossy.gate);
  auto first = holds.HoldSeats(st, 1, {"F7", "F8"});
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(holds.ReleaseHold(first->hold_id, 1).ok());
  EXPECT_EQ(redis->Cli("EXISTS seat:{" + std::to_string(st) + "}:F7"), "0\n");
  EXPECT_TRUE(holds.HoldSeats(st, 2, {"F7", "F8"}).ok());
}

// A win's keys are rearmed for the hold's TTL; keys left behind by a refusal whose release
// was lost as well live only as long as a claim waits for the store.
TEST_P(GatedHolds, GateKeysLiveAsLongAsTheHoldOrOnlyTheClaimWindow) {
  START_REDIS(redis);
  LossyGate lossy(*redis);
  lossy.gate.lose_releases = true;
  const int64_t st = MakePricedShowtime();
  HoldPolicy policy;
  policy.gate_claim_ttl = Millis(3'000);
  HoldService holds(store_.get(), policy, &lossy.metrics, &lossy.gate);
  auto key = [&](const std::string& seat) { return "seat:{" + std::to_string(st) + "}:" + seat; };
  ASSERT_TRUE(holds.HoldSeats(st, 1, {"F1"}).ok());
  EXPECT_GT(std::stoll(redis->Cli("PTTL " + key("F1"))), 9 * 60'000) << "the hold's 10 minutes";
  ASSERT_TRUE(TryHold(st, 2, {"F3"}).ok());
  ASSERT_EQ(holds.HoldSeats(st, 3, {"F3", "F4"}).status().code(), Code::kConflict);
  const long long left = std::stoll(redis->Cli("PTTL " + key("F4")));
  EXPECT_GT(left, 0) << "the lost release left the key";
  EXPECT_LE(left, 3'000);
}

// 8 threads hold a seat of 20 (E1..E10, F1..F10) and release it, over and over, while
// `fault` strikes 200 ms in and `heal` follows 400 ms later; the seat check of
// support/seat_race.h watches every win (each seat marked from the win until its release
// has returned; the store asked about a hold whose release is under way).
testing::SeatRaceOutcome RaceThroughAFault(const testing::SeatRaceOps& ops,
                                           const std::function<void()>& fault,
                                           const std::function<void()>& heal) {
  testing::SeatRace race;
  for (const char* row : {"E", "F"}) {
    for (int n = 1; n <= 10; ++n) race.seats.push_back(row + std::to_string(n));
  }
  race.most_per_hold = 1;
  race.threads = 8;
  race.rounds = 0;  // until the fault has come and gone
  race.first_customer = 100;
  race.seed = 31;
  return testing::RunSeatRace(race, ops, [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    fault();
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    heal();
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
  });
}

// The fault tests' race through HoldService and the gate, over the real store.
class GatedFaults : public StoreContract {
 protected:
  int RunWithFault(testing::RedisServer& redis, const std::function<void()>& fault,
                   const std::function<void()>& heal) {
    return RunWithFault(redis.url(), fault, heal);
  }
  // The double sales the race saw.
  int RunWithFault(const std::string& url, const std::function<void()>& fault,
                   const std::function<void()>& heal) {
    Metrics metrics;
    auto gate = RedisFixture::Gate(url, &metrics, 8, Millis(100));  // SIGSTOP must trip it
    const int64_t st = showtime_ = MakePricedShowtime();
    HoldService holds(store_.get(), HoldPolicy{}, &metrics, gate.get());
    testing::SeatRaceOps ops;
    ops.hold = [&](int64_t customer, const std::vector<std::string>& seats) {
      return holds.HoldSeats(st, customer, seats);
    };
    ops.release = [&](const std::string& hold_id, int64_t customer) {
      return holds.ReleaseHold(hold_id, customer);
    };
    ops.held = [&](const std::string& hold_id, int64_t customer) -> Result<bool> {
      auto hold = store_->GetHold(hold_id, customer);  // the store is the truth
      if (!hold.ok()) return hold.status();
      return hold->state == HoldState::kHeld;
    };
    const testing::SeatRaceOutcome out = RaceThroughAFault(ops, fault, heal);
    EXPECT_EQ(out.errors, 0);
    EXPECT_GT(out.wins, 0);
    // The gate comes back by itself.
    bool up = false;
    for (int i = 0; i < 50 && !up; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      gate->Claim(st, {"Z1"}, "probe", Millis(1'000));
      up = gate->Up();
    }
    EXPECT_TRUE(up);
    std::cout << "wins " << out.wins << ", seats unchecked " << out.unchecked << "\n";
    for (const char* series :
         {"boxoffice_gate_total{outcome=\"rejected\"}", "boxoffice_gate_total{outcome=\"skipped\"}",
          "boxoffice_gate_errors_total"}) {
      const std::string text = metrics.Render();
      const size_t at = text.find("\n" + std::string(series) + " ");
      std::cout << series << " "
                << (at == std::string::npos
                        ? "0"
                        : text.substr(at + strlen(series) + 2,
                                      text.find('\n', at + 1) - at - strlen(series) - 2))
                << "\n";
    }
    return out.double_sales;
  }

  int64_t showtime_ = 0;  // RunWithFault's, for the fault to aim at
};

TEST_P(GatedFaults, RedisKilledMidRun) {
  START_REDIS(redis);
  EXPECT_EQ(RunWithFault(
                *redis, [&] { redis->Kill(); }, [&] { redis->Start(); }),
            0);
}

TEST_P(GatedFaults, RedisWipedMidRun) {
  START_REDIS(redis);
  EXPECT_EQ(RunWithFault(
                *redis, [&] { redis->Cli("FLUSHALL"); }, [] {}),
            0);
}

TEST_P(GatedFaults, RedisPausedLongerThanItsTimeout) {
  START_REDIS(redis);
  EXPECT_EQ(RunWithFault(
                *redis, [&] { redis->Pause(); }, [&] { redis->Resume(); }),
            0);
}

// A Redis Cluster (3 masters, a replica each) whose master serving the showtime's slot is
// killed -9 mid-run: while its replica takes over the gate is down or refuses (holds go to
// the store, which decides), never wrong; then it routes to the new master by itself.
TEST_P(GatedFaults, AClusterMasterKilledMidRunAndItsReplicaPromoted) {
  if (!testing::RedisClusterInstalled()) {
    if (testing::PostgresRequired()) FAIL() << "redis-server is not installed";
    GTEST_SKIP() << "redis-server is not installed (scripts/deps.sh)";
  }
  testing::RedisCluster cluster(3, 1);
  ASSERT_TRUE(cluster.ok());
  int killed = -1;
  EXPECT_EQ(RunWithFault(
                cluster.url(),
                [&] {
                  killed =
                      cluster.MasterOfSlot(RedisKeySlot("{" + std::to_string(showtime_) + "}"));
                  ASSERT_GE(killed, 0);
                  cluster.Kill(killed);
                },
                [&] { ASSERT_TRUE(cluster.WaitHealthy(Millis(15'000))); }),
            0);
  const int now = cluster.MasterOfSlot(RedisKeySlot("{" + std::to_string(showtime_) + "}"));
  EXPECT_GE(now, 0);
  EXPECT_NE(now, killed) << "a replica was promoted";
}

// The fault race's check proven without Redis or a database, on the in-memory store of
// support/seat_race.h: careless (every fourth seat it should refuse granted anyway) it is
// seen selling seats twice; careful, with the same latencies, nothing is reported.
constexpr std::chrono::microseconds kRaceCheckLatency{20};  // each way, per call
void NoFault() {}

TEST(FaultRaceCheck, SeesACarelessStoreSellASeatTwice) {
  testing::CarelessSeats careless(4, kRaceCheckLatency);
  const testing::SeatRaceOutcome out = RaceThroughAFault(careless.Ops(), NoFault, NoFault);
  ASSERT_GT(careless.sold_twice(), 0) << "the careless store never had the chance";
  EXPECT_GT(out.double_sales, 0) << "the check missed all " << careless.sold_twice()
                                 << " seats the store sold twice";
}

TEST(FaultRaceCheck, ReportsNothingOnACarefulStore) {
  testing::CarelessSeats careful(0, kRaceCheckLatency);
  const testing::SeatRaceOutcome out = RaceThroughAFault(careful.Ops(), NoFault, NoFault);
  EXPECT_EQ(out.double_sales, 0);
  EXPECT_EQ(out.errors, 0);
  EXPECT_GT(out.wins, 0);
  EXPECT_GT(out.conflicts, 0) << "no contention: the check was not exercised";
}

// The seat rules' claim (docs/seat-rules.md): picks tried in order in one Lua call, the
// first whose keys are free and whose guards hold claimed; a single refused pick named.
TEST(SeatGate, PicksClaimTheFirstThatPassesInOneCall) {
  START_REDIS(redis);
  Metrics metrics;
  auto gate = RedisFixture::Gate(*redis, &metrics);
  auto decide = [&](const std::vector<SeatPick>& picks, const std::string& hold) {
    auto shared = std::make_shared<const std::vector<SeatPick>>(picks);
    return io::RunSync(gate->AwaitPicks(gate->SendPicks(7, shared, hold, Millis(60'000))));
  };
  ASSERT_EQ(gate->Claim(7, {"A1"}, "other", Millis(60'000)).verdict, SeatGate::Verdict::kClaimed);
  // Row A1..A6, A1 taken. A2A3 strands nothing (A1 is taken); A3A4 would leave A2 alone.
  const SeatPick a3a4{{"A3", "A4"}, {{"A2", "A1"}, {"A5", "A6"}}};
  const SeatPick a1a2{{"A1", "A2"}, {{"A3", "A4"}}};
  const SeatPick a5a6{{"A5", "A6"}, {{"A4", "A3"}}};
  auto d = decide({a3a4, a1a2, a5a6}, "best");
  ASSERT_EQ(d.verdict, SeatGate::Verdict::kClaimed);
  EXPECT_EQ(d.chosen, 3u);
  EXPECT_EQ(gate->Claim(7, {"A5"}, "x", Millis(60'000)).verdict, SeatGate::Verdict::kTaken);
  EXPECT_EQ(gate->Claim(7, {"A3"}, "x", Millis(60'000)).verdict, SeatGate::Verdict::kClaimed)
      << "the picks that failed set no key";
  gate->Release(7, {"A3"}, "x");
  // A single pick refused: its taken seats, or else the seats it would strand.
  auto taken = decide({a1a2}, "hand");
  EXPECT_EQ(taken.verdict, SeatGate::Verdict::kTaken);
  EXPECT_EQ(taken.taken, (std::vector<std::string>{"A1"}));
  auto alone = decide({a3a4}, "hand");
  EXPECT_EQ(alone.verdict, SeatGate::Verdict::kTaken);
  EXPECT_TRUE(alone.taken.empty());
  EXPECT_EQ(alone.stranded, (std::vector<std::string>{"A2"}));
  // A guard at an aisle or a row's end (no beyond): the neighbour alone is stranded.
  const SeatPick b2{{"B2"}, {{"B1", ""}, {"B3", "B4"}}};
  EXPECT_EQ(decide({b2}, "hand").stranded, (std::vector<std::string>{"B1"}));
  const SeatPick b1b2{{"B1", "B2"}, {{"B3", "B4"}}};
  EXPECT_EQ(decide({b2, b1b2}, "best").chosen, 2u);
}

// A showtime that forbids gaps, holds by hand and best available mixed with releases: the
// same outcomes with and without the gate (its picks decision is never wrong).
TEST_P(GatedHolds, TheGateNeverChangesWhoWinsUnderTheSeatRules) {
  START_REDIS(redis);
  Metrics metrics;
  auto gate = RedisFixture::Gate(*redis, &metrics);
  NewShowtime hall = PricedLayout();
  hall.forbid_single_seat_gaps = true;
  auto plain_store = std::move(store_);
  store_ = NewStore();
  const int64_t gated_st = store_->CreateShowtime(hall).value();
  std::swap(store_, plain_store);
  const int64_t plain_st = store_->CreateShowtime(hall).value();
  ASSERT_EQ(gated_st, plain_st);
  HoldService plain(store_.get(), HoldPolicy{}, &metrics);
  HoldService gated(plain_store.get(), HoldPolicy{}, &metrics, gate.get());

  std::mt19937_64 rng(20261202);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  std::vector<std::pair<Hold, Hold>> live;
  std::map<Code, int> outcomes;
  for (int op = 0; op < 500; ++op) {
    if (!live.empty() && pick(3) == 0) {
      const size_t i = static_cast<size_t>(pick(static_cast<int>(live.size())));
      EXPECT_TRUE(plain.ReleaseHold(live[i].first.hold_id, live[i].first.customer_id).ok());
      EXPECT_TRUE(gated.ReleaseHold(live[i].second.hold_id, live[i].second.customer_id).ok());
      live.erase(live.begin() + static_cast<long>(i));
      continue;
    }
    const int64_t customer = 1 + pick(40);
    Result<Hold> a = Status(Code::kInternal, "");
    Result<Hold> b = Status(Code::kInternal, "");
    if (pick(3) == 0) {
      const BestAvailable best{static_cast<size_t>(1 + pick(3)), pick(2) ? "standard" : "premium"};
      a = plain.HoldBest(plain_st, customer, best);
      b = gated.HoldBest(gated_st, customer, best);
    } else {
      const std::string row = pick(2) ? "E" : "F";
      const int first = 1 + pick(9);
      std::vector<std::string> seats = {row + std::to_string(first)};
      if (pick(2)) seats.push_back(row + std::to_string(first + 1));
      a = plain.HoldSeats(plain_st, customer, seats);
      b = gated.HoldSeats(gated_st, customer, seats);
    }
    ASSERT_EQ(a.ok(), b.ok()) << "op " << op << ": " << a.status().message() << " / "
                              << b.status().message();
    ++outcomes[a.status().code()];
    if (a.ok()) {
      EXPECT_EQ(a->seats, b->seats) << "op " << op;
      live.emplace_back(a.value(), b.value());
    } else {
      EXPECT_EQ(a.status().code(), b.status().code()) << "op " << op;
      EXPECT_EQ(a.status().seats(), b.status().seats()) << "op " << op;
    }
  }
  EXPECT_GT(outcomes[Code::kOk], 50);
  EXPECT_GT(outcomes[Code::kSingleSeatGap], 10);
  EXPECT_GT(outcomes[Code::kConflict], 10);
  const std::string counters = metrics.Render();
  const std::string series = "boxoffice_gate_total{outcome=\"rejected\"} ";
  const size_t at = counters.find(series);
  ASSERT_NE(at, std::string::npos);
  EXPECT_GT(std::stoi(counters.substr(at + series.size())), 50)
      << "the gate should have turned most refusals away";
}

// Keys a lost release left behind (here: set by hand for a hold the store never had) turn
// away a hold under the seat rules; when this instance's map shows the pick passes, the
// store is asked, says yes, and the keys are repaired to the new hold. Then the next
// request the gate refuses at once, and for the best available too.
TEST_P(GatedHolds, AGateRefusalUnderTheSeatRulesIsDisputedWhenTheMapShowsItWrong) {
  START_REDIS(redis);
  Metrics metrics;
  auto gate = RedisFixture::Gate(*redis, &metrics);
  NewShowtime hall = PricedLayout();
  hall.forbid_single_seat_gaps = true;
  const int64_t st = store_->CreateShowtime(hall).value();
  ChosenSeatMaps maps(store_.get());
  maps.recent = [&](int64_t showtime) -> std::shared_ptr<const SeatMap> {
    auto map = store_->GetSeatMap(showtime);
    return map.ok() ? std::make_shared<const SeatMap>(map.value()) : nullptr;
  };
  HoldService holds(HoldServiceDeps{.store = store_.get(), .metrics = &metrics,
                                    .gate = gate.get(), .maps = &maps},
                    HoldPolicy{});
  // Row E: wheelchair places E1-E2, an aisle after E5. A stale key on E7.
  ASSERT_EQ(gate->Claim(st, {"E7"}, "lost", Millis(60'000)).verdict, SeatGate::Verdict::kClaimed);
  auto first = holds.HoldSeats(st, 1, {"E6", "E7"});  // the gate: E7 taken; the map: free
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(gate->Claim(st, {"E6"}, "other", Millis(60'000)).verdict,
            SeatGate::Verdict::kTaken);  // repaired: the new hold's keys
  auto again = holds.HoldSeats(st, 2, {"E7"});
  EXPECT_EQ(again.status().code(), Code::kConflict);  // refused by the gate, not disputed
  const std::string text = metrics.Render();
  const std::string series = "\nboxoffice_gate_disputed_total ";
  EXPECT_EQ(std::stod(text.substr(text.find(series) + series.size())), 1);
  // Best 2: of the blocks left (E3-E4, E4-E5, E8-E9, E9-E10) only E4-E5 strands no seat,
  // and a stale key on E5 refuses it at the gate; the map says it passes, so the store
  // decides, from every block.
  ASSERT_EQ(gate->Claim(st, {"E5"}, "lost", Millis(60'000)).verdict, SeatGate::Verdict::kClaimed);
  std::this_thread::sleep_for(HoldService::kDisputeInterval);  // the next dispute may go
  auto best = holds.HoldBest(st, 3, {2, "standard"});
  ASSERT_TRUE(best.ok()) << best.status().message();
  EXPECT_EQ(best->seats, (std::vector<std::string>{"E4", "E5"}));
}

// A seat map read from the store, counted (the hold path's source of layouts).
io::asio::awaitable<Result<std::shared_ptr<const SeatMap>>> CountedMap(Store* store,
                                                                       int64_t showtime_id,
                                                                       int* reads) {
  ++*reads;
  auto map = co_await store->GetSeatMapAsync(showtime_id);
  if (!map.ok()) co_return map.status();
  co_return std::make_shared<const SeatMap>(std::move(map.value()));
}

// A hold under the seat rules that the store gave without the gate's claim (its answer was
// lost before Redis applied it) is answered once its keys are set: a repair left on its way
// could land after the customer's release and set a dead hold's keys again.
TEST_P(GatedHolds, AHoldUnderTheSeatRulesIsAnsweredOnceItsKeysAreSet) {
  START_REDIS(redis);
  LossyGate lossy(*redis);
  lossy.gate.late_repairs = true;
  lossy.gate.lost_picks = true;
  NewShowtime hall = PricedLayout();
  hall.forbid_single_seat_gaps = true;
  const int64_t st = store_->CreateShowtime(hall).value();
  HoldService holds(store_.get(), HoldPolicy{}, &lossy.metrics, &lossy.gate);
  auto hand = holds.HoldSeats(st, 1, {"E6", "E7"});
  ASSERT_TRUE(hand.ok()) << hand.status().message();
  EXPECT_EQ(lossy.real->Claim(st, {"E6"}, "other", Millis(60'000)).verdict,
            SeatGate::Verdict::kTaken);
  auto best = holds.HoldBest(st, 2, {2, "premium"});
  ASSERT_TRUE(best.ok()) << best.status().message();
  EXPECT_EQ(lossy.real->Claim(st, {best->seats[0]}, "other", Millis(60'000)).verdict,
            SeatGate::Verdict::kTaken);
}

// The first hold of a showtime on an instance reads its layout only once the rate limit
// has let the attempt through: attempts past the limit cost the store nothing.
TEST_P(GatedHolds, AttemptsPastTheRateLimitNeverReadALayout) {
  Metrics metrics;
  InProcessRateLimiter limiter(1, &clock_);
  const int64_t st = MakePricedShowtime();
  int reads = 0;
  ChosenSeatMaps maps(store_.get());
  maps.load = [&](int64_t id) { return CountedMap(store_.get(), id, &reads); };
  HoldService holds(HoldServiceDeps{.store = store_.get(), .metrics = &metrics,
                                    .limiter = &limiter, .holds_per_minute = 1, .maps = &maps},
                    HoldPolicy{});
  ASSERT_TRUE(holds.HoldSeats(st + 1'000, 7, {"E5"}).status().code() == Code::kNotFound);
  EXPECT_EQ(reads, 0) << "an unknown showtime has no map to read";
  auto limited = holds.HoldSeats(st, 7, {"E5"});
  EXPECT_EQ(limited.status().code(), Code::kRateLimited);
  EXPECT_EQ(reads, 0) << "the attempt past the limit read the layout";
  EXPECT_TRUE(holds.HoldSeats(st, 8, {"E5"}).ok());
  EXPECT_EQ(reads, 1);
}

// 64 threads ask "best 2" through the gate on a 300-seat hall (gaps forbidden, then
// allowed) until each is refused: every seat held once, no win asked after a refusal was
// answered, no block left that the rules allow, nothing stranded when forbidden.
TEST_P(GatedHolds, SixtyFourThreadsAskingBestTwoThroughTheGate) {
  START_REDIS(redis);
  for (bool forbid : {true, false}) {
    Metrics metrics;
    auto gate = RedisFixture::Gate(*redis, &metrics, 16, Millis(5'000));
    NewShowtime hall = PricedLayout();
    hall.rows.clear();
    for (int r = 0; r < 15; ++r) {
      hall.rows.push_back(
          RowLayout{std::string(1, static_cast<char>('A' + r)), 20, "standard", {4, 16}});
    }
    hall.forbid_single_seat_gaps = forbid;
    const int64_t st = store_->CreateShowtime(hall).value();
    HoldService holds(store_.get(), HoldPolicy{}, &metrics, gate.get());
    auto storm = testing::RunBestStorm(64, [&](int64_t customer) {
      return holds.HoldBest(st, customer, {2, "standard"});
    });
    auto map = store_->GetSeatMap(st);
    ASSERT_TRUE(map.ok());
    const size_t left = testing::ExpectBestStormLeftNoBlock(storm, map.value(), forbid, 2);
    const std::string counters = metrics.Render();
    const std::string series = "boxoffice_gate_total{outcome=\"rejected\"} ";
    const size_t at = counters.find(series);
    ASSERT_NE(at, std::string::npos);
    std::printf(
        "[gated best 2 %s, gaps %s] %zu seats held, %zu left, %s refused by the gate\n",
        EngineName(::testing::TestParamInfo<Engine>(GetParam(), 0)).c_str(),
        forbid ? "forbidden" : "allowed", storm.owner.size(), left,
        counters.substr(at + series.size(), counters.find('\n', at) - at - series.size()).c_str());
    EXPECT_GT(storm.owner.size(), 200u);
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, GatedHolds, ::testing::Values(Engine::kSqlite, Engine::kPostgres),
                         EngineName);
INSTANTIATE_TEST_SUITE_P(Engines, GatedFaults,
                         ::testing::Values(Engine::kSqlite, Engine::kPostgres), EngineName);

}  // namespace
}  // namespace boxoffice

#undef START_REDIS  // the files of a unity batch each define their own
