// SqliteStore's holds: each decided in the writer's transaction, a batch per transaction
// (group commit), fed by the hold queue's thread to the loops' coroutines.
#include <sqlite3.h>

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "core/pool.h"
#include "core/seats.h"
#include "core/status.h"
#include "store/sqlite_connection.h"
#include "store/sqlite_rows.h"
#include "store/sqlite_sql.h"
#include "store/sqlite_store.h"
#include "store/sqlite_store_parts.h"

namespace boxoffice {

using namespace sqlite;  // the store's own statements and rows

namespace {

// The seat rules of a hold (store.h: best available's candidates, the gap rule's guards),
// applied with CheckPick on the seats' state read in the writer's transaction, where no
// other writer can change it: the seats to hold (the first candidate that passes, for best
// available), or the refusal. A pick by hand with taken seats is left to the UPDATE, which
// names them (or the codes that are not seats).
Result<std::vector<std::string>> ApplySeatRules(SqliteConnection& c, const HoldRequest& req,
                                                Instant now) {
  if (!req.is_best() && req.guards.empty()) return req.seats;
  std::vector<std::string> codes = req.seats;
  auto add_pick = [&](const std::vector<std::string>& seats, const std::vector<SeatGuard>& guards) {
    codes.insert(codes.end(), seats.begin(), seats.end());
    for (const auto& g : guards) {
      codes.push_back(g.seat);
      if (!g.beyond.empty()) codes.push_back(g.beyond);
    }
  };
  add_pick({}, req.guards);
  for (const auto& pick : req.picks()) add_pick(pick.seats, pick.guards);
  std::sort(codes.begin(), codes.end());
  codes.erase(std::unique(codes.begin(), codes.end()), codes.end());
  std::unordered_map<std::string, bool> free;
  Query q(c, kSeatsFree, {req.showtime_id, SeatsJson(codes), ToEpochMs(now)});
  while (q.Next()) free[q.Text(0)] = q.Int(1) != 0;
  if (!q.status().ok()) return q.status();
  auto is_free = [&](const std::string& code) {
    auto it = free.find(code);
    return it != free.end() && it->second;
  };
  if (req.is_best()) {
    for (const auto& pick : req.picks()) {
      if (CheckPick(pick.seats, pick.guards, is_free).ok()) return pick.seats;
    }
    return NoBlockAvailable(req);
  }
  PickCheck check = CheckPick(req.seats, req.guards, is_free);
  if (check.taken.empty() && !check.stranded.empty()) {
    return SingleSeatGap(req, std::move(check.stranded));
  }
  return req.seats;
}

// One hold decided inside the caller's write transaction: the quota, the seat rules, the
// seeds' UPDATE with its changed-row count compared, the seat_hold row. On any refusal the
// caller rolls back what this request changed (its savepoint).
Result<Hold> DecideHold(SqliteConnection& c, const HoldRequest& req, Instant now) {
  // HoldService's requests (validated seats, a layout's blocks, the policy's TTL), as
  // PostgreSQL's HoldBatchParams asserts them too.
  BOX_ASSERT(req.ttl > Millis(0));
  BOX_ASSERT(!req.is_best() || !req.picks().empty());  // no block at all is answered before
  const int64_t n =
      static_cast<int64_t>(req.is_best() ? req.picks().front().seats.size() : req.seats.size());
  BOX_ASSERT(n >= 1 && n <= kMaxSeatsPerCustomer);
  const Instant expires = now + req.ttl;
  {
    // Sales close inside the decision, on the store's clock, like expiry, and a cancelled
    // showtime sells nothing. (An unknown showtime has no close: its codes are explained
    // below.)
    Query terms(c, kShowtimeTerms, {req.showtime_id});
    if (terms.Next()) {
      if (terms.Int(2) != 0) return ShowtimeCancelled(req.showtime_id);
      if (ToEpochMs(now) >= terms.Int(1)) return SalesClosed(req.showtime_id);
    }
    if (!terms.status().ok()) return terms.status();
  }
  {
    Query held(c, kCustomerHeld, {req.customer_id, req.showtime_id, ToEpochMs(now)});
    if (!held.Next()) return held.status();
    if (held.Int(0) + n > kMaxSeatsPerCustomer) return HoldLimit(req, held.Int(0));
  }
  auto chosen = ApplySeatRules(c, req, now);
  if (!chosen.ok()) return chosen.status();
  const std::vector<std::string>& seats = chosen.value();
  const std::string seats_json = SeatsJson(seats);
  Result<int> updated = Query(c, kHoldSeats,
                              {req.hold_id, req.customer_id, ToEpochMs(expires), req.showtime_id,
                               seats_json, ToEpochMs(now)})
                            .Exec();
  if (!updated.ok()) return updated.status();
  if (static_cast<size_t>(updated.value()) != seats.size()) {
    // (A best block was read free in this transaction, which no one else writes.)
    BOX_ASSERT(!req.is_best());
    // Short: find out why; the caller rolls this request back.
    std::vector<std::string> found, taken;
    Query q(c, kExplainHold, {req.showtime_id, seats_json, ToEpochMs(now), req.hold_id});
    while (q.Next()) {
      found.push_back(q.Text(0));
      if (q.Int(1) == 0) taken.push_back(q.Text(0));
    }
    if (!q.status().ok()) return q.status();
    if (found.size() != req.seats.size()) {
      bool exists = true;
      if (found.empty()) {
        Query showtime(c, kShowtimeExists, {req.showtime_id});
        exists = showtime.Next();
        if (!exists && !showtime.status().ok()) return showtime.status();
      }
      return ExplainUnknownSeats(req, found, exists);
    }
    return SeatsUnavailable(req, std::move(taken));
  }
  Result<int> inserted = Query(c, kInsertHold,
                               {req.hold_id, req.showtime_id, req.customer_id, JoinComma(seats),
                                ToEpochMs(now), ToEpochMs(expires)})
                             .Exec();
  if (!inserted.ok()) return inserted.status();
  // All or nothing: as many seats as asked (a best block has its count's), each changed.
  BOX_ASSERT(static_cast<int64_t>(seats.size()) == n && updated.value() == n);
  return Hold{req.hold_id, req.showtime_id, req.customer_id, seats, HoldState::kHeld, now, expires};
}

}  // namespace

std::vector<Result<Hold>> SqliteStore::HoldBatch(const std::vector<HoldRequest>& requests) {
  hold_transactions_.fetch_add(1, std::memory_order_relaxed);
  batched_holds_.fetch_add(requests.size(), std::memory_order_relaxed);
  // One time for the batch, read once the writer is ours (it may have waited for it).
  std::optional<Instant> now;
  auto decide = [&](SqliteConnection& c, size_t i) {
    if (!now) now = clock_->Now();
    return DecideHold(c, requests[i], *now);
  };
  // Each request all or nothing: a refusal rolls back to its savepoint.
  return WriteBatch<Result<Hold>>(requests.size(), decide,
                                  [](const Result<Hold>& r) { return r.ok(); });
}

Result<Hold> SqliteStore::HoldSeats(const HoldRequest& req) {
  return std::move(HoldBatch({req}).front());
}

io::asio::awaitable<Result<Hold>> SqliteStore::HoldSeatsAsync(HoldRequest request) {
  if (!io::Loop::Current()) co_return HoldSeats(request);  // off the loops
  auto held = co_await holds_->Submit(std::move(request));
  co_return held;
}

}  // namespace boxoffice
