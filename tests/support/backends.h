// What the contract suites of the accelerators share: the two backends each runs on, their
// test names, and the skip (or, under `make test`, failure) when Redis is not installed.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "gate/redis_client.h"
#include "support/redis_server.h"
#include "support/test_env.h"

namespace boxoffice::testing {

enum class Backend { kInProcess, kRedis };

inline std::string BackendName(const ::testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::kRedis ? "Redis" : "InProcess";
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
    if (GetParam() != Backend::kRedis) return;
    BOX_REQUIRE_REDIS();
    redis_ = std::make_unique<RedisServer>();
    ASSERT_TRUE(redis_->ok());
    RedisOptions o = *ParseRedisUrl(redis_->url());
    o.command_timeout = o.connect_timeout = o.acquire_timeout = Millis(2'000);
    client_ = std::make_unique<RedisClient>(o);
  }
  bool redis() const { return GetParam() == Backend::kRedis; }

  std::unique_ptr<RedisServer> redis_;
  std::unique_ptr<RedisClient> client_;
};

}  // namespace boxoffice::testing
