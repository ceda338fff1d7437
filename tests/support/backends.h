// What the contract suites of the accelerators share: the two backends each runs on, their
// test names, and the skip (or, under `make test`, failure) when Redis is not installed.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "gate/redis_client.h"
#include "support/redis_cluster.h"
#include "support/redis_server.h"
#include "support/test_env.h"

namespace boxoffice::testing {

// kRedisCluster: a real Redis Cluster of 3 masters, the client given one node.
enum class Backend { kInProcess, kRedis, kRedisCluster };

inline std::string BackendName(const ::testing::TestParamInfo<Backend>& info) {
  switch (info.param) {
    case Backend::kInProcess:
      return "InProcess";
    case Backend::kRedis:
      return "Redis";
    case Backend::kRedisCluster:
      return "RedisCluster";
  }
  return "?";
}

inline auto AllBackends() {
  return ::testing::Values(Backend::kInProcess, Backend::kRedis, Backend::kRedisCluster);
}

}  // namespace boxoffice::testing

// In a SetUp or a test body: returns from it, skipped, when redis-server is missing (and
// fails instead where every test must run: make test).
#define BOX_REQUIRE_REDIS()                                                                    \
  do {                                                                                         \
    if (!::boxoffice::testing::RedisInstalled()) {                                             \
      if (::boxoffice::testing::PostgresRequired()) FAIL() << "redis-server is not installed"; \
      GTEST_SKIP() << "redis-server is not installed (scripts/deps.sh)";                       \
    }                                                                                          \
  } while (0)

namespace boxoffice::testing {

// A contract suite run on both backends: with Redis, each test gets a redis-server of its
// own and a client to it (client_); derived fixtures build their implementation on top.
class BackendContract : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::kInProcess) return;
    BOX_REQUIRE_REDIS();
    std::string url;
    if (GetParam() == Backend::kRedis) {
      redis_ = std::make_unique<RedisServer>();
      ASSERT_TRUE(redis_->ok());
      url = redis_->url();
    } else {
      cluster_ = std::make_unique<RedisCluster>(3, 0);
      ASSERT_TRUE(cluster_->ok());
      url = cluster_->url();
    }
    RedisOptions o = *ParseRedisUrl(url);
    o.command_timeout = o.connect_timeout = o.acquire_timeout = Millis(2'000);
    client_ = std::make_unique<RedisClient>(o);
    if (cluster_) {
      ASSERT_TRUE(client_->cluster());
    }
  }
  bool redis() const { return GetParam() != Backend::kInProcess; }

  std::unique_ptr<RedisServer> redis_;
  std::unique_ptr<RedisCluster> cluster_;
  std::unique_ptr<RedisClient> client_;
};

}  // namespace boxoffice::testing
