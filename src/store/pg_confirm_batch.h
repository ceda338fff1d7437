// Confirmations on PostgreSQL: the statement that decides the callbacks a loop received
// together (boxoffice_settle_confirm_batch, migration 0016) and how its rows become each
// report's outcome. Batched per loop by PgBatcher (store/pg_batcher.h): a report names its
// booking, not its showtime, so a loop's confirmations go to a few queues by booking id.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "store/pg_common.h"
#include "store/store.h"

namespace boxoffice {

extern const Sql kSettleConfirmBatch;

// A successful payment's report, for the one-step confirmation.
struct ConfirmRequest {
  std::string payment_id;
  std::string session_id;
  int64_t booking_id = 0;
  int64_t amount = 0;
  std::string currency;
  std::string event_id;  // the BookingConfirmed event's id, if it confirms
};

// A report's row: confirmed (with the booking as it now stands), a duplicate, or for the
// general transaction to decide (nothing changed).
struct ConfirmRow {
  enum class Outcome { kConfirmed, kDuplicate, kSlow } outcome = Outcome::kSlow;
  Booking booking;  // kConfirmed only
};

struct ConfirmBatchTraits {
  using Request = ConfirmRequest;
  using Row = ConfirmRow;
  static const Sql& Statement() { return kSettleConfirmBatch; }
  static std::vector<Param> Params(const Param& now,
                                   const std::vector<const ConfirmRequest*>& batch);
  static Result<std::vector<ConfirmRow>> ReadRows(const PGresult* result, size_t expected);
};

}  // namespace boxoffice
