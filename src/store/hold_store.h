// HoldStore: who holds which seats, decided atomically in the engine (store/store.h says
// what every implementation guarantees). A role of Store; on shards a hold lives on its
// showtime's shard and its id names it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "domain/hold.h"
#include "io/loop.h"

namespace boxoffice {

class HoldStore {
 public:
  virtual ~HoldStore() = default;

  // The hold, or: kHoldLimit when the customer's live holds of the showtime would pass
  // kMaxSeatsPerCustomer seats (counted atomically with the hold, whatever the instance),
  // kConflict naming the seats held or booked by anyone (including this customer),
  // kUnknownSeats naming codes not in the showtime, kNotFound for an unknown showtime. On
  // any error nothing is held.
  virtual Result<Hold> HoldSeats(const HoldRequest& request) = 0;
  // The same decision, awaited on an I/O loop without blocking it. By default HoldSeats
  // runs on the loop's blocking pool (io::Offload); off the loops, inline.
  virtual io::asio::awaitable<Result<Hold>> HoldSeatsAsync(HoldRequest request);
  // kNotFound unless the hold exists and belongs to customer_id.
  virtual Result<Hold> GetHold(const std::string& hold_id, int64_t customer_id) = 0;
  // Frees the hold's seats at once. OK for an expired or already released hold;
  // kNotActive for a booked one; kNotFound as GetHold.
  // Returns the hold (its showtime and seats, for the gate and the seat-map cache).
  virtual Result<Hold> ReleaseHold(const std::string& hold_id, int64_t customer_id) = 0;
  // Moves expiry to now + ttl, never past created_at + max_lifetime and never earlier than
  // it already is. kNotActive when the hold expired, was released or booked.
  virtual Result<Hold> ExtendHold(const std::string& hold_id, int64_t customer_id, Millis ttl,
                                  Millis max_lifetime) = 0;
  // The three above, awaited on an I/O loop without blocking it. By default they run on
  // the loop's blocking pool (io::Offload); off the loops, inline.
  enum class HoldAction { kRead, kRelease, kExtend };
  virtual io::asio::awaitable<Result<Hold>> HoldActionAsync(HoldAction action, std::string hold_id,
                                                            int64_t customer_id, Millis ttl,
                                                            Millis max_lifetime);

  // Frees up to batch_limit expired held seats; returns how many, and appends them to
  // *freed (showtime, seat code) when given. Idempotent and safe to run on several
  // instances at once (a correctness no-op thanks to lazy expiry): a seat freed is
  // reported by the one call that freed it.
  virtual Result<int> SweepExpired(int batch_limit, std::vector<SeatRef>* freed = nullptr) = 0;
};

}  // namespace boxoffice
