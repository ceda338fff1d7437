// The fixture of the store contract suites: a fresh store on each engine per test, with
// a ManualClock as its time source (PostgreSQL gets a fresh schema and the same clock).
#pragma once

#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <sqlite3.h>

#include <algorithm>
#include <map>
#include <memory>

#include "core/crypto.h"
#include "store/pg_store.h"
#include "store/sharded_store.h"
#include "store/shards.h"
#include "store/sqlite_store.h"
#include "support/engines.h"
#include "support/test_env.h"

namespace boxoffice {

const Instant kStart = FromEpochMs(1'900'000'000'000);
constexpr Millis kTtl{10 * 60'000};
constexpr Millis kMaxLifetime{20 * 60'000};
constexpr Millis kLease{30'000};  // a checkout key's claim

// kShards here: two schemas behind a ShardedStore, numbered 1 and 2 so that every id and
// hold id says its shard (shard 0's look like a single database's).
using testing::AllEngines;
using testing::Engine;
using testing::EngineName;

// Rows E (standard, 12.50 EUR; wheelchair places E1 and E2, an aisle after E5) and F
// (premium, 16.50 EUR; aisles after F3 and F7), ten seats each.
inline NewShowtime PricedHall() {
  NewShowtime s;
  s.title = "Dune: Part Three";
  s.cinema = "Odeon";
  s.hall = "Screen 1";
  s.starts_at = kStart + Millis(86'400'000);
  s.rows = {{"E", 10, "standard", {5}, {1, 2}}, {"F", 10, "premium", {3, 7}}};
  s.prices = {{"standard", {1250, "EUR"}}, {"premium", {1650, "EUR"}}};
  return s;
}

class StoreContract : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override {
    if (GetParam() != Engine::kSqlite && testing::PostgresUrl().empty()) {
      if (testing::PostgresRequired()) FAIL() << "BOXOFFICE_TEST_PG_URL is not set";
      GTEST_SKIP() << "no PostgreSQL (run through scripts/with-postgres.sh)";
    }
    store_ = NewStore();
  }

  // A fresh, migrated store of this test's engine on the test's clock.
  std::unique_ptr<Store> NewStore() {
    std::unique_ptr<Store> store;
    if (GetParam() == Engine::kSqlite) {
      SqliteOptions o;
      o.path = sqlite_path_ = testing::TempDir() + "/store.db";
      store = std::make_unique<SqliteStore>(o, &clock_);
    } else if (GetParam() == Engine::kPostgres) {
      PgOptions o;
      o.url = pg_url_ = testing::FreshPostgresSchemaUrl();
      pg_urls_ = {pg_url_};
      o.test_clock = &clock_;
      store = std::make_unique<PgStore>(o);
    } else {
      std::vector<std::unique_ptr<PgStore>> shards;
      pg_urls_.clear();
      for (int number : {1, 2}) {
        PgOptions o;
        o.url = pg_url_ = testing::FreshPostgresSchemaUrl();
        pg_urls_.push_back(pg_url_);
        o.test_clock = &clock_;
        auto shard = std::make_unique<PgStore>(o);
        EXPECT_TRUE(shard->Migrate().ok());
        auto taken = shard->TakeShardNumber(number);
        EXPECT_TRUE(taken.ok() && taken.value() == number);
        shards.push_back(std::move(shard));
      }
      store = std::make_unique<ShardedStore>(std::move(shards));
    }
    EXPECT_TRUE(store->Migrate().ok());
    return store;
  }

  // A showtime whose rows are given as {"F", 10}: seats F1..F10, all "standard".
  int64_t MakeShowtime(std::vector<std::pair<std::string, int>> rows,
                       Instant starts = kStart + Millis(86'400'000),
                       const std::string& cinema = "Odeon") {
    NewShowtime s;
    s.title = "Dune: Part Three";
    s.cinema = cinema;
    s.hall = "Screen 1";
    s.starts_at = starts;
    for (auto& [row, n] : rows) s.rows.push_back(RowLayout{row, n, "standard"});
    s.prices["standard"] = Price{1250, "EUR"};
    auto id = store_->CreateShowtime(s);
    EXPECT_TRUE(id.ok()) << id.status().message();
    return id.ok() ? id.value() : 0;
  }

  static NewShowtime PricedLayout() { return PricedHall(); }
  int64_t MakePricedShowtime() {
    auto id = store_->CreateShowtime(PricedLayout());
    EXPECT_TRUE(id.ok());
    return id.value();
  }

  Result<Hold> TryHold(int64_t showtime, int64_t customer, std::vector<std::string> seats,
                       Millis ttl = kTtl) {
    std::sort(seats.begin(), seats.end());
    return store_->HoldSeats(HoldRequest{NewHoldId(showtime), showtime, customer, seats, ttl});
  }

  // The databases under the store: its shards, or the store itself.
  std::vector<Store*> Databases() {
    std::vector<Store*> out;
    for (const Store::Database& db : store_->Databases()) out.push_back(db.store);
    return out;
  }
  // The outbox of an engine of one database (each shard has its own: PendingEventsOfAll).
  OutboxStore* Outbox() {
    const auto dbs = store_->Databases();
    EXPECT_EQ(dbs.size(), 1u) << "the outbox of one database";
    return dbs.front().outbox;
  }
  // A booking reference no booking has, on a shard the store has (the shards engine's are
  // 1 and 2; a reference of a shard it lacks is refused, not recorded).
  std::string NoSuchBooking() const {
    return std::to_string(GetParam() == Engine::kShards ? FirstIdOfShard(1) + 999'998 : 999'999);
  }

  // Unpublished outbox rows of every database (each shard has its own outbox).
  Result<std::vector<OutboxEvent>> PendingEventsOfAll(int limit) {
    std::vector<OutboxEvent> all;
    for (const Store::Database& db : store_->Databases()) {
      auto some = db.outbox->PendingEvents(0, limit);
      if (!some.ok()) return some.status();
      all.insert(all.end(), some->begin(), some->end());
    }
    return all;
  }

  std::map<std::string, SeatOwner> Owners(int64_t showtime) {
    auto owners = store_->GetSeatOwners(showtime);
    EXPECT_TRUE(owners.ok());
    std::map<std::string, SeatOwner> out;
    for (auto& o : owners.value()) out[o.code] = o;
    return out;
  }

  // Runs SQL on the last store's database (each of its shards) behind the store's back (to
  // break an invariant on purpose).
  void RawSql(const std::string& sql) {
    if (GetParam() == Engine::kSqlite) {
      sqlite3* db = nullptr;
      ASSERT_EQ(sqlite3_open(sqlite_path_.c_str(), &db), SQLITE_OK);
      char* error = nullptr;
      EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
          << (error ? error : "");
      sqlite3_free(error);
      sqlite3_close(db);
    } else {
      for (const std::string& url : pg_urls_) {
        PGconn* conn = PQconnectdb(url.c_str());
        PGresult* r = PQexec(conn, sql.c_str());
        EXPECT_EQ(PQresultStatus(r), PGRES_COMMAND_OK) << PQerrorMessage(conn);
        PQclear(r);
        PQfinish(conn);
      }
    }
  }

  // A hold of `seats` by `customer`, checked out, with its payment session attached
  // (none when session is empty); its hold id in *hold_id if asked.
  Booking CheckedOutOn(int64_t showtime, int64_t customer, const std::vector<std::string>& seats,
                       const std::string& session, std::string* hold_id = nullptr) {
    auto hold = TryHold(showtime, customer, seats);
    EXPECT_TRUE(hold.ok()) << hold.status().message();
    if (!hold.ok()) return Booking{};
    if (hold_id) *hold_id = hold->hold_id;
    auto b = store_->StartCheckout(hold->hold_id, customer, kTtl, kMaxLifetime);
    EXPECT_TRUE(b.ok()) << b.status().message();
    if (!b.ok()) return Booking{};
    if (!session.empty()) {
      EXPECT_TRUE(store_
                      ->AttachPaymentSession(b->id, session, "https://pay/" + session,
                                             clock_.Now() + Millis(5 * 60'000))
                      .ok());
    }
    return b.value();
  }
  // A hold of E1+F1 by customer 1 on a new priced showtime (st_, hold_id_), checked out by
  // the general path; with its payment session attached when one is named.
  Booking CheckedOut(const std::string& session = "") {
    st_ = MakePricedShowtime();
    return CheckedOutOn(st_, 1, {"E1", "F1"}, session, &hold_id_);
  }

  ManualClock clock_{kStart};
  std::unique_ptr<Store> store_;
  int64_t st_ = 0;  // CheckedOut's showtime
  std::string hold_id_;
  std::string pg_url_;                // the last PostgreSQL database made
  std::vector<std::string> pg_urls_;  // every PostgreSQL database of the last store
  std::string sqlite_path_;
};

}  // namespace boxoffice
