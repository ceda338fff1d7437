// DatabaseProbe on a PostgreSQL server of the test's own that goes down and comes back:
// boxoffice_database_up reads 0 once no ping has succeeded for three rounds, and 1 again
// after the first ping that succeeds.
#include "jobs/database_probe.h"

#include <gtest/gtest.h>

#include <thread>

#include "store/pg_store.h"
#include "support/pg_server.h"
#include "support/test_env.h"

namespace boxoffice {
namespace {

TEST(DatabaseProbe, TheGaugeFollowsTheDatabaseDownAndBackUp) {
  if (testing::PostgresUrl().empty()) {
    if (testing::PostgresRequired()) FAIL() << "BOXOFFICE_TEST_PG_URL is not set";
    GTEST_SKIP() << "no PostgreSQL (run through scripts/with-postgres.sh)";
  }
  testing::PostgresServer server;
  ASSERT_TRUE(server.ok()) << "could not start a PostgreSQL server";
  PgOptions o;
  o.url = server.url();
  PgStore store(o);
  Metrics metrics;
  // (One second: the gauge must still read 1 right after a ping however slow a sanitized
  // build is, and 0 three seconds after the last good one.)
  const Millis interval{1'000};
  DatabaseProbe probe(&store, interval, &metrics, "shard=\"1\"");
  auto gauge = [&] {
    const std::string text = metrics.Render();
    const std::string series = "boxoffice_database_up{shard=\"1\"} ";
    const size_t at = text.find(series);
    return at == std::string::npos ? std::string("missing") : text.substr(at + series.size(), 1);
  };
  EXPECT_EQ(gauge(), "1") << "a probe starts with the database the service just opened";
  ASSERT_TRUE(probe.RunOnce().ok());
  EXPECT_EQ(gauge(), "1");

  server.Stop();
  EXPECT_FALSE(probe.RunOnce().ok());
  EXPECT_EQ(gauge(), "1") << "one failed ping is not yet an outage";
  std::this_thread::sleep_for(interval * DatabaseProbe::kMissedRounds + Millis(500));
  EXPECT_EQ(gauge(), "0");

  ASSERT_TRUE(server.Start());
  // (The pool may hold a connection the restart dropped: the next ping replaces it.)
  bool back = false;
  for (int i = 0; i < 50 && !back; ++i) {
    back = probe.RunOnce().ok();
    if (!back) std::this_thread::sleep_for(Millis(100));
  }
  EXPECT_TRUE(back);
  EXPECT_EQ(gauge(), "1");
}

}  // namespace
}  // namespace boxoffice
