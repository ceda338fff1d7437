// PostgreSQL in pipeline mode on an I/O loop, and the holds it batches:
//  * statements sent together are answered each with its own result, and one that fails
//    fails only itself;
//  * a connection that breaks fails what it carried with kUnavailable, and the next
//    statement reconnects;
//  * connections keep alive, and a host named by name is resolved off the loops;
//  * a statement's time is counted from when the server starts on it (when it becomes the
//    head of its connection's queue), so statements queued behind slow ones are never
//    failed for their wait; only a head that is overdue closes the connection.
// (The holds it batches: tests/store/hold_batch_contract_test.cc.)
#include "store/pg_pipeline.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <future>

#include "store/pg_connect.h"
#include "store/pg_connection.h"
#include "store/pg_store.h"
#include "support/loop_thread.h"
#include "support/tcp_proxy.h"
#include "support/test_env.h"

namespace boxoffice {
namespace {

using testing::LoopThread;

constexpr Sql kOne{"test_one", "SELECT $1::int"};
constexpr Sql kDivide{"test_divide", "SELECT 10 / $1::int"};
constexpr Sql kSleep{"test_sleep", "SELECT pg_sleep($1::float8)"};
constexpr char kApplication[] = "boxoffice-pipeline-test";

#define REQUIRE_POSTGRES()                                                         \
  if (testing::PostgresUrl().empty()) {                                            \
    if (testing::PostgresRequired()) FAIL() << "BOXOFFICE_TEST_PG_URL is not set"; \
    GTEST_SKIP() << "no PostgreSQL (run through scripts/with-postgres.sh)";        \
  }

PgPipelineOptions Options() {
  PgPipelineOptions o;
  o.url = testing::PostgresUrl();
  o.application_name = kApplication;
  return o;
}

io::asio::awaitable<Result<PgResultPtr>> ExecOne(PgPipeline* pipeline, const Sql* sql,
                                                 std::string arg) {
  std::vector<Param> params = {Param(std::move(arg))};
  co_return co_await pipeline->Exec(*sql, std::move(params));
}

// Starts work on the loop now; its result comes through the future.
template <class T>
io::asio::awaitable<void> Deliver(io::asio::awaitable<T> work, std::promise<T>* out) {
  T value = co_await std::move(work);
  out->set_value(std::move(value));
}

template <class T>
std::future<T> Spawn(LoopThread& loop, io::asio::awaitable<T> work, std::promise<T>* promise) {
  auto future = promise->get_future();
  io::asio::co_spawn(loop.context(), Deliver(std::move(work), promise), io::asio::detached);
  return future;
}

std::string Value(const Result<PgResultPtr>& r) { return PQgetvalue(r.value().get(), 0, 0); }

TEST(PgPipeline, AStatementThatFailsFailsOnlyItself) {
  REQUIRE_POSTGRES();
  LoopThread loop;
  auto pipeline = std::make_unique<PgPipeline>(loop.context(), Options());
  std::promise<Result<PgResultPtr>> p1, p2, p3, p4;
  auto first = Spawn(loop, ExecOne(pipeline.get(), &kOne, "1"), &p1);
  auto failing = Spawn(loop, ExecOne(pipeline.get(), &kDivide, "0"), &p2);
  auto third = Spawn(loop, ExecOne(pipeline.get(), &kDivide, "5"), &p3);
  auto fourth = Spawn(loop, ExecOne(pipeline.get(), &kOne, "4"), &p4);
  auto a = first.get(), b = failing.get(), c = third.get(), d = fourth.get();
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(Value(a), "1");
  EXPECT_EQ(b.status().code(), Code::kInvalid)
      << "division by zero is the database refusing a value";
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(Value(c), "2");
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(Value(d), "4");
  // The connection lives on the loop: closed there.
  loop.Run([](std::unique_ptr<PgPipeline> p) -> io::asio::awaitable<bool> {
    p.reset();
    co_return true;
  }(std::move(pipeline)));
}

TEST(PgPipeline, ABrokenConnectionFailsWhatItCarriedAndTheNextStatementReconnects) {
  REQUIRE_POSTGRES();
  LoopThread loop;
  auto pipeline = std::make_unique<PgPipeline>(loop.context(), Options());
  ASSERT_TRUE(loop.Run(ExecOne(pipeline.get(), &kOne, "1")).ok());
  std::promise<Result<PgResultPtr>> p1, p2;
  auto sleeping = Spawn(loop, ExecOne(pipeline.get(), &kSleep, "5"), &p1);
  auto behind = Spawn(loop, ExecOne(pipeline.get(), &kOne, "2"), &p2);
  // Another session ends ours, as a failover or an operator would.
  PGconn* admin = PQconnectdb(testing::PostgresUrl().c_str());
  ASSERT_EQ(PQstatus(admin), CONNECTION_OK);
  int killed = 0;
  for (int i = 0; i < 100 && killed == 0; ++i) {
    PGresult* r = PQexec(admin,
                         "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                         " WHERE application_name = 'boxoffice-pipeline-test'"
                         "   AND query LIKE '%pg_sleep%'");
    killed = std::atoi(PQgetvalue(r, 0, 0));
    PQclear(r);
    if (killed == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  PQfinish(admin);
  ASSERT_EQ(killed, 1);
  EXPECT_EQ(sleeping.get().status().code(), Code::kUnavailable);
  EXPECT_EQ(behind.get().status().code(), Code::kUnavailable) << "it was on the same connection";
  auto again = loop.Run(ExecOne(pipeline.get(), &kOne, "3"));
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(Value(again), "3");
  loop.Run([](std::unique_ptr<PgPipeline> p) -> io::asio::awaitable<bool> {
    p.reset();
    co_return true;
  }(std::move(pipeline)));
}

// A loop's connections: a statement meant for one that cannot open (here the role's
// connection limit of 1 stops the second) goes to the one that works, and is never failed
// for it.
io::asio::awaitable<Result<PgResultPtr>> ExecOnSet(PgPipelineSet* set, std::string arg) {
  std::vector<Param> params = {Param(std::move(arg))};
  co_return co_await set->Exec(kSleep, std::move(params));
}

// Five statements of 0.8 s each on one connection, with a statement timeout of 1 s: the
// last is answered 4 s after it was sent, longer than any one statement may take. A
// deadline counted from the send failed it (and closed the connection under the others).
TEST(PgPipeline, StatementsQueuedBehindSlowOnesAreNeverFailedForTheirWait) {
  REQUIRE_POSTGRES();
  LoopThread loop;
  PgPipelineOptions options = Options();
  options.statement_timeout = Millis(1'000);
  // Its own name: ABrokenConnection… ends the sleeping sessions named as the others are.
  options.application_name = "boxoffice-pipeline-queue-test";
  auto pipeline = std::make_unique<PgPipeline>(loop.context(), options);
  ASSERT_TRUE(loop.Run(ExecOne(pipeline.get(), &kOne, "1")).ok());
  constexpr int kQueued = 5;
  std::vector<std::promise<Result<PgResultPtr>>> promises(kQueued);
  std::vector<std::future<Result<PgResultPtr>>> answers;
  for (auto& p : promises) answers.push_back(Spawn(loop, ExecOne(pipeline.get(), &kSleep, "0.8"), &p));
  for (int i = 0; i < kQueued; ++i) {
    auto answer = answers[i].get();
    EXPECT_TRUE(answer.ok()) << "statement " << i << ": " << answer.status().message();
  }
  loop.Run([](std::unique_ptr<PgPipeline> p) -> io::asio::awaitable<bool> {
    p.reset();
    co_return true;
  }(std::move(pipeline)));
}

// A connection whose answers stop coming (the link fails one way: the server still gets
// and runs the statements) is closed once its head is overdue, failing what it carried
// with kUnavailable, and the next statement opens a new one.
TEST(PgPipeline, AHeadThatIsOverdueClosesTheConnection) {
  REQUIRE_POSTGRES();
  const std::string url = testing::PostgresUrl();
  const size_t colon = url.rfind(':');
  const size_t slash = url.find('/', colon);
  testing::TcpProxy proxy(static_cast<unsigned short>(std::stoi(url.substr(colon + 1, slash))));
  LoopThread loop;
  PgPipelineOptions options = Options();
  options.url = url.substr(0, colon + 1) + std::to_string(proxy.port()) + url.substr(slash);
  options.statement_timeout = Millis(500);
  auto pipeline = std::make_unique<PgPipeline>(loop.context(), options);
  ASSERT_TRUE(loop.Run(ExecOne(pipeline.get(), &kOne, "1")).ok());
  proxy.SwallowAnswers(true);
  std::promise<Result<PgResultPtr>> p1, p2;
  auto lost = Spawn(loop, ExecOne(pipeline.get(), &kOne, "2"), &p1);
  auto behind = Spawn(loop, ExecOne(pipeline.get(), &kOne, "3"), &p2);
  EXPECT_EQ(lost.get().status().code(), Code::kUnavailable);
  EXPECT_EQ(behind.get().status().code(), Code::kUnavailable);
  proxy.SwallowAnswers(false);
  auto again = loop.Run(ExecOne(pipeline.get(), &kOne, "4"));
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(Value(again), "4");
  loop.Run([](std::unique_ptr<PgPipeline> p) -> io::asio::awaitable<bool> {
    p.reset();
    co_return true;
  }(std::move(pipeline)));
}

// Which hosts a connect resolves off the loops first: one named host only.
TEST(PgConnect, OnlyAHostNamedByNameIsResolvedFirst) {
  EXPECT_EQ(PgHostToResolve("postgresql://u@db.example:5432/d"), "db.example");
  EXPECT_EQ(PgHostToResolve("postgresql://u@localhost/d?sslmode=disable"), "localhost");
  EXPECT_EQ(PgHostToResolve("postgresql://u@127.0.0.1:5432/d"), "");
  EXPECT_EQ(PgHostToResolve("postgresql://u@[::1]:5432/d"), "");
  EXPECT_EQ(PgHostToResolve("postgresql://u@a,b/d"), "") << "several hosts: left to libpq";
  EXPECT_EQ(PgHostToResolve("postgresql:///d?host=/run/postgresql"), "") << "a socket directory";
  EXPECT_EQ(PgHostToResolve("postgresql://u@db/d?hostaddr=10.0.0.1"), "") << "its own address";
  EXPECT_EQ(PgHostToResolve("not a url"), "");
  auto local = ResolvePgHost("localhost");
  ASSERT_TRUE(local.ok()) << local.status().message();
  EXPECT_TRUE(local.value() == "127.0.0.1" || local.value() == "::1") << local.value();
  EXPECT_EQ(ResolvePgHost("no-such-host.invalid").status().code(), Code::kUnavailable);
}

// Every connection has TCP keepalives and a TCP user timeout (a silent database host fails
// the connection instead of hanging a job), and a URL may still set its own.
TEST(PgConnect, ConnectionsKeepAlive) {
  REQUIRE_POSTGRES();
  auto value = [](PGconn* conn, const std::string& keyword) {
    std::string out;
    PQconninfoOption* options = PQconninfo(conn);
    for (PQconninfoOption* o = options; o && o->keyword; ++o) {
      if (keyword == o->keyword && o->val) out = o->val;
    }
    PQconninfoFree(options);
    return out;
  };
  PgOptions options;
  options.url = testing::PostgresUrl();
  auto conn = ConnectPg(options);
  ASSERT_TRUE(conn.ok()) << conn.status().message();
  EXPECT_EQ(value(conn.value()->raw(), "keepalives"), "1");
  EXPECT_EQ(value(conn.value()->raw(), "keepalives_idle"), "30");
  EXPECT_EQ(value(conn.value()->raw(), "keepalives_interval"), "10");
  EXPECT_EQ(value(conn.value()->raw(), "keepalives_count"), "3");
  EXPECT_EQ(value(conn.value()->raw(), "tcp_user_timeout"), "60000");
  options.url += (options.url.find('?') == std::string::npos ? "?" : "&") +
                 std::string("keepalives_idle=7");
  auto own = ConnectPg(options);
  ASSERT_TRUE(own.ok()) << own.status().message();
  EXPECT_EQ(value(own.value()->raw(), "keepalives_idle"), "7") << "the URL's own setting wins";
}

// A loop's pipeline reaches a database named by host name (resolved on the blocking pool,
// connected by address).
TEST(PgPipeline, AHostNameIsResolvedAndConnectedTo) {
  REQUIRE_POSTGRES();
  std::string url = testing::PostgresUrl();
  const size_t at = url.find("127.0.0.1");
  ASSERT_NE(at, std::string::npos);
  url.replace(at, 9, "localhost");
  io::BlockingPool pool(1, 8, nullptr);
  {
    LoopThread loop(&pool);
    testing::JoinPool join(&pool);
    PgPipelineOptions options = Options();
    options.url = url;
    auto pipeline = std::make_unique<PgPipeline>(loop.context(), options);
    auto answer = loop.Run(ExecOne(pipeline.get(), &kOne, "5"));
    ASSERT_TRUE(answer.ok()) << answer.status().message();
    EXPECT_EQ(Value(answer), "5");
    loop.Run([](std::unique_ptr<PgPipeline> p) -> io::asio::awaitable<bool> {
      p.reset();
      co_return true;
    }(std::move(pipeline)));
  }
}

TEST(PgPipelineSet, AConnectionThatCannotOpenNeverFailsAStatement) {
  REQUIRE_POSTGRES();
  const std::string role = "pipeline_limit_" + std::to_string(getpid());
  PGconn* admin = PQconnectdb(testing::PostgresUrl().c_str());
  ASSERT_EQ(PQstatus(admin), CONNECTION_OK);
  PQclear(PQexec(admin, ("DROP ROLE IF EXISTS " + role).c_str()));
  PGresult* created = PQexec(admin, ("CREATE ROLE " + role + " LOGIN CONNECTION LIMIT 1").c_str());
  ASSERT_EQ(PQresultStatus(created), PGRES_COMMAND_OK) << PQerrorMessage(admin);
  PQclear(created);
  PgPipelineOptions options = Options();
  const std::string url = testing::PostgresUrl();
  const size_t at = url.find("://") + 3;
  options.url = url.substr(0, at) + role + url.substr(url.find('@', at));
  {
    LoopThread loop;
    auto set = std::make_unique<PgPipelineSet>(loop.context(), options, 2);
    constexpr int kStatements = 60;
    std::vector<std::promise<Result<PgResultPtr>>> promises(kStatements);
    std::vector<std::future<Result<PgResultPtr>>> futures;
    for (int round = 0; round < 3; ++round) {
      futures.clear();
      for (int i = 0; i < kStatements / 3; ++i) {
        const int n = round * (kStatements / 3) + i;
        futures.push_back(Spawn(loop, ExecOnSet(set.get(), "0.002"), &promises[n]));
      }
      for (auto& f : futures) {
        auto r = f.get();
        EXPECT_TRUE(r.ok()) << r.status().message();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1'100));  // past the cool-down
    }
    // As in serve, the set goes when its loop ends (a connect it started in the background
    // may still be under way; it never resumes once the loop has ended).
    std::shared_ptr<PgPipelineSet> shared = std::move(set);
    loop.Run([](std::shared_ptr<PgPipelineSet> s) -> io::asio::awaitable<bool> {
      io::Loop::Current()->AtExit([s] {});
      co_return true;
    }(std::move(shared)));
  }
  PQclear(PQexec(admin, ("DROP ROLE IF EXISTS " + role).c_str()));
  PQfinish(admin);
}

}  // namespace
}  // namespace boxoffice
