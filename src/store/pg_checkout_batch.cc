#include "store/pg_checkout_batch.h"

#include "core/status.h"
#include "store/pg_rows.h"

namespace boxoffice {

const Sql kCheckoutBeginBatch{
    "checkout_begin_batch",
    "SELECT * FROM boxoffice_checkout_begin_batch($1::bigint, $2::bigint[], $3::text[],"
    "                                             $4::text[], $5::uuid[], $6::uuid[],"
    "                                             $7::bigint[], $8::bigint[], $9::bigint[])"};
const Sql kCheckoutFinishBatch{
    "checkout_finish_batch",
    "SELECT * FROM boxoffice_checkout_finish_batch($1::bigint, $2::bigint[], $3::text[],"
    "                                              $4::uuid[], $5::text[], $6::text[],"
    "                                              $7::bigint[], $8::int[], $9::text[],"
    "                                              $10::text[])"};

namespace {

Result<size_t> RowsOf(const PGresult* r, size_t expected, const char* what) {
  if (static_cast<size_t>(PQntuples(r)) != expected) {
    return Status(Code::kInternal, std::string(what) + " batch answered " +
                                       std::to_string(PQntuples(r)) + " rows for " +
                                       std::to_string(expected) + " requests");
  }
  return expected;
}

}  // namespace

std::vector<Param> BeginBatchTraits::Params(const Param& now,
                                            const std::vector<const CheckoutBeginRequest*>& batch) {
  BOX_ASSERT(!batch.empty());
  std::vector<int64_t> customers, leases, ttls, lifetimes;
  std::vector<std::string> keys, fingerprints, holds, tokens;
  for (const CheckoutBeginRequest* r : batch) {
    // The store's own: a UUID hold id (others go the general way), a token, positive times.
    BOX_ASSERT(IsUuid(r->hold_id) && IsUuid(r->key.token));
    BOX_ASSERT(r->lease.count() > 0 && r->ttl.count() > 0 && r->max_lifetime.count() > 0);
    customers.push_back(r->key.customer_id);
    keys.push_back(r->key.key);
    fingerprints.push_back(r->key.fingerprint);
    holds.push_back(r->hold_id);
    tokens.push_back(r->key.token);
    leases.push_back(r->lease.count());
    ttls.push_back(r->ttl.count());
    lifetimes.push_back(r->max_lifetime.count());
  }
  return {now,
          IntArrayLiteral(customers),
          ArrayLiteral(keys),
          ArrayLiteral(fingerprints),
          ArrayLiteral(holds),
          ArrayLiteral(tokens),
          IntArrayLiteral(leases),
          IntArrayLiteral(ttls),
          IntArrayLiteral(lifetimes)};
}

Result<std::vector<BeginRow>> BeginBatchTraits::ReadRows(const PGresult* r, size_t expected) {
  auto n = RowsOf(r, expected, "checkout begin");
  if (!n.ok()) return n.status();
  std::vector<BeginRow> rows(expected);
  for (int i = 0; i < PQntuples(r); ++i) {
    BeginRow& row = rows[static_cast<size_t>(i)];
    const std::string outcome = Text(r, i, 0);
    if (outcome == "slow") continue;
    if (outcome != "booked") return BOX_BROKEN_AFTER_COMMIT(outcome == "booked");
    row.booked = true;
    row.booking_id = Int(r, i, 1);
    row.showtime_id = Int(r, i, 2);
    row.seats = ParseArray(Text(r, i, 3));
    row.amount = Price{Int(r, i, 4), Text(r, i, 5)};
    row.created_at = FromEpochMs(Int(r, i, 6));
    row.expiry_before = FromEpochMs(Int(r, i, 7));
    row.expiry_after = FromEpochMs(Int(r, i, 8));
  }
  return rows;
}

std::vector<Param> FinishBatchTraits::Params(const Param& now,
                                             const std::vector<const CheckoutFinishRequest*>& batch) {
  BOX_ASSERT(!batch.empty());
  std::vector<int64_t> customers, expiries, statuses;
  std::vector<std::string> keys, tokens, sessions, urls, bodies, emails;
  for (const CheckoutFinishRequest* r : batch) {
    BOX_ASSERT(IsUuid(r->lock.token));  // a claim's token: never a finished key's empty one
    customers.push_back(r->lock.customer_id);
    keys.push_back(r->lock.key);
    tokens.push_back(r->lock.token);
    sessions.push_back(r->session_id);
    urls.push_back(r->url);
    expiries.push_back(ToEpochMs(r->expires_at));
    statuses.push_back(r->response_status);
    bodies.push_back(r->response_body);
    emails.push_back(r->email);
  }
  return {now,
          IntArrayLiteral(customers),
          ArrayLiteral(keys),
          ArrayLiteral(tokens),
          ArrayLiteral(sessions),
          ArrayLiteral(urls),
          IntArrayLiteral(expiries),
          IntArrayLiteral(statuses),
          ArrayLiteral(bodies),
          ArrayLiteral(emails)};
}

Result<std::vector<FinishOutcome>> FinishBatchTraits::ReadRows(const PGresult* r,
                                                               size_t expected) {
  auto n = RowsOf(r, expected, "checkout finish");
  if (!n.ok()) return n.status();
  std::vector<FinishOutcome> rows(expected, FinishOutcome::kLost);
  for (int i = 0; i < PQntuples(r); ++i) {
    const std::string outcome = Text(r, i, 0);
    if (outcome == "finished") {
      rows[static_cast<size_t>(i)] = FinishOutcome::kFinished;
    } else if (outcome == "abandoned") {
      rows[static_cast<size_t>(i)] = FinishOutcome::kAbandoned;
    } else if (outcome != "lost") {
      return BOX_BROKEN_AFTER_COMMIT(outcome == "lost");
    }
  }
  return rows;
}

}  // namespace boxoffice
