// SqliteStore's holds: each decided in the writer's transaction, a batch per transaction
// (group commit), fed by the hold queue's thread to the loops' coroutines.
#include <sqlite3.h>

#include "core/pool.h"
#include "core/seats.h"
#include "store/sqlite_connection.h"
#include "store/sqlite_rows.h"
#include "store/sqlite_sql.h"
#include "store/sqlite_store.h"
#include "store/sqlite_store_parts.h"

namespace boxoffice {

using namespace sqlite;  // the store's own statements and rows

namespace {

// One hold decided inside the caller's write transaction: the quota, the seeds' UPDATE with
// its changed-row count compared, the seat_hold row. On any refusal the caller rolls back
// what this request changed (its savepoint).
Result<Hold> DecideHold(SqliteConnection& c, const HoldRequest& req, Instant now) {
  const Instant expires = now + req.ttl;
  const std::string seats_json = SeatsJson(req.seats);
  {
    Query held(c, kCustomerHeld, {req.customer_id, req.showtime_id, ToEpochMs(now)});
    if (!held.Next()) return held.status();
    const int64_t n = static_cast<int64_t>(req.seats.size());
    if (held.Int(0) + n > kMaxSeatsPerCustomer) return HoldLimit(req, held.Int(0));
  }
  Result<int> updated = Query(c, kHoldSeats,
                              {req.hold_id, req.customer_id, ToEpochMs(expires), req.showtime_id,
                               seats_json, ToEpochMs(now)})
                            .Exec();
  if (!updated.ok()) return updated.status();
  if (static_cast<size_t>(updated.value()) != req.seats.size()) {
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
                               {req.hold_id, req.showtime_id, req.customer_id, JoinComma(req.seats),
                                ToEpochMs(now), ToEpochMs(expires)})
                             .Exec();
  if (!inserted.ok()) return inserted.status();
  return Hold{req.hold_id, req.showtime_id, req.customer_id, req.seats, HoldState::kHeld,
              now,         expires};
}

}  // namespace

std::vector<Result<Hold>> SqliteStore::HoldBatch(const std::vector<HoldRequest>& requests) {
  auto fail_all = [&](const Status& why) {
    return std::vector<Result<Hold>>(requests.size(), Result<Hold>(why));
  };
  auto conn = pools_->writer.Acquire();
  if (!conn.ok()) return fail_all(conn.status());
  SqliteConnection& c = *conn.value();
  const Instant now = clock_->Now();
  hold_transactions_.fetch_add(1, std::memory_order_relaxed);
  batched_holds_.fetch_add(requests.size(), std::memory_order_relaxed);
  WriteTx tx(c);
  if (!tx.status().ok()) return fail_all(tx.status());
  std::vector<Result<Hold>> out;
  out.reserve(requests.size());
  for (const HoldRequest& req : requests) {
    // Each request all or nothing: a refusal rolls back to its savepoint.
    if (Status s = c.ExecScript("SAVEPOINT hold"); !s.ok()) return fail_all(s);
    Result<Hold> r = DecideHold(c, req, now);
    Status undone = r.ok() ? Status::Ok() : c.ExecScript("ROLLBACK TO hold");
    Status released = c.ExecScript("RELEASE hold");
    if (!undone.ok()) return fail_all(undone);
    if (!released.ok()) return fail_all(released);
    out.push_back(std::move(r));
  }
  // One commit for the batch (group commit).
  if (Status s = tx.Commit(); !s.ok()) return fail_all(s);
  return out;
}

Result<Hold> SqliteStore::HoldSeats(const HoldRequest& req) {
  return std::move(HoldBatch({req}).front());
}

io::asio::awaitable<Result<Hold>> SqliteStore::HoldSeatsAsync(HoldRequest request) {
  io::Loop* loop = io::Loop::Current();
  if (!loop) co_return HoldSeats(request);  // off the loops
  auto pending = std::make_shared<HoldQueue::Pending>();
  io::Completion<Result<Hold>> done;
  pending->waiter = &done;
  struct Forget {  // the answer of a request nobody waits for any more goes nowhere
    HoldQueue::Pending* p;
    ~Forget() { p->waiter = nullptr; }
  } forget{pending.get()};
  if (!holds_->Push(std::move(request), pending, loop->handle())) {
    co_return Status(Code::kUnavailable, "too many holds waiting for the database");
  }
  auto result = co_await done.Wait(kHoldWaitBound);
  if (!result) {
    int waiting = HoldQueue::Pending::kWaiting;
    if (pending->state.compare_exchange_strong(waiting, HoldQueue::Pending::kAbandoned)) {
      co_return Status(Code::kUnavailable, "too many holds waiting for the database");
    }
    // Taken: its transaction runs and answers (bounded by the writer's own timeouts).
    result = co_await done.Wait(kHoldWaitBound);
    if (!result) co_return Status(Code::kUnavailable, "the hold's transaction did not come back");
  }
  co_return std::move(*result);
}


}  // namespace boxoffice
