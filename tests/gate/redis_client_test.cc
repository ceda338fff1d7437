// The Redis client on an I/O loop: calls sent before the caller waits leave together and
// are answered in order on the loop's one connection; a Redis that dies or stops answering
// fails the calls it carried with kUnavailable within the command timeout, and the next
// call reconnects by itself; a script Redis lost is loaded again. Off the loops, the same
// calls run on the blocking connections.
#include "gate/redis_client.h"

#include <gtest/gtest.h>

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

// A host name is resolved when the client is made, off the loops: a loop's reconnect never
// waits on a resolver.
TEST(RedisClientOnALoop, AHostNameIsResolvedOnceOffTheLoop) {
  START_REDIS(redis);
  RedisOptions o = Options(redis, Millis(1'000));
  o.host = "localhost";
  RedisClient client(o);
  LoopThread loop;
  auto pong = loop.Run(Call(&client, {"PING"}));
  ASSERT_TRUE(pong.ok()) << pong.status().message();
  EXPECT_EQ(pong->text, "PONG");
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
