// Seat-change fan-out, in process and through Redis pub/sub: local listeners hear a change
// before Publish returns; other instances hear it once, marked remote, and never their own
// changes back; a subscriber that lost Redis subscribes again by itself.
#include "gate/seat_events.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include "support/backends.h"
#include "support/redis_cluster.h"
#include "support/redis_server.h"
#include "support/test_env.h"

namespace boxoffice {
namespace {

using namespace std::chrono_literals;

SeatChange Change(SeatChange::Type type, int64_t showtime, std::vector<std::string> seats) {
  return SeatChange{type, showtime, std::move(seats), FromEpochMs(1'900'000'000'123)};
}

// What a listener heard, safe to read from the test thread.
struct Heard {
  std::mutex mu;
  std::vector<SeatChange> changes;
  SeatEvents::Listener Listener() {
    return [this](const SeatChange& c) {
      std::lock_guard lock(mu);
      changes.push_back(c);
    };
  }
  size_t size() {
    std::lock_guard lock(mu);
    return changes.size();
  }
  bool WaitFor(size_t n, std::chrono::milliseconds timeout = 3s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (size() < n && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(5ms);
    return size() >= n;
  }
};

TEST(SeatChangeWire, RoundTripsAndRefusesGarbage) {
  const SeatChange c = Change(SeatChange::Type::kBooked, 42, {"A1", "AA12"});
  auto back = DecodeSeatChange(EncodeSeatChange("abcd1234", c));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->first, "abcd1234");
  EXPECT_EQ(back->second.type, c.type);
  EXPECT_EQ(back->second.showtime_id, 42);
  EXPECT_EQ(back->second.seats, c.seats);
  EXPECT_EQ(back->second.at, c.at);
  for (const char* bad : {"", "x", "o|Q|1|2|A1", "o|H|x|2|A1", "o|H|1|2", "o|HH|1|2|A1"})
    EXPECT_FALSE(DecodeSeatChange(bad).has_value()) << bad;
  EXPECT_EQ(SeatChangeJson(c),
            R"({"at":"2030-03-17T17:46:40.123Z","seats":["A1","AA12"],"showtimeId":42,)"
            R"("type":"SeatsBooked"})");
}

class RedisSeatEventsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BOX_REQUIRE_REDIS();
    redis_ = std::make_unique<testing::RedisServer>();
    ASSERT_TRUE(redis_->ok());
  }
  std::unique_ptr<RedisSeatEvents> Instance() {
    RedisOptions o = *ParseRedisUrl(redis_->url());
    o.command_timeout = o.connect_timeout = o.acquire_timeout = Millis(1'000);
    return std::make_unique<RedisSeatEvents>(o, &metrics_);
  }
  // Until both instances' subscribers are connected, a change may go unheard by design.
  void WaitSubscribed() {
    for (int i = 0; i < 300; ++i) {
      if (redis_->Cli("PUBSUB NUMSUB " + std::string(RedisSeatEvents::kChannel)) ==
          std::string(RedisSeatEvents::kChannel) + "\n2\n")
        return;
      std::this_thread::sleep_for(10ms);
    }
    FAIL() << "subscribers did not connect";
  }
  Metrics metrics_;
  std::unique_ptr<testing::RedisServer> redis_;
};

// The contract of both implementations: a change reaches this instance's listeners before
// Publish returns, unmarked; an unsubscribed listener hears nothing more.
class SeatEventsContract : public RedisSeatEventsTest,
                           public ::testing::WithParamInterface<bool /* redis */> {
 protected:
  void SetUp() override {
    if (GetParam()) RedisSeatEventsTest::SetUp();
  }
};

TEST_P(SeatEventsContract, ListenersHearAChangeBeforePublishReturns) {
  if (IsSkipped()) return;
  std::unique_ptr<SeatEvents> events;
  if (GetParam()) {
    events = Instance();
  } else {
    events = std::make_unique<InProcessSeatEvents>();
  }
  Heard a, b;
  const uint64_t id_a = events->Subscribe(a.Listener());
  events->Subscribe(b.Listener());
  events->Publish(Change(SeatChange::Type::kHeld, 1, {"A1"}));
  EXPECT_EQ(a.size(), 1u);
  EXPECT_EQ(b.size(), 1u);
  EXPECT_FALSE(a.changes[0].remote);
  events->Unsubscribe(id_a);
  events->Publish(Change(SeatChange::Type::kReleased, 1, {"A1"}));
  EXPECT_EQ(a.size(), 1u);
  EXPECT_EQ(b.size(), 2u);
}

INSTANTIATE_TEST_SUITE_P(Kinds, SeatEventsContract, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? std::string("Redis") : std::string("InProcess");
                         });

TEST_F(RedisSeatEventsTest, OtherInstancesHearEachChangeOnceAndMarkedRemote) {
  auto a = Instance();
  auto b = Instance();
  Heard heard_a, heard_b;
  a->Subscribe(heard_a.Listener());
  b->Subscribe(heard_b.Listener());
  WaitSubscribed();
  a->Publish(Change(SeatChange::Type::kHeld, 7, {"F5", "F6"}));
  EXPECT_EQ(heard_a.size(), 1u) << "local listeners hear it before Publish returns";
  ASSERT_TRUE(heard_b.WaitFor(1));
  EXPECT_TRUE(heard_b.changes[0].remote);
  EXPECT_EQ(heard_b.changes[0].showtime_id, 7);
  EXPECT_EQ(heard_b.changes[0].seats, (std::vector<std::string>{"F5", "F6"}));
  for (int i = 0; i < 200; ++i) b->Publish(Change(SeatChange::Type::kReleased, 7, {"F5"}));
  ASSERT_TRUE(heard_a.WaitFor(201));
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(heard_a.size(), 201u);
  EXPECT_EQ(heard_b.size(), 201u) << "an instance never hears its own changes twice";
}

TEST_F(RedisSeatEventsTest, ASubscriberThatLostRedisSubscribesAgain) {
  auto a = Instance();
  auto b = Instance();
  Heard heard_b;
  b->Subscribe(heard_b.Listener());
  WaitSubscribed();
  redis_->Kill();
  // Meanwhile changes are dropped, never queued without bound, and Publish never blocks.
  for (int i = 0; i < 100; ++i) a->Publish(Change(SeatChange::Type::kHeld, 1, {"A1"}));
  ASSERT_TRUE(redis_->Start());
  WaitSubscribed();
  a->Publish(Change(SeatChange::Type::kHeld, 2, {"B2"}));
  ASSERT_TRUE(heard_b.WaitFor(1, 5s));
  std::lock_guard lock(heard_b.mu);
  EXPECT_EQ(heard_b.changes.back().showtime_id, 2);
}

}  // namespace
}  // namespace boxoffice

namespace boxoffice {
namespace {

// In a Redis Cluster, a change published through one node reaches an instance subscribed
// through another (the cluster bus carries every PUBLISH to every node), and an instance
// whose node dies subscribes through another node it knows of and hears again.
TEST(RedisSeatEventsCluster, InstancesOnDifferentNodesHearEachOtherAndOutliveANode) {
  BOX_REQUIRE_REDIS();
  testing::RedisCluster cluster(3, 1);
  ASSERT_TRUE(cluster.ok());
  Metrics metrics;
  auto instance = [&](int node) {
    RedisOptions o = *ParseRedisUrl("redis://127.0.0.1:" + std::to_string(cluster.port(node)));
    o.command_timeout = o.connect_timeout = o.acquire_timeout = Millis(500);
    return std::make_unique<RedisSeatEvents>(o, &metrics);
  };
  auto a = instance(0);
  auto b = instance(1);
  struct Remote {
    std::mutex mu;
    std::set<int64_t> showtimes;
  } heard;
  b->Subscribe([&heard](const SeatChange& c) {
    std::lock_guard lock(heard.mu);
    if (c.remote) heard.showtimes.insert(c.showtime_id);
  });
  // A change published before a subscription is up may go unheard (by design): publish
  // until it is heard.
  auto hears = [&](int64_t showtime, int tries) {
    for (int i = 0; i < tries; ++i) {
      a->Publish(Change(SeatChange::Type::kHeld, showtime, {"A1"}));
      std::this_thread::sleep_for(50ms);
      std::lock_guard lock(heard.mu);
      if (heard.showtimes.count(showtime)) return true;
    }
    return false;
  };
  EXPECT_TRUE(hears(1, 100));
  cluster.Kill(1);  // b's node
  EXPECT_TRUE(hears(2, 300)) << "b subscribed through another node";
}

}  // namespace
}  // namespace boxoffice
