#include "store/pg_confirm_batch.h"

#include "core/status.h"
#include "store/pg_rows.h"

namespace boxoffice {

const Sql kSettleConfirmBatch{
    "settle_confirm_batch",
    "SELECT * FROM boxoffice_settle_confirm_batch($1::bigint, $2::text[], $3::text[],"
    "                                             $4::bigint[], $5::bigint[], $6::text[],"
    "                                             $7::uuid[])"};

std::vector<Param> ConfirmBatchTraits::Params(const Param& now,
                                              const std::vector<const ConfirmRequest*>& batch) {
  BOX_ASSERT(!batch.empty());
  std::vector<std::string> payments, sessions, currencies, events;
  std::vector<int64_t> bookings, amounts;
  for (const ConfirmRequest* r : batch) {
    BOX_ASSERT(!r->payment_id.empty() && r->booking_id > 0 && !r->event_id.empty());
    payments.push_back(r->payment_id);
    sessions.push_back(r->session_id);
    bookings.push_back(r->booking_id);
    amounts.push_back(r->amount);
    currencies.push_back(r->currency);
    events.push_back(r->event_id);
  }
  BOX_ASSERT(payments.size() == batch.size() && sessions.size() == batch.size() &&
             bookings.size() == batch.size() && amounts.size() == batch.size() &&
             currencies.size() == batch.size() && events.size() == batch.size());
  return {now,
          ArrayLiteral(payments),
          ArrayLiteral(sessions),
          IntArrayLiteral(bookings),
          IntArrayLiteral(amounts),
          ArrayLiteral(currencies),
          ArrayLiteral(events)};
}

Result<std::vector<ConfirmRow>> ConfirmBatchTraits::ReadRows(const PGresult* r, size_t expected) {
  if (static_cast<size_t>(PQntuples(r)) != expected) {
    return Status(Code::kInternal, "confirm batch answered " + std::to_string(PQntuples(r)) +
                                       " rows for " + std::to_string(expected) + " reports");
  }
  std::vector<ConfirmRow> rows(expected);
  for (int i = 0; i < PQntuples(r); ++i) {
    ConfirmRow& row = rows[static_cast<size_t>(i)];
    const std::string outcome = Text(r, i, 0);
    if (outcome == "confirmed") {
      row.outcome = ConfirmRow::Outcome::kConfirmed;
      row.booking = ReadBooking(r, i, /*first=*/1);
    } else if (outcome == "duplicate") {
      row.outcome = ConfirmRow::Outcome::kDuplicate;
    } else if (outcome != "slow") {
      return BOX_BROKEN_AFTER_COMMIT(outcome == "slow");
    }
  }
  return rows;
}

}  // namespace boxoffice
