// The Redis client on an I/O loop: calls sent before the caller waits leave together and
// are answered in order on the loop's one connection; a Redis that dies or stops answering
// fails the calls it carried with kUnavailable within the command timeout, and the next
// call reconnects by itself; a script Redis lost is loaded again. A host name is never
// resolved on a loop: the loop goes on while it resolves, a numeric address asks no
// resolver, and a name that does not resolve fails its calls until it does. Off the loops,
// the same calls run on the blocking connections.
#include "gate/redis_client.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <vector>

#include "support/loop_thread.h"
#include "support/redis_server.h"

namespace boxoffice {
namespace {

using testing::LoopThread;

#define START_REDIS(server)                                                        \
  if (!testing::RedisInstalled()) GTEST_SKIP() << "redis-server is not installed"; \
  testing::RedisServer server;                                                     \
  ASSERT_TRUE(server.ok())

RedisOptions Options(const testing::RedisServer& server, Millis timeout) {
  RedisOptions o = *ParseRedisUrl(server.url());
  o.connect_timeout = o.command_timeout = o.acquire_timeout = timeout;
  return o;
}

// n INCRs of one key, all sent before the first is awaited: their answers, in order.
io::asio::awaitable<std::vector<int64_t>> Increments(RedisClient* client, int n) {
  std::vector<RedisPending> sent;
  for (int i = 0; i < n; ++i) sent.push_back(client->Send({"INCR", "counter"}));
  std::vector<int64_t> out;
  for (auto& call : sent) {
    auto r = co_await client->Await(call);
    out.push_back(r.ok() ? r->integer : -1);
  }
  co_return out;
}

io::asio::awaitable<Result<RedisReply>> Call(RedisClient* client, std::vector<std::string> argv) {
  RedisPending call = client->Send(std::move(argv));
  co_return co_await client->Await(std::move(call));
}

TEST(RedisClientOnALoop, PipelinedCallsAreAnsweredInOrder) {
  START_REDIS(redis);
  RedisClient client(Options(redis, Millis(1'000)));  // declared before the loop: outlives it
  LoopThread loop;
  auto answers = loop.Run(Increments(&client, 500));
  ASSERT_EQ(answers.size(), 500u);
  for (int i = 0; i < 500; ++i) EXPECT_EQ(answers[i], i + 1);
  EXPECT_EQ(redis.Cli("GET counter"), "500\n");
}

TEST(RedisClientOnALoop, ARedisThatDiesFailsItsCallsAndTheNextCallReconnects) {
  START_REDIS(redis);
  RedisClient client(Options(redis, Millis(200)));
  LoopThread loop;
  ASSERT_TRUE(loop.Run(Call(&client, {"SET", "k", "1"})).ok());
  redis.Kill();
  auto down = loop.Run(Call(&client, {"GET", "k"}));
  EXPECT_EQ(down.status().code(), Code::kUnavailable);
  ASSERT_TRUE(redis.Start());
  // A refused connect is retried after the connect timeout, not on every call.
  Result<RedisReply> back = Status(Code::kUnavailable, "not yet");
  for (int i = 0; i < 50 && !back.ok(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    back = loop.Run(Call(&client, {"PING"}));
  }
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->text, "PONG");
}

TEST(RedisClientOnALoop, ACallWithoutAnAnswerTimesOutAndTheConnectionIsReplaced) {
  START_REDIS(redis);
  RedisClient client(Options(redis, Millis(200)));
  LoopThread loop;
  ASSERT_TRUE(loop.Run(Call(&client, {"SET", "k", "1"})).ok());
  redis.Pause();
  const auto started = std::chrono::steady_clock::now();
  auto stalled = loop.Run(Call(&client, {"GET", "k"}));
  const auto waited = std::chrono::steady_clock::now() - started;
  redis.Resume();
  EXPECT_EQ(stalled.status().code(), Code::kUnavailable);
  EXPECT_LT(waited, std::chrono::seconds(5)) << "bounded by the command timeout";
  auto next = loop.Run(Call(&client, {"GET", "k"}));
  ASSERT_TRUE(next.ok()) << next.status().message();
  EXPECT_EQ(next->text, "1");
}

TEST(RedisClientOnALoop, AScriptRedisLostIsLoadedAgain) {
  START_REDIS(redis);
  RedisClient client(Options(redis, Millis(1'000)));
  LoopThread loop;
  static const RedisScript kDouble("return tonumber(ARGV[1]) * 2");
  auto eval = [&](const std::string& n) {
    return loop.Run([](RedisClient* c, std::string arg) -> io::asio::awaitable<Result<RedisReply>> {
      RedisPending call = c->SendEval(kDouble, {}, {arg});
      co_return co_await c->Await(std::move(call));
    }(&client, n));
  };
  auto first = eval("21");
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(first->integer, 42);
  redis.Cli("SCRIPT FLUSH");
  auto again = eval("4");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->integer, 8);
}

// A resolve function wrapped to count its calls and tell whether any ran on a loop thread.
struct WatchedResolve {
  std::atomic<int> calls{0};
  std::atomic<bool> on_a_loop{false};
  RedisResolve Wrap(RedisResolve inner) {
    return [this, inner](const std::string& host) {
      ++calls;
      if (io::Loop::Current()) on_a_loop = true;
      return inner(host);
    };
  }
};

// "localhost", through the real resolver (getaddrinfo), on the resolver thread: the loop's
// connection is handed the address it found.
TEST(RedisClientOnALoop, AHostNameIsResolvedOffTheLoop) {
  START_REDIS(redis);
  WatchedResolve watched;
  RedisOptions o = Options(redis, Millis(1'000));
  o.host = "localhost";
  o.resolve = watched.Wrap(ResolveRedisHost);
  RedisClient client(o);
  LoopThread loop;
  auto pong = loop.Run(Call(&client, {"PING"}));
  ASSERT_TRUE(pong.ok()) << pong.status().message();
  EXPECT_EQ(pong->text, "PONG");
  EXPECT_GE(watched.calls.load(), 2) << "the blocking connection's and the loop's";
  EXPECT_FALSE(watched.on_a_loop.load());
  auto blocking = client.Command({"PING"});
  ASSERT_TRUE(blocking.ok()) << blocking.status().message();
}

io::asio::awaitable<RedisPending> SendOnly(RedisClient* client, std::vector<std::string> argv) {
  co_return client->Send(std::move(argv));
}

io::asio::awaitable<Result<RedisReply>> AwaitSent(RedisClient* client, RedisPending call) {
  co_return co_await client->Await(std::move(call));
}

// A timer runs on the loop; then whether `call` has its answer yet.
io::asio::awaitable<bool> AfterATimer(RedisPending call) {
  io::asio::steady_timer timer(co_await io::asio::this_coro::executor);
  timer.expires_after(std::chrono::milliseconds(1));
  co_await timer.async_wait(io::asio::use_awaitable);
  co_return call->reply.done();
}

// Lets a held resolve go, at the latest when the test ends (before its client joins the
// resolver thread).
class ReleaseOnExit {
 public:
  explicit ReleaseOnExit(std::promise<void>* promise) : promise_(promise) {}
  ~ReleaseOnExit() { Now(); }
  void Now() {
    if (!done_) promise_->set_value();
    done_ = true;
  }

 private:
  std::promise<void>* promise_;
  bool done_ = false;
};

// While a name's resolve is held (the resolver blocks until the test lets it go), the loop
// runs a timer and serves another client's calls (a numeric address, which asks no
// resolver at all); the call sent through the name waits, then leaves once the address
// comes. No timing is asserted: the order of events shows it. (Before, a name that had
// not resolved when the client was made went to redisAsyncConnect, which resolves it on
// the loop: a slow resolver stalled every request of that loop.)
TEST(RedisClientOnALoop, TheLoopGoesOnWhileANameResolves) {
  START_REDIS(redis);
  std::promise<void> entered, release_promise;
  std::shared_future<void> released = release_promise.get_future().share();
  std::atomic<bool> hold{false}, on_a_loop{false};
  RedisOptions o = Options(redis, Millis(10'000));  // no deadline passes while held
  o.host = "redis.boxoffice.test";
  o.resolve = [&](const std::string& host) -> Result<std::vector<std::string>> {
    const bool on_loop = io::Loop::Current() != nullptr;
    if (on_loop) on_a_loop = true;
    if (hold.exchange(false)) {
      entered.set_value();
      if (!on_loop) released.wait();  // never block a loop, even in a broken build
    }
    if (host != "redis.boxoffice.test") return Status(Code::kUnavailable, "unknown " + host);
    return std::vector<std::string>{"127.0.0.1"};
  };
  RedisClient named(o);  // made off the loops: its blocking connection resolves inline
  WatchedResolve watched;
  RedisOptions numeric_options = Options(redis, Millis(10'000));
  numeric_options.resolve = watched.Wrap(ResolveRedisHost);
  RedisClient numeric(numeric_options);
  ReleaseOnExit release(&release_promise);
  hold = true;
  LoopThread loop;
  RedisPending held = loop.Run(SendOnly(&named, {"SET", "k", "named"}));
  // The resolve has begun, held on the resolver thread. (The bound only turns a build that
  // never asks the resolver into a failure instead of a hang; nothing is timed.)
  ASSERT_EQ(entered.get_future().wait_for(std::chrono::seconds(60)), std::future_status::ready)
      << "the loop's connect never asked the resolver";
  EXPECT_FALSE(loop.Run(AfterATimer(held))) << "the call waits for its address";
  auto other = loop.Run(Call(&numeric, {"SET", "other", "numeric"}));
  EXPECT_TRUE(other.ok()) << other.status().message();
  EXPECT_FALSE(loop.Run(AfterATimer(held)));
  release.Now();
  auto reply = loop.Run(AwaitSent(&named, held));
  ASSERT_TRUE(reply.ok()) << reply.status().message();
  EXPECT_EQ(redis.Cli("GET k"), "named\n");
  EXPECT_EQ(redis.Cli("GET other"), "numeric\n");
  EXPECT_FALSE(on_a_loop.load());
  EXPECT_EQ(watched.calls.load(), 0) << "a numeric address asks no resolver";
}

// A name that does not resolve fails its calls with kUnavailable (no sooner retried than
// the connect timeout), and is asked again afterwards: once it resolves, calls go through.
TEST(RedisClientOnALoop, ANameThatDoesNotResolveFailsItsCallsUntilItDoes) {
  START_REDIS(redis);
  std::atomic<bool> known{false}, on_a_loop{false};
  RedisOptions o = Options(redis, Millis(200));
  o.host = "late.boxoffice.test";
  o.resolve = [&](const std::string&) -> Result<std::vector<std::string>> {
    if (io::Loop::Current()) on_a_loop = true;
    if (!known) return Status(Code::kUnavailable, "redis: cannot resolve late.boxoffice.test");
    return std::vector<std::string>{"127.0.0.1"};
  };
  RedisClient client(o);
  LoopThread loop;
  auto down = loop.Run(Call(&client, {"PING"}));
  EXPECT_EQ(down.status().code(), Code::kUnavailable);
  EXPECT_NE(down.status().message().find("cannot resolve"), std::string::npos)
      << down.status().message();
  known = true;
  Result<RedisReply> back = Status(Code::kUnavailable, "not yet");
  for (int i = 0; i < 50 && !back.ok(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    back = loop.Run(Call(&client, {"PING"}));
  }
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->text, "PONG");
  EXPECT_FALSE(on_a_loop.load());
}

TEST(RedisClientOffTheLoops, SendAndAwaitRunOnTheBlockingConnections) {
  START_REDIS(redis);
  RedisClient client(Options(redis, Millis(1'000)));
  auto answers = io::RunSync(Increments(&client, 3));
  EXPECT_EQ(answers, (std::vector<int64_t>{1, 2, 3}));
}

}  // namespace
}  // namespace boxoffice

#undef START_REDIS  // the files of a unity batch each define their own
