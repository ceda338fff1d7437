// RateLimiter: at most `per_minute` hold attempts per customer per minute (API.md: 429
// RATE_LIMITED with Retry-After), as GCRA: an attempt passes when it comes no earlier than
// its theoretical arrival time minus the burst tolerance, so `per_minute` attempts may come
// at once and then one every 60 s / per_minute.
//
// InProcessRateLimiter keeps the state in memory (embedded profile: one instance).
// RedisRateLimiter keeps it in Redis with one atomic Lua script, on Redis's clock, so every
// instance enforces the same limit. If Redis does not answer, attempts pass: the limit
// protects the service from bots, it never decides a seat.
#pragma once

#include <mutex>
#include <string>
#include <unordered_map>

#include "core/clock.h"
#include "core/metrics.h"
#include "gate/redis_client.h"

namespace boxoffice {

class RateLimiter {
 public:
  struct Decision {
    bool allowed = true;
    Millis retry_after{0};
  };
  virtual ~RateLimiter() = default;
  virtual Decision Allow(int64_t customer_id) = 0;
};

class InProcessRateLimiter final : public RateLimiter {
 public:
  static constexpr size_t kMaxCustomers = 1'000'000;  // then idle entries are dropped
  InProcessRateLimiter(int per_minute, const Clock* clock);
  Decision Allow(int64_t customer_id) override;

 private:
  const Millis interval_;   // 60 s / per_minute
  const Millis tolerance_;  // interval * (per_minute - 1)
  const Clock* clock_;
  std::mutex mu_;
  std::unordered_map<int64_t, int64_t> tat_ms_;  // theoretical arrival time per customer
};

class RedisRateLimiter final : public RateLimiter {
 public:
  RedisRateLimiter(int per_minute, RedisClient* client, Metrics* metrics);
  Decision Allow(int64_t customer_id) override;

 private:
  const int per_minute_;
  RedisClient* client_;
  Counter& errors_;
};

}  // namespace boxoffice
