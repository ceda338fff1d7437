// SeatGate: a fast "no" in front of the store for premiere load (design article §6.2 and
// the third article). The store stays the only judge of who gets a seat: the gate can only
// turn a hold away early, and only for seats that the store holds or has booked.
//
// RedisSeatGate keeps one key per seat, `seat:{showtimeId}:CODE` (the hash tag keeps a
// showtime in one Redis Cluster slot), whose value is the hold id and whose TTL is the
// hold's. One Lua script checks and sets all of a hold's keys atomically; every other
// change is token-checked (it touches a key only while its value is this hold id), so a
// stale hold can never release or extend someone else's seat. Never a plain DEL of another
// hold's key, never SETNX followed by EXPIRE.
//
// Clocks: a key's TTL is relative (PX), counted by Redis from when it is set, and the hold's
// real end is the store's (DESIGN.md invariant 7). A TTL derived with another clock than
// the store's can only make a key end earlier than its hold (the store then refuses the
// seat: slower) or later (a free seat turned away: stricter, and repaired, below); neither
// lets a seat go twice, so the gate does not need the store's clock.
//
// Keys a lost release left behind would turn a free seat away until their TTL. So when the
// gate says "taken" while the instance's own seat map shows every such seat AVAILABLE, the
// hold goes to the store, and if the store gives the seats, Repair sets their keys to the
// new hold (HoldService).
//
// When Redis is down, slow (past its timeout) or was wiped, holds go straight to the
// store: slower, never wrong. After a failure the gate stays out of the way for
// `retry_after`, then tries Redis again by itself. A claim whose answer timed out may still
// have been applied; if the store then refuses the hold, its keys are released, so a lost
// answer never leaves a free seat turned away.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/metrics.h"
#include "core/sync.h"
#include "domain/hold.h"
#include "gate/redis_client.h"

namespace boxoffice {

class SeatGate {
 public:
  enum class Verdict {
    kClaimed,  // every key set to this hold: go on to the store
    kTaken,    // some seats are held or booked: `taken` names them, the store is not asked
    kSkipped,  // the gate was not asked (Redis resting after a failure): go on to the store
    // Redis was asked but did not answer in time: the keys may have been set all the same,
    // so go on to the store and, if it refuses, Release them (else they would turn the
    // seats away until the hold's TTL ran out, while the store has them free).
    kUncertain,
  };
  struct Decision {
    Verdict verdict = Verdict::kSkipped;
    std::vector<std::string> taken;
  };

  // A claim sent and not yet decided (see SendClaim).
  struct PendingClaim {
    RedisPending call;  // sent, to be decided
    std::vector<std::string> seats;
    std::optional<Decision> decided;  // decided already (neither: the gate was resting)
  };

  virtual ~SeatGate() = default;
  // All of the seats' keys or none, for ttl.
  virtual Decision Claim(int64_t showtime_id, const std::vector<std::string>& seats,
                         const std::string& hold_id, Millis ttl) = 0;
  // The same claim in two steps, so that it leaves in one write with other Redis calls
  // sent before the caller waits (the rate limit): SendClaim sends it, AwaitClaim decides.
  // By default the claim is decided at once by Claim (a gate with no asynchronous form).
  virtual PendingClaim SendClaim(int64_t showtime_id, const std::vector<std::string>& seats,
                                 const std::string& hold_id, Millis ttl) {
    return PendingClaim{nullptr, seats, Claim(showtime_id, seats, hold_id, ttl)};
  }
  virtual io::asio::awaitable<Decision> AwaitClaim(PendingClaim pending) {
    co_return pending.decided ? std::move(*pending.decided) : Decision{Verdict::kSkipped, {}};
  }

  // A hold under the seat rules (docs/seat-rules.md): best available's ranked blocks, or one
  // pick by hand with its guards. The picks are tried in order in the same atomic step, the
  // first whose keys are all free and whose guards hold, a key counting as taken (CheckPick,
  // domain/hold.h), being claimed for ttl.
  struct PicksDecision {
    // kClaimed: pick `chosen` (1-based) is claimed; kTaken: no pick passed (for a single
    // pick, `taken` names its seats whose keys exist, else `stranded` the guards' seats it
    // would leave alone); kSkipped, kUncertain: as for Claim.
    Verdict verdict = Verdict::kSkipped;
    size_t chosen = 0;
    std::vector<std::string> taken;
    std::vector<std::string> stranded;
  };
  struct PendingPicks {
    RedisPending call;  // sent, to be decided (null: the gate was not asked)
    // The seats the call's keys are, in its KEYS order.
    std::shared_ptr<const std::vector<std::string>> codes;
    size_t picks = 0;
  };
  // Sends the picks' claim (so that it leaves with the rate limit); by default not asked.
  using Picks = std::shared_ptr<const std::vector<SeatPick>>;
  virtual PendingPicks SendPicks(int64_t showtime_id, Picks picks, const std::string& hold_id,
                                 Millis ttl) {
    (void)showtime_id, (void)picks, (void)hold_id, (void)ttl;
    return {};
  }
  virtual io::asio::awaitable<PicksDecision> AwaitPicks(PendingPicks pending) {
    (void)pending;
    co_return PicksDecision{};
  }
  // Release, Rearm, KeepUntil and Repair only tidy up: on an I/O loop they are sent and
  // their answers awaited on the side, so the caller's answer never waits for them.
  //
  // Removes the keys that still carry hold_id. Tried even while the gate rests after a
  // failure: a key left behind would turn a free seat away until its TTL.
  virtual void Release(int64_t showtime_id, const std::vector<std::string>& seats,
                       const std::string& hold_id) = 0;
  // Release, awaited: when it returns, Redis has applied it (or failed). For a claim sent
  // beside a check that then refused the request, and for a hold the customer releases:
  // the answer goes out only once the keys are gone, so nobody the customer tells is
  // turned away by them.
  virtual io::asio::awaitable<void> ReleaseNow(int64_t showtime_id, std::vector<std::string> seats,
                                               std::string hold_id) {
    Release(showtime_id, seats, hold_id);
    co_return;
  }
  // The keys that still carry hold_id now live for ttl (extend, checkout).
  virtual void Rearm(int64_t showtime_id, const std::vector<std::string>& seats,
                     const std::string& hold_id, Millis ttl) = 0;
  // The seats are booked: their keys carry hold_id until `until` (the showtime's start), so
  // the gate keeps turning holds on sold seats away. A key that expired is set again; a key
  // of another hold is left alone.
  virtual void KeepUntil(int64_t showtime_id, const std::vector<std::string>& seats,
                         const std::string& hold_id, Instant until) = 0;
  // The store has just given these seats to hold_id although the gate said they were taken
  // (keys a lost release left behind): every key now carries hold_id for ttl, whatever it
  // carried. Only the store's yes may call this.
  virtual void Repair(int64_t showtime_id, const std::vector<std::string>& seats,
                      const std::string& hold_id, Millis ttl) = 0;
  // Repair, awaited: the hold is answered once its keys are set, so a release the customer
  // sends next (maybe through another connection) cannot land before the repair.
  virtual io::asio::awaitable<void> RepairNow(int64_t showtime_id, std::vector<std::string> seats,
                                              std::string hold_id, Millis ttl) {
    Repair(showtime_id, seats, hold_id, ttl);
    co_return;
  }
  // Whether the last call reached Redis (for /metrics).
  virtual bool Up() const = 0;
  // A round trip to Redis now (for /readyz).
  virtual Status Ping() = 0;
  // The same, awaited on an I/O loop (by default Ping on the loop's blocking pool).
  virtual io::asio::awaitable<Status> PingAsync() {
    auto work = [this] { return Ping(); };  // (named: g++ 12 and lambdas in co_await)
    co_return co_await io::Offload(std::move(work));
  }
};

struct RedisGateOptions {
  Millis retry_after{1'000};  // after a failure, holds skip the gate this long
};

class RedisSeatGate final : public SeatGate {
 public:
  // client: shared with the other Redis calls of the hold path; it outlives the gate.
  RedisSeatGate(RedisClient* client, RedisGateOptions options, Metrics* metrics);
  // A gate with a client of its own.
  RedisSeatGate(std::unique_ptr<RedisClient> client, RedisGateOptions options, Metrics* metrics)
      : RedisSeatGate(client.get(), options, metrics) {
    owned_client_ = std::move(client);
  }

  Decision Claim(int64_t showtime_id, const std::vector<std::string>& seats,
                 const std::string& hold_id, Millis ttl) override;
  PendingClaim SendClaim(int64_t showtime_id, const std::vector<std::string>& seats,
                         const std::string& hold_id, Millis ttl) override;
  io::asio::awaitable<Decision> AwaitClaim(PendingClaim pending) override;
  PendingPicks SendPicks(int64_t showtime_id, Picks picks, const std::string& hold_id,
                         Millis ttl) override;
  // Lists of picks whose encoding is kept (best available's, shared by a layout); then the
  // table starts afresh.
  static constexpr size_t kMaxEncodedPicks = 1'024;  // each up to about 40 KB
  io::asio::awaitable<PicksDecision> AwaitPicks(PendingPicks pending) override;
  void Release(int64_t showtime_id, const std::vector<std::string>& seats,
               const std::string& hold_id) override;
  io::asio::awaitable<void> ReleaseNow(int64_t showtime_id, std::vector<std::string> seats,
                                       std::string hold_id) override;
  io::asio::awaitable<void> RepairNow(int64_t showtime_id, std::vector<std::string> seats,
                                      std::string hold_id, Millis ttl) override;
  void Rearm(int64_t showtime_id, const std::vector<std::string>& seats, const std::string& hold_id,
             Millis ttl) override;
  void KeepUntil(int64_t showtime_id, const std::vector<std::string>& seats,
                 const std::string& hold_id, Instant until) override;
  void Repair(int64_t showtime_id, const std::vector<std::string>& seats,
              const std::string& hold_id, Millis ttl) override;
  bool Up() const override { return up_.load(); }
  Status Ping() override;
  io::asio::awaitable<Status> PingAsync() override;  // on the loop's connection

  static std::string Key(int64_t showtime_id, const std::string& seat);

 private:
  bool Resting() const;
  // Records a call's outcome: a failure rests the gate for retry_after.
  void Record(const Result<RedisReply>& r);
  // Sends a tidying script (unless resting, or even then) and records its outcome aside.
  void Tidy(const RedisScript& script, int64_t showtime_id, const std::vector<std::string>& seats,
            const std::vector<std::string>& args, bool even_resting = false);
  Decision Decide(const Result<RedisReply>& r, const std::vector<std::string>& seats);
  // A list of picks as kClaimPicks takes it: its seats once (codes, keys) and the ARGV that
  // follow the hold id and TTL. Best available's lists are encoded once and kept.
  struct EncodedPicks {
    std::weak_ptr<const std::vector<SeatPick>> of;
    int64_t showtime_id = 0;
    std::shared_ptr<const std::vector<std::string>> codes;
    std::vector<std::string> keys;
    std::vector<std::string> args;
  };
  std::shared_ptr<const EncodedPicks> Encode(int64_t showtime_id, const Picks& picks);
  Mutex encoded_mu_;                                                         // a leaf
  std::unordered_map<const void*, std::shared_ptr<const EncodedPicks>> encoded_ BOX_GUARDED_BY(encoded_mu_);

  std::unique_ptr<RedisClient> owned_client_;  // null when the client is shared
  RedisClient* client_;
  RedisGateOptions options_;
  std::atomic<bool> up_{true};
  std::atomic<int64_t> resting_until_ms_{0};
  Counter& rejected_;
  Counter& skipped_;
  Counter& errors_;
};

}  // namespace boxoffice
