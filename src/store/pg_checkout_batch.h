// Checkout's phases on PostgreSQL, batched: the statements that decide the new-key
// checkouts and the last phases a loop received together (boxoffice_checkout_begin_batch
// and boxoffice_checkout_finish_batch, migration 0033) and how their rows become each
// request's outcome. Batched per loop by PgBatcher (store/pg_batcher.h): a checkout names
// its hold, not its showtime (which only the hold's row tells), so a loop's checkouts go to
// a few queues by hold id, and their last phases by customer.
#pragma once

#include <string>
#include <vector>

#include "store/pg_common.h"
#include "store/store.h"

namespace boxoffice {

extern const Sql kCheckoutBeginBatch;
extern const Sql kCheckoutFinishBatch;

// The requests batched: a new key's checkout (key.token is its claim's token, chosen
// before it is sent) and a checkout's last phase.
struct CheckoutBeginRequest {
  IdempotencyKey key;
  std::string hold_id;
  Millis lease{0};
  Millis ttl{0};
  Millis max_lifetime{0};
};
struct CheckoutFinishRequest {
  KeyLock lock;
  std::string session_id;
  std::string url;
  Instant expires_at;
  int response_status = 0;
  std::string response_body;
  std::string email;  // empty: none
};

// 'booked' with the checkout begun (its key's record and PENDING booking), or for the
// general path to decide (nothing changed).
struct BeginRow {
  bool booked = false;
  int64_t booking_id = 0;
  int64_t showtime_id = 0;
  std::vector<std::string> seats;
  Price amount;
  Instant created_at;
  Instant expiry_before;
  Instant expiry_after;
};

struct BeginBatchTraits {
  using Request = CheckoutBeginRequest;  // key.token set
  using Row = BeginRow;
  static const Sql& Statement() { return kCheckoutBeginBatch; }
  static std::vector<Param> Params(const Param& now, const std::vector<const CheckoutBeginRequest*>& batch);
  static Result<std::vector<BeginRow>> ReadRows(const PGresult* result, size_t expected);
};

enum class FinishOutcome { kFinished, kAbandoned, kLost };

struct FinishBatchTraits {
  using Request = CheckoutFinishRequest;
  using Row = FinishOutcome;
  static const Sql& Statement() { return kCheckoutFinishBatch; }
  static std::vector<Param> Params(const Param& now,
                                   const std::vector<const CheckoutFinishRequest*>& batch);
  static Result<std::vector<FinishOutcome>> ReadRows(const PGresult* result, size_t expected);
};

}  // namespace boxoffice
