// `serve` on two PostgreSQL shards on two servers, one of which goes down: the other
// shard's showtimes keep selling, the stopped shard's answer 503, /readyz names it, and
// everything comes back once it is up again.
#include "store/shards.h"

#include <set>

#include "e2e/e2e_fixture.h"
#include "support/pg_server.h"

namespace boxoffice::e2e {
namespace {

class ShardDown : public ::testing::Test {
 protected:
  void SetUp() override {
    if (testing::PostgresUrl().empty()) {
      if (testing::PostgresRequired()) FAIL() << "BOXOFFICE_TEST_PG_URL is not set";
      GTEST_SKIP() << "no PostgreSQL (run through scripts/with-postgres.sh)";
    }
    ASSERT_TRUE(second_.ok()) << "could not start a second PostgreSQL server";
  }
  HttpResult Call(const std::string& method, const std::string& target,
                  const std::string& body = "",
                  const std::vector<std::pair<std::string, std::string>>& headers = {}) {
    return HttpCall(service_->port(), method, target, body, headers);
  }
  HttpResult Hold(int64_t showtime, int64_t customer, const std::string& seat) {
    return Call("POST", "/showtimes/" + std::to_string(showtime) + "/holds",
                R"({"seats": [")" + seat + R"("]})", {Bearer(Token(customer))});
  }

  testing::PostgresServer second_;
  std::unique_ptr<Service> service_;
};

TEST_F(ShardDown, TheOtherShardKeepsSellingAndTheStoppedOneComesBack) {
  const std::string first = testing::FreshPostgresSchemaUrl();
  service_ = std::make_unique<Service>(first + " " + second_.url(),
                                       std::vector<std::string>{"--sweep-interval", "1s"});
  // Each new showtime goes to the shard with the fewest: one on each.
  std::vector<int64_t> showtimes;
  for (int i = 0; i < 2; ++i) {
    auto created = Call("POST", "/admin/showtimes", kLayout, {Bearer(Token(1, true))});
    ASSERT_EQ(created.status, 201) << created.body;
    showtimes.push_back(json::parse(created.body)["showtimeId"].get<int64_t>());
  }
  // Which number the second server's database took (numbers follow each database's random
  // identity, not the order of --db).
  PgOptions o;
  o.url = second_.url();
  const int stopped = PgStore(o).ShardNumber().value().value();
  const int running = 1 - stopped;
  ASSERT_EQ((std::set<int>{*ShardOfId(showtimes[0]), *ShardOfId(showtimes[1])}),
            (std::set<int>{0, 1}));
  const int64_t up = *ShardOfId(showtimes[0]) == running ? showtimes[0] : showtimes[1];
  const int64_t down = up == showtimes[0] ? showtimes[1] : showtimes[0];
  const json all_ok = {{"0", "ok"}, {"1", "ok"}};
  const json one_down = {{std::to_string(running), "ok"}, {std::to_string(stopped), "down"}};
  ASSERT_EQ(Hold(up, 2, "E1").status, 201);
  ASSERT_EQ(Hold(down, 2, "E1").status, 201);
  auto ready = Call("GET", "/readyz");
  EXPECT_EQ(ready.status, 200) << ready.body;
  EXPECT_EQ(json::parse(ready.body)["shards"], all_ok);

  second_.Stop();
  // Shard 0 sells on; shard 1's showtime answers 503 (never a wrong answer, never a hang).
  auto held = Hold(up, 3, "E2");
  EXPECT_EQ(held.status, 201) << held.body;
  EXPECT_EQ(Call("GET", "/showtimes/" + std::to_string(up)).status, 200);
  auto refused = Hold(down, 3, "E2");
  EXPECT_EQ(refused.status, 503) << refused.body;
  EXPECT_EQ(json::parse(refused.body).value("code", ""), "UNAVAILABLE");
  EXPECT_EQ(Call("GET", "/showtimes/" + std::to_string(down)).status, 503);
  ready = Call("GET", "/readyz");
  EXPECT_EQ(ready.status, 200) << "the instance still serves shard 0: " << ready.body;
  EXPECT_EQ(json::parse(ready.body)["shards"], one_down);
  EXPECT_EQ(json::parse(ready.body)["database"], "degraded");

  ASSERT_TRUE(second_.Start());
  // Its connections are opened again as requests need them.
  int status = 0;
  for (int i = 0; i < 100 && status != 201; ++i) {
    status = Hold(down, 3, "E2").status;
    if (status != 201) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(status, 201);
  EXPECT_EQ(Hold(down, 4, "E1").status, 409) << "the hold from before the stop is still there";
  ready = Call("GET", "/readyz");
  EXPECT_EQ(json::parse(ready.body)["shards"], all_ok);
  // Each shard's audit is clean.
  service_.reset();
  std::string audit;
  if (FILE* p = popen((std::string(BOXOFFICE_BINARY) + " audit --db '" + first + " " +
                       second_.url() + "' 2>/dev/null")
                          .c_str(),
                      "r")) {
    char buf[512];
    while (fgets(buf, sizeof buf, p)) audit += buf;
    pclose(p);
  }
  EXPECT_NE(audit.find("result audit_shard0 violations=0 "), std::string::npos) << audit;
  EXPECT_NE(audit.find("result audit_shard1 violations=0 "), std::string::npos) << audit;
}

// `boxoffice seed` at chain scale on two shards: every batch once, half on each shard, and
// a second run (as after an interruption) writes nothing again.
TEST(ChainSeed, WritesEveryBatchOnceAcrossTheShards) {
  if (testing::PostgresUrl().empty()) {
    if (testing::PostgresRequired()) FAIL() << "BOXOFFICE_TEST_PG_URL is not set";
    GTEST_SKIP() << "no PostgreSQL (run through scripts/with-postgres.sh)";
  }
  const std::string db =
      testing::FreshPostgresSchemaUrl() + " " + testing::FreshPostgresSchemaUrl();
  auto seed = [&] {
    std::string out;
    const std::string line = std::string(BOXOFFICE_BINARY) + " seed --db '" + db +
                             "' --cinemas 3 --halls-per-cinema 2 --days 2 --from 2031-03-01 "
                             "2>/dev/null";
    if (FILE* p = popen(line.c_str(), "r")) {
      char buf[512];
      while (fgets(buf, sizeof buf, p)) out += buf;
      pclose(p);
    }
    return out;
  };
  // 3 cinemas × 2 days = 6 batches of 2 halls × 5 showtimes (96 + 140 seats each hall).
  const std::string first = seed();
  EXPECT_NE(first.find("result seed showtimes=60 seats=7080 "), std::string::npos) << first;
  EXPECT_NE(first.find("batches_written=6 batches_skipped=0"), std::string::npos) << first;
  const std::string again = seed();
  EXPECT_NE(again.find("batches_written=0 batches_skipped=6"), std::string::npos) << again;
  std::istringstream urls(db);
  std::string url;
  for (int shard = 0; urls >> url; ++shard) {
    PgOptions o;
    o.url = url;
    PgStore store(o);
    EXPECT_EQ(store.CountShowtimes().value(), 30) << "shard " << shard;
  }
}

}  // namespace
}  // namespace boxoffice::e2e
