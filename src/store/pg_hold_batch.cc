#include "store/pg_hold_batch.h"

#include "core/seats.h"

namespace boxoffice {

const Sql kHoldBatch{
    "hold_batch",
    "SELECT created_ms, expires_ms, found_seats, taken, held"
    "  FROM boxoffice_hold_batch($1::bigint, $2::bigint, $3::uuid[], $4::bigint[], $5::int[],"
    "                            $6::text[], $7::bigint[], $8::int)"};
const Sql kExistingSeats{
    "existing_seats",
    "SELECT seat_code FROM show_seat WHERE showtime_id = $1 AND seat_code = ANY($2::text[])"};
const Sql kShowtimeExists{"showtime_exists", "SELECT 1 FROM showtime WHERE showtime_id = $1"};

std::vector<Param> HoldBatchParams(const Param& now, const std::vector<const HoldRequest*>& batch) {
  BOX_ASSERT(!batch.empty());
  std::vector<std::string> hold_ids, seats;
  std::vector<int64_t> customers, counts, ttls;
  for (const HoldRequest* r : batch) {
    BOX_ASSERT(r->showtime_id == batch.front()->showtime_id);
    BOX_ASSERT(!r->seats.empty() && r->seats.size() <= kMaxSeatsPerCustomer);
    hold_ids.push_back(r->hold_id);
    customers.push_back(r->customer_id);
    counts.push_back(static_cast<int64_t>(r->seats.size()));
    BOX_ASSERT(r->ttl > Millis(0));
    ttls.push_back(r->ttl.count());
    seats.insert(seats.end(), r->seats.begin(), r->seats.end());
  }
  return {now,
          P(batch.front()->showtime_id),
          ArrayLiteral(hold_ids),
          IntArrayLiteral(customers),
          IntArrayLiteral(counts),
          ArrayLiteral(seats),
          IntArrayLiteral(ttls),
          P(static_cast<int64_t>(kMaxSeatsPerCustomer))};
}

Result<std::vector<HoldRow>> ReadHoldRows(const PGresult* r, size_t expected) {
  if (static_cast<size_t>(PQntuples(r)) != expected) {
    return Status(Code::kInternal, "hold batch answered " + std::to_string(PQntuples(r)) +
                                       " rows for " + std::to_string(expected) + " requests");
  }
  std::vector<HoldRow> rows(expected);
  for (int i = 0; i < PQntuples(r); ++i) {
    HoldRow& row = rows[static_cast<size_t>(i)];
    if (!PQgetisnull(r, i, 0)) {
      row.created = FromEpochMs(Int(r, i, 0));
      row.expires = FromEpochMs(Int(r, i, 1));
    }
    row.found = Int(r, i, 2);
    row.taken = ParseArray(Text(r, i, 3));
    row.held_before = Int(r, i, 4);
  }
  return rows;
}

std::optional<Result<Hold>> HoldOutcome(const HoldRequest& req, const HoldRow& row) {
  const int64_t n = static_cast<int64_t>(req.seats.size());
  if (row.created) {
    return Result<Hold>(Hold{req.hold_id, req.showtime_id, req.customer_id, req.seats,
                             HoldState::kHeld, *row.created, row.expires});
  }
  if (row.held_before + n > kMaxSeatsPerCustomer) {
    return Result<Hold>(HoldLimit(req, row.held_before));
  }
  if (row.found != n) return std::nullopt;  // some codes are not seats: explained apart
  return Result<Hold>(SeatsUnavailable(req, row.taken));
}

io::asio::awaitable<Result<Hold>> PgHoldBatcher::Decide(HoldRequest request) {
  const int64_t showtime_id = request.showtime_id;
  auto row = co_await batcher_.Submit(showtime_id, request);
  if (!row.ok()) co_return row.status();
  if (auto outcome = HoldOutcome(request, row.value())) co_return std::move(*outcome);
  co_return co_await Explain(request);
}

io::asio::awaitable<Result<Hold>> PgHoldBatcher::Explain(const HoldRequest& request) {
  // The rare path (a code that is not a seat): nothing was held, this only reads.
  // (Arguments are named first: g++ 12 miscompiles a braced list inside a co_await.)
  std::vector<Param> codes = {P(request.showtime_id), ArrayLiteral(request.seats)};
  auto existing = co_await pipeline_->Exec(kExistingSeats, std::move(codes));
  if (!existing.ok()) co_return existing.status();
  std::vector<std::string> found;
  for (int i = 0; i < PQntuples(existing->get()); ++i) found.push_back(Text(existing->get(), i, 0));
  bool exists = true;
  if (found.empty()) {
    std::vector<Param> id = {P(request.showtime_id)};
    auto showtime = co_await pipeline_->Exec(kShowtimeExists, std::move(id));
    if (!showtime.ok()) co_return showtime.status();
    exists = PQntuples(showtime->get()) > 0;
  }
  co_return ExplainUnknownSeats(request, found, exists);
}

}  // namespace boxoffice
