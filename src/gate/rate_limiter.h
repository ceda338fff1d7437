// RateLimiter: at most `per_minute` hold attempts per customer per minute (API.md: 429
// RATE_LIMITED with Retry-After), as GCRA: an attempt passes when it comes no earlier than
// its theoretical arrival time minus the burst tolerance, so `per_minute` attempts may come
// at once and then one every 60 s / per_minute.
//
// InProcessRateLimiter keeps the state in memory (embedded profile: one instance).
// RedisRateLimiter keeps it in Redis with one atomic Lua script, on Redis's clock, so every
// instance enforces the same limit.
//
// The limit never switches off. When Redis does not answer in time, or answers with an
// error, RedisRateLimiter decides by an InProcessRateLimiter of its own (same per_minute,
// the service's clock) instead. While it falls back, each instance limits on its own: a
// customer gets at most `per_minute` attempts a minute from each instance, never from
// the deployment as a whole, so N instances behind a balancer may let up to N times the
// limit through. That is looser than Redis's shared limit, but the limit is still on,
// stricter than none, and exactly the embedded profile's limit on one instance. The
// fallback's state is kept apart from Redis's and only fed while Redis fails, so the hot
// path takes no lock while Redis answers (while it fails, each check takes the fallback's
// one mutex, held for a map lookup); a customer therefore starts afresh when the fallback
// begins. Each fallback counts in boxoffice_rate_limit_errors_total.
#pragma once

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "core/clock.h"
#include "core/metrics.h"
#include "core/sync.h"
#include "gate/redis_client.h"

namespace boxoffice {

class RateLimiter {
 public:
  struct Decision {
    bool allowed = true;
    Millis retry_after{0};
  };
  // A check sent and not yet decided (see Send).
  struct Pending {
    std::optional<Decision> decided;  // known without asking anyone
    RedisPending call;
    int64_t customer_id = 0;
  };
  virtual ~RateLimiter() = default;
  virtual Decision Allow(int64_t customer_id) = 0;
  // The same check in two steps, so that it leaves in one write with the gate's claim:
  // Send sends it (or decides at once), Await decides.
  virtual Pending Send(int64_t customer_id) {
    return Pending{Allow(customer_id), nullptr, customer_id};
  }
  virtual io::asio::awaitable<Decision> Await(Pending pending) { co_return *pending.decided; }
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
  Mutex mu_;
  std::unordered_map<int64_t, int64_t> tat_ms_ BOX_GUARDED_BY(mu_);  // theoretical arrival time per customer
};

// On an I/O loop, a customer turned away (by Redis or the fallback) is remembered by that
// loop until his retry time (at most kMaxRemembered customers per loop), and refused
// without asking Redis again: a client hammering holds past its limit costs no round trip,
// and never gets a gate claim sent beside its check.
//
// `clock` drives the fallback (see the design note above); it must outlive the limiter.
class RedisRateLimiter final : public RateLimiter {
 public:
  static constexpr size_t kMaxRemembered = 100'000;  // per loop; then the table starts afresh
  RedisRateLimiter(int per_minute, RedisClient* client, const Clock* clock, Metrics* metrics);
  Decision Allow(int64_t customer_id) override;
  Pending Send(int64_t customer_id) override;
  io::asio::awaitable<Decision> Await(Pending pending) override;

 private:
  using Refused = std::unordered_map<int64_t, std::chrono::steady_clock::time_point>;
  // Redis's answer, or the fallback's when Redis gave none it could use.
  Decision Decide(const Result<RedisReply>& r, int64_t customer_id);

  const int per_minute_;
  RedisClient* client_;
  InProcessRateLimiter fallback_;  // decides while Redis fails
  Counter& errors_;
  io::PerLoop<Refused> refused_;
};

}  // namespace boxoffice
