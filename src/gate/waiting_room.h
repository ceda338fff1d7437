// WaitingRoom: the queue of API.md's virtual waiting room, per showtime: customers wait in
// arrival order, at most `active_limit` are admitted at once, each for `admission_ttl`.
//
// Two structures per showtime, never a counter: the queue (customer by arrival sequence)
// and the admitted set (customer by the end of their admission). The number admitted is
// the size of that set after removing the admissions that ended, so a slot comes back the
// moment an admission expires or ends, and nothing can leak: there is no count to forget
// to decrease (the known failure of size counters in other waiting rooms). Advance()
// removes ended admissions and admits the next in line, atomically; every call that reads
// the room advances it first, and the service also advances every open room each second,
// so admission moves even when nobody asks.
//
// Clocks: `now` is the calling instance's clock, not the store's (DESIGN.md invariant 7).
// With Redis, instances whose clocks differ by d may end an admission up to d early or late
// and admit the next in line as much sooner or later. That changes only who may try to hold
// and for how long, never who gets a seat (the store's conditional UPDATE decides, on its
// own clock), so the room keeps the callers' clocks, which tests can move.
//
// InProcessWaitingRoom keeps it in memory (embedded profile: one instance).
// RedisWaitingRoom keeps it in Redis (two sorted sets per showtime, changed only by Lua
// scripts), so every instance shares one queue.
#pragma once

#include <ext/pb_ds/assoc_container.hpp>
#include <ext/pb_ds/tree_policy.hpp>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>

#include "core/clock.h"
#include "core/status.h"
#include "core/sync.h"
#include "domain/showtime.h"
#include "gate/redis_client.h"

namespace boxoffice {

// Where a customer stands in a showtime's room.
struct QueuePlace {
  bool admitted = false;
  int64_t position = 0;           // 1 = next to be admitted; 0 when admitted
  Instant admitted_until{};       // when admitted
  int64_t recent_admissions = 0;  // admissions granted in the last kRateWindow (for the ETA)
};

struct RoomSizes {
  int64_t queued = 0;
  int64_t admitted = 0;
};

class WaitingRoom {
 public:
  static constexpr int64_t kMaxQueued = 1'000'000;  // per showtime; past it Join is refused
  static constexpr Millis kRateWindow{300'000};     // admissions counted for the wait estimate

  virtual ~WaitingRoom() = default;
  // Joins the queue (a customer already queued or admitted keeps their place), then
  // advances. kUnavailable when the queue is full or the backend does not answer.
  virtual Result<QueuePlace> Join(int64_t showtime_id, int64_t customer_id,
                                  const WaitingRoomConfig& config, Instant now) = 0;
  // Advances, then where the customer stands; kNotFound when neither queued nor admitted.
  virtual Result<QueuePlace> Find(int64_t showtime_id, int64_t customer_id,
                                  const WaitingRoomConfig& config, Instant now) = 0;
  // Join or Find, awaited on an I/O loop without blocking it. By default the blocking form
  // (an in-process room never waits on anything).
  enum class PlaceOp { kJoin, kFind };
  virtual io::asio::awaitable<Result<QueuePlace>> PlaceAsync(PlaceOp op, int64_t showtime_id,
                                                             int64_t customer_id,
                                                             WaitingRoomConfig config,
                                                             Instant now) {
    co_return op == PlaceOp::kJoin ? Join(showtime_id, customer_id, config, now)
                                   : Find(showtime_id, customer_id, config, now);
  }
  // Whether the customer's admission runs at `now` (the check on every hold).
  virtual Result<bool> Admitted(int64_t showtime_id, int64_t customer_id, Instant now) = 0;
  // The same, awaited on an I/O loop without blocking it.
  virtual io::asio::awaitable<Result<bool>> AdmittedAsync(int64_t showtime_id,
                                                          int64_t customer_id, Instant now) {
    co_return Admitted(showtime_id, customer_id, now);
  }
  // Ends the customer's admission (their booking is confirmed) and advances.
  virtual Status Leave(int64_t showtime_id, int64_t customer_id, const WaitingRoomConfig& config,
                       Instant now) = 0;
  // Ends expired admissions and admits the next in line up to active_limit.
  virtual Result<RoomSizes> Advance(int64_t showtime_id, const WaitingRoomConfig& config,
                                    Instant now) = 0;
  // The showtime's room was switched off: whoever waits in it loses their place.
  virtual void Forget(int64_t showtime_id) = 0;
};

class InProcessWaitingRoom final : public WaitingRoom {
 public:
  Result<QueuePlace> Join(int64_t showtime_id, int64_t customer_id, const WaitingRoomConfig& config,
                          Instant now) override;
  Result<QueuePlace> Find(int64_t showtime_id, int64_t customer_id, const WaitingRoomConfig& config,
                          Instant now) override;
  Result<bool> Admitted(int64_t showtime_id, int64_t customer_id, Instant now) override;
  Status Leave(int64_t showtime_id, int64_t customer_id, const WaitingRoomConfig& config,
               Instant now) override;
  Result<RoomSizes> Advance(int64_t showtime_id, const WaitingRoomConfig& config,
                            Instant now) override;
  void Forget(int64_t showtime_id) override;
  // Rooms in memory: a room with nobody queued or admitted is dropped at once, so this
  // counts only rooms that have people in them (tests show it bounded).
  size_t RoomCount();

 private:
  // An order-statistic tree: a customer's position is the number of earlier arrivals.
  using Queue =
      __gnu_pbds::tree<std::pair<int64_t, int64_t>, __gnu_pbds::null_type, std::less<>,
                       __gnu_pbds::rb_tree_tag, __gnu_pbds::tree_order_statistics_node_update>;
  struct Room {
    int64_t next_seq = 0;
    Queue queue;                                    // (seq, customer)
    std::unordered_map<int64_t, int64_t> seq_of;    // customer -> seq, while queued
    std::unordered_map<int64_t, int64_t> admitted;  // customer -> end of admission (ms)
    std::set<std::pair<int64_t, int64_t>> by_end;   // (end ms, customer)
    std::multiset<int64_t> granted;                 // admission times (ms) in kRateWindow
  };
  RoomSizes AdvanceLocked(Room& room, const WaitingRoomConfig& config, Instant now)
      BOX_REQUIRES(mu_);
  // Drops the room if nobody is in it any more.
  void DropIfEmpty(std::unordered_map<int64_t, Room>::iterator it) BOX_REQUIRES(mu_);
  QueuePlace PlaceOf(const Room& room, int64_t customer_id) const;
  bool Present(const Room& room, int64_t customer_id) const;

  Mutex mu_;
  std::unordered_map<int64_t, Room> rooms_ BOX_GUARDED_BY(mu_);
};

class RedisWaitingRoom final : public WaitingRoom {
 public:
  // Keys of a showtime's room expire this long after its last join, so a finished
  // showtime's room goes away by itself.
  static constexpr Millis kKeyLifetime{48 * 3'600'000};

  explicit RedisWaitingRoom(RedisClient* client) : client_(client) {}
  Result<QueuePlace> Join(int64_t showtime_id, int64_t customer_id, const WaitingRoomConfig& config,
                          Instant now) override;
  Result<QueuePlace> Find(int64_t showtime_id, int64_t customer_id, const WaitingRoomConfig& config,
                          Instant now) override;
  // One script call on the loop's pipelined connection.
  io::asio::awaitable<Result<QueuePlace>> PlaceAsync(PlaceOp op, int64_t showtime_id,
                                                     int64_t customer_id, WaitingRoomConfig config,
                                                     Instant now) override;
  Result<bool> Admitted(int64_t showtime_id, int64_t customer_id, Instant now) override;
  io::asio::awaitable<Result<bool>> AdmittedAsync(int64_t showtime_id, int64_t customer_id,
                                                  Instant now) override;
  Status Leave(int64_t showtime_id, int64_t customer_id, const WaitingRoomConfig& config,
               Instant now) override;
  Result<RoomSizes> Advance(int64_t showtime_id, const WaitingRoomConfig& config,
                            Instant now) override;
  // Nothing to do: a room's keys expire kKeyLifetime after its last join, and another
  // instance may still be serving the room until it learns the setting changed.
  void Forget(int64_t) override {}

 private:
  // The script's reply for op (see waiting_room.cc), awaited; Run blocks (off the loops).
  io::asio::awaitable<Result<std::vector<RedisReply>>> RunAsync(int op, int64_t showtime_id,
                                                               int64_t customer_id,
                                                               WaitingRoomConfig config,
                                                               Instant now);
  Result<std::vector<RedisReply>> Run(int op, int64_t showtime_id, int64_t customer_id,
                                      const WaitingRoomConfig& config, Instant now);
  RedisClient* client_;
};

}  // namespace boxoffice
