#include "gate/rate_limiter.h"

#include "core/status.h"

namespace boxoffice {
namespace {

// KEYS[1]: the customer's key. ARGV[1]: interval ms, ARGV[2]: tolerance ms.
// Returns {1, 0} when the attempt passes, {0, retry_after_ms} otherwise. Time is Redis's.
const RedisScript kGcra(R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
if now < tat - tolerance then return {0, tat - tolerance - now} end
local new_tat = tat + interval
redis.call('SET', KEYS[1], new_tat, 'PX', new_tat - now)
return {1, 0}
)lua");

}  // namespace

InProcessRateLimiter::InProcessRateLimiter(int per_minute, const Clock* clock)
    : interval_(Millis(60'000) / per_minute),
      tolerance_(interval_ * (per_minute - 1)),
      clock_(clock) {
  // --holds-per-minute is 1..100,000 (its flag check; HoldService asserts it too).
  BOX_ASSERT(per_minute >= 1 && interval_ >= Millis(0) && tolerance_ >= Millis(0));
}

RateLimiter::Decision InProcessRateLimiter::Allow(int64_t customer_id) {
  const int64_t now = ToEpochMs(clock_->Now());
  MutexLock lock(mu_);
  if (tat_ms_.size() >= kMaxCustomers) {
    std::erase_if(tat_ms_, [now](const auto& e) { return e.second <= now; });
  }
  int64_t& tat = tat_ms_.try_emplace(customer_id, now).first->second;
  tat = std::max(tat, now);
  if (now < tat - tolerance_.count()) {
    const int64_t wait_ms = tat - tolerance_.count() - now;
    BOX_ASSERT(wait_ms > 0);  // a refusal always names a wait (429's Retry-After)
    return Decision{false, Millis(wait_ms)};
  }
  tat += interval_.count();
  return Decision{true, Millis(0)};
}

RedisRateLimiter::RedisRateLimiter(int per_minute, RedisClient* client, const Clock* clock,
                                   Metrics* metrics)
    : per_minute_(per_minute),
      client_(client),
      fallback_(per_minute, clock),
      errors_(metrics->GetCounter(
          "boxoffice_rate_limit_errors_total",
          "Rate-limit checks Redis did not answer, decided by this instance's own limit.")) {}

RateLimiter::Decision RedisRateLimiter::Allow(int64_t customer_id) {
  return io::RunSync(Await(Send(customer_id)));
}

RateLimiter::Pending RedisRateLimiter::Send(int64_t customer_id) {
  Refused* refused = refused_.Get([](io::asio::io_context&) { return std::make_unique<Refused>(); });
  if (refused) {
    if (auto it = refused->find(customer_id); it != refused->end()) {
      const auto now = std::chrono::steady_clock::now();
      if (now < it->second) {
        const Millis wait = std::chrono::ceil<Millis>(it->second - now);
        BOX_ASSERT(wait > Millis(0));
        return Pending{Decision{false, wait}, nullptr, customer_id};
      }
      refused->erase(it);
    }
  }
  const int64_t interval = 60'000 / per_minute_;
  Pending pending;
  pending.customer_id = customer_id;
  pending.call = client_->SendEval(kGcra, {"rl:hold:{" + std::to_string(customer_id) + "}"},
                                   {std::to_string(interval),
                                    std::to_string(interval * (per_minute_ - 1))});
  return pending;
}

io::asio::awaitable<RateLimiter::Decision> RedisRateLimiter::Await(Pending pending) {
  if (pending.decided) co_return *pending.decided;
  auto reply = co_await client_->Await(std::move(pending.call));
  const Decision d = Decide(reply, pending.customer_id);
  if (!d.allowed) {
    Refused* refused =
        refused_.Get([](io::asio::io_context&) { return std::make_unique<Refused>(); });
    if (refused) {
      if (refused->size() >= kMaxRemembered) refused->clear();
      (*refused)[pending.customer_id] = std::chrono::steady_clock::now() + d.retry_after;
      BOX_ASSERT(refused->size() <= kMaxRemembered);
    }
  }
  co_return d;
}

RateLimiter::Decision RedisRateLimiter::Decide(const Result<RedisReply>& r, int64_t customer_id) {
  if (!r.ok() || r->type != RedisReply::Type::kArray || r->elements.size() != 2) {
    // No answer, an error, or not the script's answer: this instance decides on its own
    // (never "allow everything").
    errors_.Inc();
    return fallback_.Allow(customer_id);
  }
  if (r->elements[0].integer == 1) return Decision{true, Millis(0)};
  return Decision{false, Millis(r->elements[1].integer)};
}

}  // namespace boxoffice
