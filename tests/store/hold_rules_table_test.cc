// The hold rules, one table, three engines. The pick check exists three times, as it must:
// each engine decides a hold atomically in its own language. C++ decides it in SQLite's
// writer (CheckPick), PL/pgSQL in PostgreSQL's boxoffice_hold_picks, Lua in the Redis gate's
// picks script. Every case of the table below runs directly against each of them (not
// through the service), so a rule changed in one engine and not the others fails here:
// free, held, expired, booked, the single-seat gap at a row's end, at an aisle and beside a
// taken seat, best available's ranking with and without the gap rule, and the 8-seat quota
// (which the gate leaves to the store).
//
// The hall (Hall() below): row E, 10 standard seats, wheelchair places E1 and E2, an aisle
// after E5; row F, 10 premium seats, aisles after F3 and F7.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "gate/seat_gate.h"
#include "holds/seat_rules.h"
#include "store/pg_store.h"
#include "store/sqlite_store.h"
#include "store_fixture.h"
#include "support/redis_server.h"
#include "support/test_env.h"

namespace boxoffice {
namespace {

enum class RulesEngine { kCxx, kPlpgsql, kLua };

// What was done to a seat before the case's request.
enum class Before {
  kHeldByOther,  // held by customer 2 (live)
  kHeldBySelf,   // held by customer 1, who asks
  kBooked,       // held by customer 2, paid and confirmed
  kExpired,      // held by customer 2, its hold expired
};

struct Outcome {
  enum Kind { kHeld, kTaken, kGap, kNoBlock, kQuota } kind;
  std::vector<std::string> seats;  // held / taken / left alone
  bool operator==(const Outcome&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Outcome& o) {
  static const char* kNames[] = {"held", "taken", "gap", "no block", "quota"};
  os << kNames[o.kind] << " [";
  for (size_t i = 0; i < o.seats.size(); ++i) os << (i ? " " : "") << o.seats[i];
  return os << "]";
}

struct RuleCase {
  const char* name;
  bool forbid_gaps;
  std::vector<std::pair<std::string, Before>> before;
  std::vector<std::string> seats;  // picked by hand; empty: best available
  size_t best_count = 0;
  std::string best_category;
  Outcome expect;
  bool store_only = false;  // the quota: the gate leaves it to the store
};

NewShowtime Hall(bool forbid_gaps) {
  NewShowtime s = PricedHall();
  s.forbid_single_seat_gaps = forbid_gaps;
  return s;
}

using O = Outcome;
constexpr Before kOther = Before::kHeldByOther;
constexpr Before kSelf = Before::kHeldBySelf;
constexpr Before kBooked = Before::kBooked;
constexpr Before kExpired = Before::kExpired;

const std::vector<RuleCase>& Cases() {
  static const std::vector<RuleCase> kCases = {
      {"free seats are held", false, {}, {"E6", "E7"}, 0, "", O{O::kHeld, {"E6", "E7"}}},
      {"a seat another holds is taken", false, {{"E6", kOther}}, {"E6", "E7"}, 0, "",
       O{O::kTaken, {"E6"}}},
      {"an expired hold counts as free", false, {{"E6", kExpired}}, {"E6", "E7"}, 0, "",
       O{O::kHeld, {"E6", "E7"}}},
      {"a booked seat is taken", false, {{"E7", kBooked}}, {"E6", "E7"}, 0, "",
       O{O::kTaken, {"E7"}}},
      {"the customer's own hold is taken too", false, {{"E6", kSelf}}, {"E6", "E7"}, 0, "",
       O{O::kTaken, {"E6"}}},
      {"taken seats are named, all of them", false, {{"E6", kOther}, {"E8", kBooked}},
       {"E6", "E7", "E8"}, 0, "", O{O::kTaken, {"E6", "E8"}}},
      {"gaps allowed: a seat may be left alone", false, {}, {"E8", "E9"}, 0, "",
       O{O::kHeld, {"E8", "E9"}}},
      {"gap rule: the row's last seat left alone", true, {}, {"E8", "E9"}, 0, "",
       O{O::kGap, {"E10"}}},
      {"gap rule: the seat before an aisle left alone", true, {}, {"E3", "E4"}, 0, "",
       O{O::kGap, {"E5"}}},
      {"gap rule: a seat between the pick and a held one", true, {{"E8", kOther}}, {"E6"}, 0,
       "", O{O::kGap, {"E7"}}},
      {"gap rule: between the pick and a booked one", true, {{"E8", kBooked}}, {"E6"}, 0, "",
       O{O::kGap, {"E7"}}},
      {"gap rule: an expired hold beyond is free", true, {{"E8", kExpired}}, {"E6"}, 0, "",
       O{O::kHeld, {"E6"}}},
      {"gap rule: filling up to a taken seat strands nothing", true, {{"E8", kOther}},
       {"E6", "E7"}, 0, "", O{O::kHeld, {"E6", "E7"}}},
      {"gap rule: taken seats are named before gaps", true, {{"E9", kOther}}, {"E8", "E9"}, 0,
       "", O{O::kTaken, {"E9"}}},
      {"best: nearest the row's centre, the lower on a tie", false, {}, {}, 2, "standard",
       O{O::kHeld, {"E4", "E5"}}},
      {"best: never a wheelchair place", false, {{"E4", kOther}, {"E6", kOther}, {"E8", kOther}},
       {}, 2, "standard", O{O::kHeld, {"E10", "E9"}}},  // (codes in byte order)
      {"best: a taken block is skipped", false, {{"E4", kOther}}, {}, 2, "standard",
       O{O::kHeld, {"E6", "E7"}}},
      {"best: an expired hold is free", false, {{"E4", kExpired}}, {}, 2, "standard",
       O{O::kHeld, {"E4", "E5"}}},
      {"best: the centre block when gaps are allowed", false, {}, {}, 2, "premium",
       O{O::kHeld, {"F5", "F6"}}},
      {"best: under the gap rule, the best block that strands none", true, {}, {}, 2,
       "premium", O{O::kHeld, {"F4", "F5"}}},
      {"best: none free", false, {{"E8", kBooked}}, {}, 5, "standard", O{O::kNoBlock, {}}},
      {"quota: 8 seats at most per customer and showtime", false,
       {{"F1", kSelf}, {"F2", kSelf}, {"F3", kSelf}, {"F4", kSelf}, {"F5", kSelf},
        {"F6", kSelf}, {"F7", kSelf}},
       {"E6", "E7"}, 0, "", O{O::kQuota, {}}, true},
      {"quota: exactly 8 is allowed", false,
       {{"F1", kSelf}, {"F2", kSelf}, {"F3", kSelf}, {"F4", kSelf}, {"F5", kSelf},
        {"F6", kSelf}},
       {"E6", "E7"}, 0, "", O{O::kHeld, {"E6", "E7"}}, true},
      {"quota: an expired hold does not count", false,
       {{"F1", kSelf}, {"F2", kSelf}, {"F3", kSelf}, {"F4", kSelf}, {"F5", kSelf},
        {"F6", kSelf}, {"F7", kExpired}},
       {"E6", "E7"}, 0, "", O{O::kHeld, {"E6", "E7"}}, true},
  };
  return kCases;
}

class HoldRulesTable : public ::testing::TestWithParam<RulesEngine> {
 protected:
  void SetUp() override {
    if (GetParam() == RulesEngine::kPlpgsql && testing::PostgresUrl().empty()) {
      if (testing::PostgresRequired()) FAIL() << "BOXOFFICE_TEST_PG_URL is not set";
      GTEST_SKIP() << "no PostgreSQL (run through scripts/with-postgres.sh)";
    }
    if (GetParam() == RulesEngine::kLua) {
      if (!testing::RedisInstalled()) {
        if (testing::PostgresRequired()) FAIL() << "redis-server is not installed";
        GTEST_SKIP() << "redis-server is not installed (scripts/deps.sh)";
      }
      redis_ = std::make_unique<testing::RedisServer>();
      ASSERT_TRUE(redis_->ok()) << "redis-server did not start";
      RedisOptions o = *ParseRedisUrl(redis_->url());
      o.connect_timeout = o.command_timeout = o.acquire_timeout = Millis(2'000);
      gate_ = std::make_unique<RedisSeatGate>(std::make_unique<RedisClient>(o),
                                              RedisGateOptions{Millis(100)}, &metrics_);
    }
  }

  // A fresh store of the engine (SQLite for the gate: it only gives the hall's layout).
  std::unique_ptr<Store> NewStore() {
    std::unique_ptr<Store> store;
    if (GetParam() == RulesEngine::kPlpgsql) {
      PgOptions o;
      o.url = testing::FreshPostgresSchemaUrl();
      o.test_clock = &clock_;
      store = std::make_unique<PgStore>(o);
    } else {
      SqliteOptions o;
      o.path = testing::TempDir() + "/rules-" + std::to_string(++stores_) + ".db";
      store = std::make_unique<SqliteStore>(o, &clock_);
    }
    EXPECT_TRUE(store->Migrate().ok());
    return store;
  }

  // Sets a seat's state in the store, as customers would have.
  void PrepareInStore(Store* store, int64_t showtime, const std::string& seat, Before before) {
    const int64_t customer = before == kSelf ? 1 : 2;
    const Millis ttl = before == kExpired ? Millis(1'000) : kTtl;
    auto hold = store->HoldSeats(HoldRequest{NewHoldId(showtime), showtime, customer, {seat}, ttl});
    ASSERT_TRUE(hold.ok()) << seat << ": " << hold.status().message();
    if (before != kBooked) return;
    auto booking = store->StartCheckout(hold->hold_id, customer, kTtl, kMaxLifetime);
    ASSERT_TRUE(booking.ok()) << booking.status().message();
    const std::string session = "cs_" + seat;
    ASSERT_TRUE(store
                    ->AttachPaymentSession(booking->id, session, "https://pay/" + session,
                                           clock_.Now() + Millis(300'000))
                    .ok());
    auto settled = store->SettlePayment({"pay_" + seat, session, std::to_string(booking->id), true,
                                         booking->amount.amount, booking->amount.currency});
    ASSERT_TRUE(settled.ok() && settled.value() == Settlement::kConfirmed) << seat;
  }

  // The same state as Redis keys: a live hold or a booking is a key carrying its hold id;
  // an expired hold a key whose TTL has passed.
  void PrepareInGate(int64_t showtime, const std::string& seat, Before before) {
    const Millis ttl = before == kExpired ? Millis(1) : Millis(60'000);
    ASSERT_EQ(gate_->Claim(showtime, {seat}, "hold-of-" + seat, ttl).verdict,
              SeatGate::Verdict::kClaimed);
  }

  static Outcome FromStore(const Result<Hold>& r) {
    if (r.ok()) {
      auto seats = r->seats;
      std::sort(seats.begin(), seats.end());
      return {O::kHeld, seats};
    }
    auto seats = r.status().seats();
    std::sort(seats.begin(), seats.end());
    switch (r.status().code()) {
      case Code::kConflict:
        return seats.empty() ? O{O::kNoBlock, {}} : O{O::kTaken, seats};
      case Code::kSingleSeatGap:
        return {O::kGap, seats};
      case Code::kHoldLimit:
        return {O::kQuota, {}};
      default:
        ADD_FAILURE() << "unexpected answer: " << r.status().message();
        return {O::kNoBlock, {"?"}};
    }
  }

  static Outcome FromGate(const SeatGate::PicksDecision& d, const HoldRequest& request) {
    if (d.verdict == SeatGate::Verdict::kClaimed) {
      auto seats = request.picks().empty() ? request.seats : request.picks()[d.chosen - 1].seats;
      std::sort(seats.begin(), seats.end());
      return {O::kHeld, seats};
    }
    EXPECT_EQ(d.verdict, SeatGate::Verdict::kTaken) << "the gate did not decide";
    if (request.is_best()) return {O::kNoBlock, {}};
    auto taken = d.taken;
    auto stranded = d.stranded;
    std::sort(taken.begin(), taken.end());
    std::sort(stranded.begin(), stranded.end());
    return taken.empty() ? O{O::kGap, stranded} : O{O::kTaken, taken};
  }

  Outcome Run(const RuleCase& c) {
    auto store = NewStore();
    auto created = store->CreateShowtime(Hall(c.forbid_gaps));
    EXPECT_TRUE(created.ok()) << created.status().message();
    const int64_t st = created.value();
    auto map = store->GetSeatMap(st);
    EXPECT_TRUE(map.ok());
    const HallLayout layout(map.value(), c.forbid_gaps);
    // The gate's keys are named by showtime: each case its own, in the one Redis.
    const int64_t gate_st = 1'000 + ++gate_showtimes_;
    bool expired = false;
    for (const auto& [seat, before] : c.before) {
      if (GetParam() == RulesEngine::kLua) {
        PrepareInGate(gate_st, seat, before);
      } else {
        PrepareInStore(store.get(), st, seat, before);
      }
      expired = expired || before == kExpired;
    }
    if (expired) {
      clock_.Advance(Millis(2'000));
      if (GetParam() == RulesEngine::kLua) std::this_thread::sleep_for(Millis(20));
    }
    HoldRequest request{NewHoldId(st), st, 1, {}, kTtl};
    if (c.seats.empty()) {
      request.best = layout.Best(c.best_count, c.best_category);
    } else {
      request.seats = c.seats;
      std::sort(request.seats.begin(), request.seats.end());
      request.guards = layout.GuardsFor(request.seats);
    }
    if (GetParam() != RulesEngine::kLua) return FromStore(store->HoldSeats(request));
    auto picks = request.is_best() ? request.best
                                   : std::make_shared<const std::vector<SeatPick>>(
                                         std::vector<SeatPick>{{request.seats, request.guards}});
    auto decided = io::RunSync(gate_->AwaitPicks(gate_->SendPicks(gate_st, picks, request.hold_id,
                                                                  Millis(60'000))));
    return FromGate(decided, request);
  }

  ManualClock clock_{kStart};
  Metrics metrics_;
  int stores_ = 0;
  int gate_showtimes_ = 0;
  std::unique_ptr<testing::RedisServer> redis_;
  std::unique_ptr<SeatGate> gate_;
};

TEST_P(HoldRulesTable, EveryEngineDecidesEveryCaseAlike) {
  int ran = 0;
  for (const RuleCase& c : Cases()) {
    if (c.store_only && GetParam() == RulesEngine::kLua) continue;
    SCOPED_TRACE(c.name);
    EXPECT_EQ(Run(c), c.expect) << c.name;
    ++ran;
  }
  EXPECT_GE(ran, 20);
}

INSTANTIATE_TEST_SUITE_P(Engines, HoldRulesTable,
                         ::testing::Values(RulesEngine::kCxx, RulesEngine::kPlpgsql,
                                           RulesEngine::kLua),
                         [](const ::testing::TestParamInfo<RulesEngine>& info) {
                           switch (info.param) {
                             case RulesEngine::kCxx:
                               return std::string("CxxInSqlite");
                             case RulesEngine::kPlpgsql:
                               return std::string("PlpgsqlInPostgres");
                             case RulesEngine::kLua:
                               return std::string("LuaInRedis");
                           }
                           return std::string("?");
                         });

}  // namespace
}  // namespace boxoffice
