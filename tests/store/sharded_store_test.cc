// What sharding adds to the store contract (which also runs whole on two shards,
// Engine::kShards): ids that name their shard, lists merged across shards, shard numbers
// that follow a database whatever the order of --db, and a single database that grows
// into shards keeping its ids.
#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <algorithm>
#include <set>

#include "store/shards.h"
#include "store/store_fixture.h"
#include "support/loop_thread.h"

namespace boxoffice {
namespace {

TEST(ShardIds, IdsAndUuidsNameTheirShard) {
  EXPECT_EQ(ShardOfId(1), 0);
  EXPECT_EQ(ShardOfId(kShardIdSpan - 1), 0);
  EXPECT_EQ(ShardOfId(kShardIdSpan + 1), 1);
  EXPECT_EQ(ShardOfId(FirstIdOfShard(8191)), 8191);
  EXPECT_EQ(ShardOfId(LastIdOfShard(8191)), 8191);
  EXPECT_LT(LastIdOfShard(kMaxShards - 1), int64_t{1} << 53) << "exact in a browser";
  EXPECT_EQ(ShardOfId(0), std::nullopt);
  EXPECT_EQ(ShardOfId(-5), std::nullopt);
  for (int shard : {0, 1, 2, 255, 8191}) {
    const std::string uuid = NewUuidOnShard(shard);
    EXPECT_TRUE(IsUuid(uuid)) << uuid;
    EXPECT_EQ(ShardOfUuid(uuid), shard) << uuid;
    EXPECT_EQ(uuid[14], shard == 0 ? '4' : '8') << uuid;
    EXPECT_TRUE(uuid[19] == '8' || uuid[19] == '9' || uuid[19] == 'a' || uuid[19] == 'b')
        << "RFC 9562 variant: " << uuid;
  }
  EXPECT_EQ(ShardOfUuid(NewUuid()), 0) << "a random UUID is shard 0's (a single database's)";
  EXPECT_EQ(ShardOfUuid("not-a-uuid"), 0);
  EXPECT_EQ(ShardOfUuid(NewHoldId(FirstIdOfShard(3) + 41)), 3);
  EXPECT_EQ(ShardOfUuid(NewHoldId(-1)), 0);
}

class Shards : public StoreContract {
 protected:
  ShardedStore& sharded() { return *dynamic_cast<ShardedStore*>(store_.get()); }

  // A fresh database, migrated, not numbered.
  std::unique_ptr<PgStore> FreshDatabase(std::string* url) {
    PgOptions o;
    o.url = *url = testing::FreshPostgresSchemaUrl();
    o.test_clock = &clock_;
    auto db = std::make_unique<PgStore>(o);
    EXPECT_TRUE(db->Migrate().ok());
    return db;
  }
  std::unique_ptr<PgStore> Open(const std::string& url) {
    PgOptions o;
    o.url = url;
    o.test_clock = &clock_;
    return std::make_unique<PgStore>(o);
  }
};

TEST_P(Shards, ShowtimesFillTheShardsEvenlyAndEverythingOfOneLivesOnItsShard) {
  std::set<int> used;
  for (int i = 0; i < 4; ++i) {
    const int64_t st = MakeShowtime({{"A", 4}});
    ASSERT_TRUE(ShardOfId(st).has_value());
    used.insert(*ShardOfId(st));
    auto hold = TryHold(st, 1, {"A1", "A2"});
    ASSERT_TRUE(hold.ok()) << hold.status().message();
    EXPECT_EQ(ShardOfUuid(hold->hold_id), *ShardOfId(st));
    auto booking = store_->StartCheckout(hold->hold_id, 1, kTtl, kMaxLifetime);
    ASSERT_TRUE(booking.ok()) << booking.status().message();
    EXPECT_EQ(ShardOfId(booking->id), ShardOfId(st)) << "the reference names the shard";
    // The shard holds it all; the other knows nothing of it.
    for (const auto& shard : sharded().shards()) {
      const bool home = shard.number == *ShardOfId(st);
      EXPECT_EQ(shard.store->GetShowtime(st).ok(), home);
      EXPECT_EQ(shard.store->GetHold(hold->hold_id, 1).ok(), home);
      EXPECT_EQ(shard.store->GetBooking(booking->id, 1).ok(), home);
    }
  }
  EXPECT_EQ(used, (std::set<int>{1, 2}));
  EXPECT_EQ(store_->CountShowtimes().value(), 4);
  // Ids naming a shard that does not exist are simply unknown.
  EXPECT_EQ(store_->GetShowtime(FirstIdOfShard(7)).status().code(), Code::kNotFound);
  EXPECT_EQ(store_->GetHold(NewUuidOnShard(7), 1).status().code(), Code::kNotFound);
  EXPECT_EQ(store_->GetBooking(FirstIdOfShard(0), 1).status().code(), Code::kNotFound);
  // A hold id must name its showtime's shard.
  const int64_t st = MakeShowtime({{"B", 2}});
  HoldRequest wrong{NewUuidOnShard(*ShardOfId(st) == 1 ? 2 : 1), st, 1, {"B1"}, kTtl};
  EXPECT_EQ(store_->HoldSeats(wrong).status().code(), Code::kInvalid);
}

TEST_P(Shards, ListsMergeAcrossShardsInOrderPageByPage) {
  const Instant day = kStart + Millis(86'400'000);
  std::vector<std::pair<Instant, int64_t>> made;
  for (int i = 0; i < 9; ++i) {
    // Several at the same time, so the id breaks ties across shards.
    const Instant at = day + Millis((i % 4) * 3'600'000);
    made.emplace_back(at, MakeShowtime({{"A", 2}}, at));
  }
  std::sort(made.begin(), made.end());
  std::vector<std::pair<Instant, int64_t>> seen;
  ShowtimeQuery q;
  q.limit = 2;
  for (int page = 0; page < 10; ++page) {
    auto rows = store_->ListShowtimes(q);
    ASSERT_TRUE(rows.ok()) << rows.status().message();
    for (const Showtime& s : rows.value()) seen.emplace_back(s.starts_at, s.id);
    if (rows->size() < 2) break;
    q.after = std::make_pair(rows->back().starts_at, rows->back().id);
  }
  EXPECT_EQ(seen, made);
}

TEST_P(Shards, NumbersFollowTheDatabaseWhateverTheOrderOfTheUrls) {
  const int64_t st = MakeShowtime({{"A", 2}});
  auto hold = TryHold(st, 5, {"A1"});
  ASSERT_TRUE(hold.ok());
  std::vector<std::unique_ptr<PgStore>> reversed;
  reversed.push_back(Open(pg_urls_[1]));
  reversed.push_back(Open(pg_urls_[0]));
  ShardedStore again(std::move(reversed));
  ASSERT_TRUE(again.Migrate().ok());
  EXPECT_EQ(again.shards().front().number, 1);
  EXPECT_EQ(again.GetShowtime(st).value().id, st);
  EXPECT_EQ(again.GetHold(hold->hold_id, 5).value().seats, std::vector<std::string>{"A1"});
  // The same database twice is refused.
  std::vector<std::unique_ptr<PgStore>> twice;
  twice.push_back(Open(pg_urls_[0]));
  twice.push_back(Open(pg_urls_[0]));
  ShardedStore doubled(std::move(twice));
  EXPECT_EQ(doubled.Migrate().code(), Code::kInvalid);
}

TEST_P(Shards, ASingleDatabaseGrowsIntoShardsKeepingItsIds) {
  std::string old_url, new_url;
  auto single = FreshDatabase(&old_url);
  NewShowtime s = PricedLayout();
  const int64_t old_id = single->CreateShowtime(s).value();
  EXPECT_EQ(ShardOfId(old_id), 0);
  single.reset();
  // Listed second, the database with showtimes still becomes shard 0; the new one shard 1.
  std::vector<std::unique_ptr<PgStore>> dbs;
  dbs.push_back(FreshDatabase(&new_url));
  dbs.push_back(Open(old_url));
  ShardedStore grown(std::move(dbs));
  ASSERT_TRUE(grown.Migrate().ok());
  ASSERT_EQ(grown.shards().size(), 2u);
  EXPECT_EQ(grown.shards()[0].store->url(), old_url);
  EXPECT_EQ(grown.GetShowtime(old_id).value().id, old_id);
  const int64_t a = grown.CreateShowtime(s).value();
  EXPECT_EQ(ShardOfId(a), 1) << "the new shard, which has the fewest showtimes";
  const int64_t b = grown.CreateShowtime(s).value();
  EXPECT_EQ((std::set<int>{*ShardOfId(a), *ShardOfId(b)}), (std::set<int>{0, 1}));
  EXPECT_GT(std::max(a, b), kShardIdSpan);
  // A database with showtimes cannot take another number than 0.
  std::string third;
  auto other = FreshDatabase(&third);
  ASSERT_TRUE(other->CreateShowtime(s).ok());
  EXPECT_EQ(other->TakeShardNumber(4).status().code(), Code::kInvalid);
  // And a shard refuses ids of another shard (the CHECK of migration 0021).
  PGconn* conn = PQconnectdb(new_url.c_str());
  PGresult* r =
      PQexec(conn,
             "INSERT INTO showtime (showtime_id, title, cinema, hall, starts_at, seat_count) "
             "VALUES (5, 'x', 'y', 'z', now(), 1)");
  EXPECT_NE(PQresultStatus(r), PGRES_COMMAND_OK);
  EXPECT_NE(std::string(PQresultErrorMessage(r)).find("on_this_shard"), std::string::npos)
      << PQresultErrorMessage(r);
  PQclear(r);
  PQfinish(conn);
}

// `boxoffice seed`'s batches: all or nothing, once per name, on shard route mod N, and read
// back exactly like showtimes created one by one.
TEST_P(Shards, SeedBatchesAreWrittenOnceAndReadLikeCreatedShowtimes) {
  NewShowtime layout = PricedLayout();
  const int64_t created = store_->CreateShowtime(layout).value();
  std::vector<NewShowtime> batch(3, layout);
  for (int route : {0, 1}) {
    const std::string name = "test batch " + std::to_string(route);
    auto first = store_->SeedBatch(name, batch, route);
    ASSERT_TRUE(first.ok()) << first.status().message();
    EXPECT_TRUE(first.value());
    auto again = store_->SeedBatch(name, batch, route);
    ASSERT_TRUE(again.ok());
    EXPECT_FALSE(again.value()) << "a batch is written once";
    const int shard = sharded().shards()[route].number;
    EXPECT_EQ(sharded().shards()[route].store->CountShowtimes().value(),
              3 + (ShardOfId(created) == shard ? 1 : 0));
  }
  EXPECT_EQ(store_->CountShowtimes().value(), 7);
  const SeatMap expected = store_->GetSeatMap(created).value();
  ShowtimeQuery all;
  all.limit = 100;
  for (const Showtime& st : store_->ListShowtimes(all).value()) {
    EXPECT_EQ(st.prices.at("premium").amount, 1650);
    EXPECT_EQ(st.seat_count, 20);
    const SeatMap map = store_->GetSeatMap(st.id).value();
    ASSERT_EQ(map.seats.size(), expected.seats.size());
    for (size_t i = 0; i < map.seats.size(); ++i) {
      EXPECT_EQ(map.seats[i].code, expected.seats[i].code);
      EXPECT_EQ(map.seats[i].category, expected.seats[i].category);
      EXPECT_EQ(map.seats[i].accessible, expected.seats[i].accessible);
      EXPECT_EQ(map.seats[i].aisle_after, expected.seats[i].aisle_after);
    }
    auto hold = TryHold(st.id, 3, {"E1", "E2"});
    EXPECT_TRUE(hold.ok()) << hold.status().message();
  }
}

// A payment for a booking of a shard this instance does not know (one just added, its --db
// not given to every instance yet) is refused with kUnavailable, so the gateway delivers it
// again: recorded as unknown it would be refunded while its own shard confirms it. The
// same for a database alone that is another shard than the booking's.
TEST_P(Shards, APaymentForAShardNotKnownHereIsRefusedNotRefunded) {
  const Booking b = CheckedOut("ses_1");
  const int home = *ShardOfId(b.id);
  const int other = home == 1 ? 2 : 1;
  PaymentReport paid{"pay_1", "ses_1", std::to_string(b.id), true, b.amount.amount, "EUR"};
  // Only the other shard's database, as an instance started before this shard was added.
  std::vector<std::unique_ptr<PgStore>> one;
  PgOptions o;
  o.url = pg_urls_[static_cast<size_t>(other - 1)];
  o.test_clock = &clock_;
  one.push_back(std::make_unique<PgStore>(o));
  ShardedStore partial(std::move(one));
  ASSERT_TRUE(partial.Migrate().ok());
  EXPECT_EQ(partial.SettlePayment(paid).status().code(), Code::kUnavailable);
  PgStore alone(o);
  ASSERT_TRUE(alone.Migrate().ok());
  EXPECT_EQ(alone.SettlePayment(paid).status().code(), Code::kUnavailable);
  {
    testing::LoopThread loop;
    Booking confirmed;
    auto fast = loop.Run(alone.TryConfirmPaymentAsync(paid, &confirmed));
    ASSERT_TRUE(fast.ok());
    EXPECT_FALSE(fast.value().has_value()) << "left to the general path, which refuses it";
  }
  for (Store* db : Databases()) EXPECT_TRUE(db->PendingRefunds(10)->empty()) << "nothing refunded";
  // Its own shard confirms it; a reference no shard could have issued is refunded.
  EXPECT_EQ(store_->SettlePayment(paid).value(), Settlement::kConfirmed);
  PaymentReport stray{"pay_2", "ses_2", "not-a-booking", true, 500, "EUR"};
  EXPECT_EQ(store_->SettlePayment(stray).value(), Settlement::kUnknownRecorded);
  PaymentReport beyond{"pay_3", "ses_3", "9007199254740993", true, 500, "EUR"};  // 2^53 + 1
  EXPECT_EQ(store_->SettlePayment(beyond).value(), Settlement::kUnknownRecorded);
}

INSTANTIATE_TEST_SUITE_P(Engines, Shards, ::testing::Values(Engine::kShards), EngineName);

}  // namespace
}  // namespace boxoffice
