#include "gate/seat_gate.h"

#include <unordered_map>

#include "core/log.h"
#include "core/status.h"

namespace boxoffice {
namespace {

// KEYS: the seats' keys. ARGV[1]: hold id, ARGV[2]: TTL in ms. Returns the 1-based
// positions of the keys that exist (nothing set), or an empty array (all set).
const RedisScript kClaim(R"lua(
local taken = {}
for i, key in ipairs(KEYS) do
  if redis.call('EXISTS', key) == 1 then taken[#taken + 1] = i end
end
if #taken > 0 then return taken end
for _, key in ipairs(KEYS) do
  redis.call('SET', key, ARGV[1], 'PX', ARGV[2])
end
return taken
)lua");

// The seat rules' claim (docs/seat-rules.md). KEYS: every seat the picks name, once.
// ARGV[1]: hold id, ARGV[2]: TTL in ms, ARGV[3]: the number of picks, then per pick: its
// seat count and seats, its guard count and guards as (seat, beyond) pairs, all as
// 1-based places in KEYS (beyond 0: an aisle, the row's end, or a seat of the pick). A key
// that exists is a taken seat (CheckPick of domain/hold.h). The first pick whose seats are free
// and whose guards hold is set to ARGV[1]: returns {1, pick}. Else {0, taken, stranded}:
// for the last pick tried, its seats taken, and (when none is) the guards' seats it would
// leave alone.
const RedisScript kClaimPicks(R"lua(
local known = {}
local function taken(k)
  local t = known[k]
  if t == nil then
    t = redis.call('EXISTS', KEYS[k]) == 1
    known[k] = t
  end
  return t
end
local pos = 4
local picks = tonumber(ARGV[3])
local bad, alone = {}, {}
for p = 1, picks do
  local n = tonumber(ARGV[pos])
  local first = pos + 1
  pos = first + n
  bad, alone = {}, {}
  for j = first, pos - 1 do
    local k = tonumber(ARGV[j])
    if taken(k) then bad[#bad + 1] = k end
  end
  local g = tonumber(ARGV[pos])
  local guards = pos + 1
  pos = guards + 2 * g
  if #bad == 0 then
    for j = guards, pos - 1, 2 do
      local s, b = tonumber(ARGV[j]), tonumber(ARGV[j + 1])
      if not taken(s) and (b == 0 or taken(b)) then alone[#alone + 1] = s end
    end
    if #alone == 0 then
      for j = first, first + n - 1 do
        redis.call('SET', KEYS[tonumber(ARGV[j])], ARGV[1], 'PX', ARGV[2])
      end
      return {1, p}
    end
  end
end
return {0, bad, alone}
)lua");

// Deletes the keys whose value is still ARGV[1]; returns how many.
const RedisScript kRelease(R"lua(
local n = 0
for _, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then n = n + redis.call('DEL', key) end
end
return n
)lua");

// Sets a TTL of ARGV[2] ms on the keys whose value is still ARGV[1]; returns how many.
const RedisScript kRearm(R"lua(
local n = 0
for _, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then n = n + redis.call('PEXPIRE', key, ARGV[2]) end
end
return n
)lua");

// Booked seats: keys that carry ARGV[1] or none get ARGV[1] until ARGV[2] (epoch ms).
const RedisScript kKeepUntil(R"lua(
local n = 0
for _, key in ipairs(KEYS) do
  local v = redis.call('GET', key)
  if v == false or v == ARGV[1] then
    redis.call('SET', key, ARGV[1], 'PXAT', ARGV[2])
    n = n + 1
  end
end
return n
)lua");

// The store gave the seats to ARGV[1]: every key carries it for ARGV[2] ms.
const RedisScript kRepair(R"lua(
for _, key in ipairs(KEYS) do
  redis.call('SET', key, ARGV[1], 'PX', ARGV[2])
end
return #KEYS
)lua");

int64_t NowMs() { return ToEpochMs(SystemClock().Now()); }

}  // namespace

std::string RedisSeatGate::Key(int64_t showtime_id, const std::string& seat) {
  return "seat:{" + std::to_string(showtime_id) + "}:" + seat;
}

RedisSeatGate::RedisSeatGate(RedisClient* client, RedisGateOptions options, Metrics* metrics)
    : client_(client),
      options_(options),
      rejected_(metrics->GetCounter("boxoffice_gate_total", "Seat gate decisions by outcome.",
                                    "outcome=\"rejected\"")),
      skipped_(metrics->GetCounter("boxoffice_gate_total", "Seat gate decisions by outcome.",
                                   "outcome=\"skipped\"")),
      errors_(metrics->GetCounter("boxoffice_gate_errors_total",
                                  "Redis calls of the seat gate that failed or timed out.")) {
  metrics->AddGauge("boxoffice_gate_up",
                    "1 while the seat gate reaches Redis, 0 while holds bypass it.",
                    [this] { return up_.load() ? 1.0 : 0.0; });
}

static std::vector<std::string> Keys(int64_t showtime_id, const std::vector<std::string>& seats) {
  std::vector<std::string> keys;
  keys.reserve(seats.size());
  for (const auto& seat : seats) keys.push_back(RedisSeatGate::Key(showtime_id, seat));
  return keys;
}

bool RedisSeatGate::Resting() const { return NowMs() < resting_until_ms_.load(); }

void RedisSeatGate::Record(const Result<RedisReply>& r) {
  if (!r.ok()) {
    errors_.Inc();
    resting_until_ms_.store(NowMs() + options_.retry_after.count());
    if (up_.exchange(false)) {
      LogWarn("seat gate down; holds go straight to the store", {{"error", r.status().message()}});
    }
    return;
  }
  if (!up_.exchange(true)) LogInfo("seat gate back");
}

void RedisSeatGate::Tidy(const RedisScript& script, int64_t showtime_id,
                         const std::vector<std::string>& seats,
                         const std::vector<std::string>& args, bool even_resting) {
  if (!even_resting && Resting()) return;
  client_->Aside(client_->SendEval(script, Keys(showtime_id, seats), args),
                 [this](Result<RedisReply> r) { Record(r); });
}

SeatGate::Decision RedisSeatGate::Claim(int64_t showtime_id, const std::vector<std::string>& seats,
                                        const std::string& hold_id, Millis ttl) {
  return io::RunSync(AwaitClaim(SendClaim(showtime_id, seats, hold_id, ttl)));
}

SeatGate::PendingClaim RedisSeatGate::SendClaim(int64_t showtime_id,
                                                const std::vector<std::string>& seats,
                                                const std::string& hold_id, Millis ttl) {
  // HoldService's: validated seats, a fresh hold id, min(gate_claim_ttl, the hold's TTL).
  BOX_ASSERT(!seats.empty() && !hold_id.empty() && ttl > Millis(0));
  PendingClaim pending{nullptr, seats, std::nullopt};
  if (Resting()) return pending;
  pending.call =
      client_->SendEval(kClaim, Keys(showtime_id, seats), {hold_id, std::to_string(ttl.count())});
  return pending;
}

io::asio::awaitable<SeatGate::Decision> RedisSeatGate::AwaitClaim(PendingClaim pending) {
  if (!pending.call) {
    skipped_.Inc();
    co_return Decision{Verdict::kSkipped, {}};
  }
  auto r = co_await client_->Await(std::move(pending.call));
  Record(r);
  co_return Decide(r, pending.seats);
}

std::shared_ptr<const RedisSeatGate::EncodedPicks> RedisSeatGate::Encode(int64_t showtime_id,
                                                                         const Picks& picks) {
  BOX_ASSERT(picks != nullptr && !picks->empty());  // SendPicks sends no empty list
  const bool kept = picks->size() > 1;  // a pick by hand is its request's own
  if (kept) {
    MutexLock lock(encoded_mu_);
    auto it = encoded_.find(picks.get());
    if (it != encoded_.end() && it->second->of.lock() == picks &&
        it->second->showtime_id == showtime_id) {
      return it->second;
    }
  }
  auto encoded = std::make_shared<EncodedPicks>();
  encoded->of = picks;
  encoded->showtime_id = showtime_id;
  std::vector<std::string> codes;
  std::unordered_map<std::string, size_t> place;  // in KEYS, 1-based
  auto at = [&](const std::string& code) {
    auto [it, added] = place.try_emplace(code, codes.size() + 1);
    if (added) codes.push_back(code);
    return std::to_string(it->second);
  };
  std::vector<std::string>& args = encoded->args;
  args.push_back(std::to_string(picks->size()));
  for (const SeatPick& pick : *picks) {
    args.push_back(std::to_string(pick.seats.size()));
    for (const auto& seat : pick.seats) args.push_back(at(seat));
    args.push_back(std::to_string(pick.guards.size()));
    for (const auto& g : pick.guards) {
      args.push_back(at(g.seat));
      args.push_back(g.beyond.empty() ? "0" : at(g.beyond));
    }
  }
  encoded->keys = Keys(showtime_id, codes);
  BOX_ASSERT(codes.size() == place.size());  // each seat once, at the place `at` gave it
  encoded->codes = std::make_shared<const std::vector<std::string>>(std::move(codes));
  if (kept) {
    MutexLock lock(encoded_mu_);
    if (encoded_.size() >= kMaxEncodedPicks) encoded_.clear();
    encoded_[picks.get()] = encoded;
    BOX_ASSERT(encoded_.size() <= kMaxEncodedPicks);
  }
  return encoded;
}

SeatGate::PendingPicks RedisSeatGate::SendPicks(int64_t showtime_id, Picks picks,
                                                const std::string& hold_id, Millis ttl) {
  PendingPicks pending{nullptr, nullptr, picks ? picks->size() : 0};
  if (Resting() || !picks || picks->empty()) return pending;
  auto encoded = Encode(showtime_id, picks);
  pending.codes = encoded->codes;
  std::vector<std::string> args;
  args.reserve(2 + encoded->args.size());
  args.push_back(hold_id);
  args.push_back(std::to_string(ttl.count()));
  args.insert(args.end(), encoded->args.begin(), encoded->args.end());
  pending.call = client_->SendEval(kClaimPicks, encoded->keys, args);
  return pending;
}

io::asio::awaitable<SeatGate::PicksDecision> RedisSeatGate::AwaitPicks(PendingPicks pending) {
  if (!pending.call) {
    skipped_.Inc();
    co_return PicksDecision{};
  }
  auto r = co_await client_->Await(std::move(pending.call));
  Record(r);
  PicksDecision d;
  const auto& e = r.ok() ? r->elements : std::vector<RedisReply>{};
  if (!r.ok() || r->type != RedisReply::Type::kArray || e.empty()) {
    skipped_.Inc();
    d.verdict = Verdict::kUncertain;  // asked, no answer: a pick may have been claimed
    co_return d;
  }
  if (e[0].integer == 1 && e.size() == 2 && e[1].integer >= 1 &&
      static_cast<size_t>(e[1].integer) <= pending.picks) {
    d.verdict = Verdict::kClaimed;
    d.chosen = static_cast<size_t>(e[1].integer);
    co_return d;
  }
  d.verdict = Verdict::kTaken;
  auto codes = [&](size_t at, std::vector<std::string>* out) {
    if (at >= e.size()) return;
    for (const auto& place : e[at].elements) {
      if (pending.codes && place.integer >= 1 &&
          static_cast<size_t>(place.integer) <= pending.codes->size()) {
        out->push_back((*pending.codes)[static_cast<size_t>(place.integer) - 1]);
      }
    }
  };
  codes(1, &d.taken);
  codes(2, &d.stranded);
  rejected_.Inc();
  co_return d;
}

SeatGate::Decision RedisSeatGate::Decide(const Result<RedisReply>& r,
                                         const std::vector<std::string>& seats) {
  if (!r.ok() || r->type != RedisReply::Type::kArray) {
    // Asked, and no answer: the keys may have been set all the same.
    skipped_.Inc();
    return Decision{Verdict::kUncertain, {}};
  }
  if (r->elements.empty()) return Decision{Verdict::kClaimed, {}};
  Decision d{Verdict::kTaken, {}};
  for (const auto& e : r->elements) {
    const int64_t i = e.integer - 1;
    if (i >= 0 && static_cast<size_t>(i) < seats.size()) d.taken.push_back(seats[i]);
  }
  rejected_.Inc();
  return d;
}

void RedisSeatGate::KeepUntil(int64_t showtime_id, const std::vector<std::string>& seats,
                              const std::string& hold_id, Instant until) {
  if (until <= SystemClock().Now()) return;
  Tidy(kKeepUntil, showtime_id, seats, {hold_id, std::to_string(ToEpochMs(until))});
}

Status RedisSeatGate::Ping() { return client_->Ping(); }

io::asio::awaitable<Status> RedisSeatGate::PingAsync() { co_return co_await client_->PingAsync(); }

void RedisSeatGate::Release(int64_t showtime_id, const std::vector<std::string>& seats,
                            const std::string& hold_id) {
  // A failure leaves keys that expire with the hold's TTL: never wrong, but pessimistic
  // until then, so this is tried even while the gate rests.
  Tidy(kRelease, showtime_id, seats, {hold_id}, /*even_resting=*/true);
}

io::asio::awaitable<void> RedisSeatGate::ReleaseNow(int64_t showtime_id,
                                                    std::vector<std::string> seats,
                                                    std::string hold_id) {
  if (Resting()) {
    // Redis failed a moment ago: waiting for it would only delay the answer (up to the
    // command timeout) for keys it may not have; tried aside, as Release is.
    Release(showtime_id, seats, hold_id);
    co_return;
  }
  std::vector<std::string> args = {hold_id};
  RedisPending call = client_->SendEval(kRelease, Keys(showtime_id, seats), args);
  auto reply = co_await client_->Await(std::move(call));
  Record(reply);
}

io::asio::awaitable<void> RedisSeatGate::RepairNow(int64_t showtime_id,
                                                   std::vector<std::string> seats,
                                                   std::string hold_id, Millis ttl) {
  if (ttl <= Millis(0)) co_return;
  std::vector<std::string> args = {hold_id, std::to_string(ttl.count())};
  RedisPending call = client_->SendEval(kRepair, Keys(showtime_id, seats), args);
  auto reply = co_await client_->Await(std::move(call));
  Record(reply);
}

void RedisSeatGate::Rearm(int64_t showtime_id, const std::vector<std::string>& seats,
                          const std::string& hold_id, Millis ttl) {
  if (ttl <= Millis(0)) return;
  Tidy(kRearm, showtime_id, seats, {hold_id, std::to_string(ttl.count())});
}

void RedisSeatGate::Repair(int64_t showtime_id, const std::vector<std::string>& seats,
                           const std::string& hold_id, Millis ttl) {
  if (ttl <= Millis(0)) return;
  Tidy(kRepair, showtime_id, seats, {hold_id, std::to_string(ttl.count())});
}

}  // namespace boxoffice
