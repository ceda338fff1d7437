#include "store/pg_hold_batch.h"

#include <unordered_map>

#include "core/seats.h"
#include "core/status.h"

namespace boxoffice {

const Sql kHoldBatch{
    "hold_picks",
    "SELECT created_ms, expires_ms, found_seats, taken, held, chosen, stranded, closed,"
    "       cancelled"
    "  FROM boxoffice_hold_picks($1::bigint, $2::bigint, $3::uuid[], $4::bigint[], $5::int[],"
    "                            $6::bigint[], $7::bool[], $8::int[], $9::int, $10::text[],"
    "                            $11::int[], $12::int[], $13::int[], $14::int[], $15::int[],"
    "                            $16::int[], $17::int[])"};
const Sql kExistingSeats{
    "existing_seats",
    "SELECT seat_code FROM show_seat WHERE showtime_id = $1 AND seat_code = ANY($2::text[])"};
const Sql kShowtimeExists{"showtime_exists", "SELECT 1 FROM showtime WHERE showtime_id = $1"};

std::vector<Param> HoldBatchParams(const Param& now, const std::vector<const HoldRequest*>& batch) {
  BOX_ASSERT(!batch.empty());
  std::vector<std::string> hold_ids, best, codes;
  std::vector<int64_t> customers, counts, ttls, first_pick;
  std::vector<int64_t> pick_seat, pick_seats, pick_guard, pick_guards, seat_at, guard_at, beyond_at;
  std::unordered_map<std::string, int64_t> position;  // in codes, 1-based
  auto at = [&](const std::string& code) {
    auto [it, added] = position.try_emplace(code, static_cast<int64_t>(codes.size()) + 1);
    if (added) codes.push_back(code);
    return it->second;
  };
  auto add_pick = [&](const std::vector<std::string>& seats, const std::vector<SeatGuard>& guards) {
    pick_seat.push_back(static_cast<int64_t>(seat_at.size()) + 1);
    pick_seats.push_back(static_cast<int64_t>(seats.size()));
    pick_guard.push_back(static_cast<int64_t>(guard_at.size()) + 1);
    pick_guards.push_back(static_cast<int64_t>(guards.size()));
    for (const auto& s : seats) seat_at.push_back(at(s));
    for (const auto& g : guards) {
      guard_at.push_back(at(g.seat));
      beyond_at.push_back(g.beyond.empty() ? 0 : at(g.beyond));
    }
  };
  for (const HoldRequest* r : batch) {
    BOX_ASSERT(r->showtime_id == batch.front()->showtime_id);
    BOX_ASSERT(r->ttl > Millis(0));
    hold_ids.push_back(r->hold_id);
    customers.push_back(r->customer_id);
    ttls.push_back(r->ttl.count());
    best.push_back(r->is_best() ? "t" : "f");
    first_pick.push_back(static_cast<int64_t>(pick_seat.size()) + 1);
    if (r->is_best()) {
      BOX_ASSERT(!r->picks().empty());
      const size_t n = r->picks().front().seats.size();
      BOX_ASSERT(n >= 1 && n <= kMaxSeatsPerCustomer);
      counts.push_back(static_cast<int64_t>(n));
      for (const auto& pick : r->picks()) {
        BOX_ASSERT(pick.seats.size() == n);  // the hold's seats are its seat count's
        add_pick(pick.seats, pick.guards);
      }
    } else {
      BOX_ASSERT(!r->seats.empty() && r->seats.size() <= kMaxSeatsPerCustomer);
      counts.push_back(static_cast<int64_t>(r->seats.size()));
      add_pick(r->seats, r->guards);
    }
  }
  // The statement's arrays, built here side by side: one entry per request, per pick, per
  // guard, and each code once.
  BOX_ASSERT(hold_ids.size() == batch.size() && customers.size() == batch.size() &&
             counts.size() == batch.size() && ttls.size() == batch.size() &&
             best.size() == batch.size() && first_pick.size() == batch.size());
  BOX_ASSERT(pick_seats.size() == pick_seat.size() && pick_guard.size() == pick_seat.size() &&
             pick_guards.size() == pick_seat.size());
  BOX_ASSERT(beyond_at.size() == guard_at.size() && codes.size() == position.size());
  return {now,
          P(batch.front()->showtime_id),
          ArrayLiteral(hold_ids),
          IntArrayLiteral(customers),
          IntArrayLiteral(counts),
          IntArrayLiteral(ttls),
          ArrayLiteral(best),
          IntArrayLiteral(first_pick),
          P(static_cast<int64_t>(kMaxSeatsPerCustomer)),
          ArrayLiteral(codes),
          IntArrayLiteral(pick_seat),
          IntArrayLiteral(pick_seats),
          IntArrayLiteral(pick_guard),
          IntArrayLiteral(pick_guards),
          IntArrayLiteral(seat_at),
          IntArrayLiteral(guard_at),
          IntArrayLiteral(beyond_at)};
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
    if (!PQgetisnull(r, i, 5)) row.chosen = static_cast<size_t>(Int(r, i, 5));
    row.stranded = ParseArray(Text(r, i, 6));
    row.closed = Bool(r, i, 7);
    row.cancelled = Bool(r, i, 8);
  }
  return rows;
}

std::optional<Result<Hold>> HoldOutcome(const HoldRequest& req, const HoldRow& row) {
  if (row.cancelled) return Result<Hold>(ShowtimeCancelled(req.showtime_id));
  if (row.closed) return Result<Hold>(SalesClosed(req.showtime_id));
  const int64_t n =
      static_cast<int64_t>(req.is_best() ? req.picks().front().seats.size() : req.seats.size());
  if (row.created) {
    const size_t picks = req.is_best() ? req.picks().size() : 1;
    if (row.chosen < 1 || row.chosen > picks) {
      return Result<Hold>(Status(
          Code::kInternal,
          "hold picks chose pick " + std::to_string(row.chosen) + " of " + std::to_string(picks)));
    }
    const auto& seats = req.is_best() ? req.picks()[row.chosen - 1].seats : req.seats;
    return Result<Hold>(Hold{req.hold_id, req.showtime_id, req.customer_id, seats, HoldState::kHeld,
                             *row.created, row.expires});
  }
  if (row.held_before + n > kMaxSeatsPerCustomer) {
    return Result<Hold>(HoldLimit(req, row.held_before));
  }
  if (req.is_best()) return Result<Hold>(NoBlockAvailable(req));
  if (row.found != n) return std::nullopt;  // some codes are not seats: explained apart
  if (row.taken.empty() && !row.stranded.empty()) {
    return Result<Hold>(SingleSeatGap(req, row.stranded));
  }
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
