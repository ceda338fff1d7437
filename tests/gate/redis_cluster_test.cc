// The Redis Cluster client: the routing rules on their own (slots, hash tags, redirects,
// the slot map), then against a real cluster of 3 masters: calls reach the master of
// their key's slot in both transports, a slot migrated by hand is followed through ASK
// (while it moves) and MOVED (after), nodes that CLUSTER SLOTS and MOVED name by host
// name are resolved off the loops, and the seat gate keeps one winner per seat.
#include "gate/redis_cluster.h"

#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <thread>

#include "gate/redis_client.h"
#include "gate/seat_gate.h"
#include "support/backends.h"
#include "support/loop_thread.h"
#include "support/redis_cluster.h"

namespace boxoffice {
namespace {

TEST(RedisSlots, KeysHashAsTheClusterSpecificationSays) {
  // The specification's example: CRC16("123456789") = 0x31C3.
  EXPECT_EQ(RedisKeySlot("123456789"), 0x31C3 % 16384);
  EXPECT_EQ(RedisKeySlot("foo"), 12182);  // CLUSTER KEYSLOT foo
  // Only the hash tag counts, when there is one and it is not empty.
  EXPECT_EQ(RedisKeySlot("seat:{42}:F5"), RedisKeySlot("42"));
  EXPECT_EQ(RedisKeySlot("room:{42}:queue"), RedisKeySlot("seat:{42}:A1"));
  EXPECT_EQ(RedisKeySlot("{user1000}.following"), RedisKeySlot("{user1000}.followers"));
  EXPECT_EQ(RedisKeySlot("foo{}{bar}"), RedisKeySlot("foo{}{bar}")) << "empty tag: whole key";
  EXPECT_NE(RedisKeySlot("foo{}{bar}"), RedisKeySlot("bar"));
  EXPECT_EQ(RedisKeySlot("foo{{bar}}zap"), RedisKeySlot("{bar"));
  EXPECT_EQ(RedisKeySlot("foo{bar}{zap}"), RedisKeySlot("bar"));
}

TEST(RedisSlots, RedirectsAreRead) {
  auto moved = ParseRedisRedirect("MOVED 3999 127.0.0.1:6381");
  ASSERT_TRUE(moved);
  EXPECT_FALSE(moved->ask);
  EXPECT_EQ(moved->slot, 3999);
  EXPECT_EQ(moved->to, (RedisEndpoint{"127.0.0.1", 6381}));
  auto ask = ParseRedisRedirect("ASK 0 ::1:7000");
  ASSERT_TRUE(ask);
  EXPECT_TRUE(ask->ask);
  EXPECT_EQ(ask->to, (RedisEndpoint{"::1", 7000}));
  for (const char* bad : {"MOVED", "MOVED x 1.2.3.4:5", "MOVED 16384 1.2.3.4:5", "ASK 1 host",
                          "ASK 1 :5", "MOVED 1 h:0", "NOSCRIPT no", "ERR MOVED 1 h:1"})
    EXPECT_FALSE(ParseRedisRedirect(bad)) << bad;
  EXPECT_EQ(RedisRoutingKey({"EVALSHA", "abc", "2", "seat:{1}:A1", "seat:{1}:A2", "x"}),
            "seat:{1}:A1");
  EXPECT_EQ(RedisRoutingKey({"EVALSHA", "abc", "0", "x"}), std::nullopt);
  EXPECT_EQ(RedisRoutingKey({"ZSCORE", "room:{1}:q", "7"}), "room:{1}:q");
  EXPECT_EQ(RedisRoutingKey({"PUBLISH", "seat-changes", "m"}), std::nullopt);
  EXPECT_EQ(RedisRoutingKey({"PING"}), std::nullopt);
}

TEST(RedisSlots, TheSlotMapIsRead) {
  auto node = [](const std::string& host, int port) {
    RedisReply r;
    r.type = RedisReply::Type::kArray;
    RedisReply h, p, id;
    h.type = RedisReply::Type::kString;
    h.text = host;
    p.type = RedisReply::Type::kInteger;
    p.integer = port;
    id.type = RedisReply::Type::kString;
    id.text = "id";
    r.elements = {h, p, id};
    return r;
  };
  auto range = [&](int64_t lo, int64_t hi, std::vector<RedisReply> nodes) {
    RedisReply r;
    r.type = RedisReply::Type::kArray;
    RedisReply a, b;
    a.type = b.type = RedisReply::Type::kInteger;
    a.integer = lo;
    b.integer = hi;
    r.elements = {a, b};
    for (auto& n : nodes) r.elements.push_back(n);
    return r;
  };
  RedisReply reply;
  reply.type = RedisReply::Type::kArray;
  reply.elements = {range(0, 8191, {node("10.0.0.1", 7000), node("10.0.0.2", 7001)}),
                    range(8192, 16383, {node("10.0.0.3", 7002)})};
  auto map = ParseClusterSlots(reply);
  ASSERT_TRUE(map.ok()) << map.status().message();
  ASSERT_EQ(map->masters.size(), 2u);
  EXPECT_EQ(map->masters[map->master_of[0]], (RedisEndpoint{"10.0.0.1", 7000}));
  EXPECT_EQ(map->masters[map->master_of[16383]], (RedisEndpoint{"10.0.0.3", 7002}));
  EXPECT_EQ(map->nodes.size(), 3u) << "masters, then the replica";
  reply.elements.pop_back();
  map = ParseClusterSlots(reply);
  ASSERT_TRUE(map.ok());
  EXPECT_EQ(map->master_of[16383], -1) << "a slot no one serves";
  RedisReply nonsense;
  nonsense.type = RedisReply::Type::kString;
  EXPECT_FALSE(ParseClusterSlots(nonsense).ok());
}

class RedisClusterClient : public ::testing::Test {
 protected:
  void SetUp() override {
    BOX_REQUIRE_REDIS();
    cluster_ = std::make_unique<testing::RedisCluster>(3, 0);
    ASSERT_TRUE(cluster_->ok());
    RedisOptions o = *ParseRedisUrl(cluster_->url());
    o.command_timeout = o.connect_timeout = o.acquire_timeout = Millis(2'000);
    client_ = std::make_unique<RedisClient>(o);
    ASSERT_TRUE(client_->cluster());
  }
  int KeysOn(int node) { return std::stoi(cluster_->Cli(node, "DBSIZE")); }

  std::unique_ptr<testing::RedisCluster> cluster_;
  std::unique_ptr<RedisClient> client_;
};

TEST_F(RedisClusterClient, EachCallReachesTheMasterOfItsSlotInBothTransports) {
  for (int i = 0; i < 60; ++i)
    ASSERT_TRUE(client_->Command({"SET", "blocking:{" + std::to_string(i) + "}", "x"}).ok());
  testing::LoopThread loop;
  auto on_loop = [&]() -> io::asio::awaitable<int> {
    std::vector<RedisPending> calls;
    for (int i = 0; i < 60; ++i)
      calls.push_back(client_->Send({"SET", "loop:{" + std::to_string(i) + "}", "y"}));
    int ok = 0;
    for (auto& c : calls) ok += (co_await client_->Await(c)).ok();
    co_return ok;
  };
  EXPECT_EQ(loop.Run(on_loop()), 60);
  // Spread over the three masters, each key on its slot's master (a MOVED would have been
  // followed, but then the key is where the master is anyway: ask each master for its own).
  int total = 0;
  for (int node = 0; node < 3; ++node) {
    EXPECT_GT(KeysOn(node), 0) << "node " << node;
    total += KeysOn(node);
  }
  EXPECT_EQ(total, 120);
  for (int i = 0; i < 60; ++i) {
    const std::string key = "loop:{" + std::to_string(i) + "}";
    const int master = cluster_->MasterOfSlot(RedisKeySlot(key));
    EXPECT_EQ(cluster_->Cli(master, "EXISTS " + key), "1\n") << key;
  }
}

TEST_F(RedisClusterClient, AMigratingSlotIsFollowedThroughAskThenMoved) {
  const std::string key = "seat:{7}:A1";
  const int slot = RedisKeySlot(key);
  const int from = cluster_->MasterOfSlot(slot);
  ASSERT_GE(from, 0);
  const int to = (from + 1) % 3;
  ASSERT_TRUE(client_->Command({"SET", key, "before"}).ok());
  // Migrate by hand, as redis-cli --cluster reshard does: IMPORTING on the target,
  // MIGRATING on the source; keys not yet moved stay readable at the source.
  const std::string s = std::to_string(slot);
  ASSERT_EQ(cluster_->Cli(to, "CLUSTER SETSLOT " + s + " IMPORTING " + cluster_->NodeId(from)),
            "OK\n");
  ASSERT_EQ(cluster_->Cli(from, "CLUSTER SETSLOT " + s + " MIGRATING " + cluster_->NodeId(to)),
            "OK\n");
  // A key the source does not have is asked of the target (ASK, then ASKING there).
  const std::string fresh = "seat:{7}:A2";
  auto set = client_->Command({"SET", fresh, "during"});
  ASSERT_TRUE(set.ok()) << set.status().message();
  EXPECT_EQ(cluster_->Cli(to, "CLUSTER COUNTKEYSINSLOT " + s), "1\n");
  testing::LoopThread loop;
  auto get_on_loop = [&](std::string k) -> io::asio::awaitable<Result<RedisReply>> {
    auto call = client_->Send({"GET", k});
    co_return co_await client_->Await(call);
  };
  auto got = loop.Run(get_on_loop(fresh));
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->text, "during") << "the loop transport follows ASK too";
  // Move the remaining key and hand the slot over: the client's map is stale, MOVED says so.
  const std::string port = std::to_string(cluster_->port(to));
  ASSERT_EQ(cluster_->Cli(from, "MIGRATE 127.0.0.1 " + port + " " + key + " 0 5000"), "OK\n");
  for (int node = 0; node < 3; ++node)
    cluster_->Cli(node, "CLUSTER SETSLOT " + s + " NODE " + cluster_->NodeId(to));
  auto moved = client_->Command({"GET", key});
  ASSERT_TRUE(moved.ok()) << moved.status().message();
  EXPECT_EQ(moved->text, "before");
  got = loop.Run(get_on_loop(key));
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->text, "before");
  // And the map is read again: the slot's calls go straight to the new master.
  auto gets_on = [&](int node) {  // GETs node has answered (with MOVED too), from INFO
    const std::string stats = cluster_->Cli(node, "INFO commandstats");
    const size_t at = stats.find("cmdstat_get:calls=");
    return at == std::string::npos ? 0 : std::stoi(stats.substr(at + 18));
  };
  ASSERT_TRUE(client_->RefreshSlots().ok());
  const int before = gets_on(from);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(client_->Command({"GET", key}).ok());
  const bool learned = gets_on(from) == before;
  EXPECT_TRUE(learned) << "the old master is no longer asked";
}

// Nodes that announce a host name (cluster-announce-hostname, with the preferred endpoint
// type "hostname"): CLUSTER SLOTS and MOVED then say "localhost:PORT". A loop reaches each
// slot's master through those names and follows a MOVED to one, the names resolved on the
// client's resolver thread, never on the loop (which hiredis would do, given the name).
TEST_F(RedisClusterClient, NodesNamedByHostNameAreResolvedOffTheLoop) {
  for (int node = 0; node < 3; ++node) {
    ASSERT_EQ(cluster_->Cli(node, "CONFIG SET cluster-announce-hostname localhost"), "OK\n");
    ASSERT_EQ(cluster_->Cli(node, "CONFIG SET cluster-preferred-endpoint-type hostname"), "OK\n");
  }
  // The names travel with the cluster bus's pings: wait until every node names every
  // master by it (a master whose name a node has not heard yet shows as "?").
  auto named_everywhere = [&] {
    for (int node = 0; node < 3; ++node) {
      const std::string slots = "\n" + cluster_->Cli(node, "CLUSTER SLOTS");
      if (slots.find("\nlocalhost\n") == std::string::npos ||
          slots.find("\n?\n") != std::string::npos)
        return false;
    }
    return true;
  };
  for (int i = 0; i < 400 && !named_everywhere(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(named_everywhere());
  std::atomic<int> resolved{0};
  std::atomic<bool> on_a_loop{false};
  RedisOptions o = *ParseRedisUrl(cluster_->url());  // the node given by its address
  o.command_timeout = o.connect_timeout = o.acquire_timeout = Millis(2'000);
  o.resolve = [&](const std::string& host) {
    ++resolved;
    if (io::Loop::Current()) on_a_loop = true;
    return ResolveRedisHost(host);
  };
  RedisClient client(o);
  ASSERT_TRUE(client.cluster());
  const std::vector<RedisEndpoint> nodes = client.Nodes();  // the one given, then the masters
  ASSERT_EQ(nodes.size(), 4u);
  for (size_t i = 1; i < nodes.size(); ++i) EXPECT_EQ(nodes[i].host, "localhost");
  {
    testing::LoopThread loop;
    auto on_loop = [&]() -> io::asio::awaitable<int> {
      std::vector<RedisPending> calls;
      for (int i = 0; i < 30; ++i)
        calls.push_back(client.Send({"SET", "named:{" + std::to_string(i) + "}", "z"}));
      int ok = 0;
      for (auto& c : calls) ok += (co_await client.Await(c)).ok();
      co_return ok;
    };
    EXPECT_EQ(loop.Run(on_loop()), 30);
  }
  for (int i = 0; i < 30; ++i) {
    const std::string key = "named:{" + std::to_string(i) + "}";
    const int master = cluster_->MasterOfSlot(RedisKeySlot(key));
    EXPECT_EQ(cluster_->Cli(master, "EXISTS " + key), "1\n") << key;
  }
  EXPECT_GT(resolved.load(), 0);
  // A slot handed to another master behind the client's back: a fresh loop asks the old
  // master, which answers MOVED SLOT localhost:PORT (unless the map was read again first).
  const std::string key = "seat:{9}:A1";
  const int slot = RedisKeySlot(key);
  const int from = cluster_->MasterOfSlot(slot);
  ASSERT_GE(from, 0);
  const int to = (from + 1) % 3;
  ASSERT_TRUE(client.Command({"SET", key, "before"}).ok());
  const std::string s = std::to_string(slot);
  ASSERT_EQ(cluster_->Cli(to, "CLUSTER SETSLOT " + s + " IMPORTING " + cluster_->NodeId(from)),
            "OK\n");
  ASSERT_EQ(cluster_->Cli(from, "CLUSTER SETSLOT " + s + " MIGRATING " + cluster_->NodeId(to)),
            "OK\n");
  const std::string port = std::to_string(cluster_->port(to));
  ASSERT_EQ(cluster_->Cli(from, "MIGRATE 127.0.0.1 " + port + " " + key + " 0 5000"), "OK\n");
  for (int node = 0; node < 3; ++node)
    cluster_->Cli(node, "CLUSTER SETSLOT " + s + " NODE " + cluster_->NodeId(to));
  EXPECT_NE(cluster_->Cli(from, "GET " + key).find("MOVED " + s + " localhost:" + port),
            std::string::npos);
  testing::LoopThread fresh;
  auto get = [&]() -> io::asio::awaitable<Result<RedisReply>> {
    auto call = client.Send({"GET", key});
    co_return co_await client.Await(call);
  };
  auto got = fresh.Run(get());
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->text, "before");
  EXPECT_FALSE(on_a_loop.load()) << "a name was resolved on a loop";
}

TEST_F(RedisClusterClient, TheGateKeepsOneWinnerPerSeatAndAMultiSeatClaimWhole) {
  Metrics metrics;
  RedisSeatGate gate(client_.get(), RedisGateOptions{Millis(100)}, &metrics);
  constexpr int kClaimers = 64;
  std::barrier start(kClaimers);
  std::atomic<int> claimed{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kClaimers; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      // Every showtime's seats share a slot; showtimes spread over the masters.
      auto d = gate.Claim(100 + i % 4, {"F5", "F6"}, "hold-" + std::to_string(i), Millis(60'000));
      if (d.verdict == SeatGate::Verdict::kClaimed) ++claimed;
      EXPECT_NE(d.verdict, SeatGate::Verdict::kSkipped);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(claimed.load(), 4) << "one winner per showtime";
  auto d = gate.Claim(100, {"F6", "F7"}, "late", Millis(60'000));
  EXPECT_EQ(d.verdict, SeatGate::Verdict::kTaken);
  EXPECT_EQ(d.taken, std::vector<std::string>{"F6"});
  const int master = cluster_->MasterOfSlot(RedisKeySlot("{100}"));
  EXPECT_EQ(cluster_->Cli(master, "EXISTS seat:{100}:F7"), "0\n") << "all or nothing";
}

}  // namespace
}  // namespace boxoffice
