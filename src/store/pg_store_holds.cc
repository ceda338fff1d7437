// PgStore's HoldStore role: holds decided by one statement each (batched per showtime on
// the loops, store/pg_hold_batch.h), their reads and the sweeper's expiry.
#include "store/pg_store_impl.h"

namespace boxoffice {

Result<Hold> PgStore::HoldSeats(const HoldRequest& req) {
  // The batch statement with one request: one statement, its own transaction.
  const std::vector<Param> params = HoldBatchParams(impl_->Now(), {&req});
  return impl_->Run<Hold>(&retried_, [&](PgConnection& c) -> Result<Hold> {
    auto res = c.Exec(kHoldBatch, params);
    if (!res.ok()) return res.status();
    auto rows = ReadHoldRows(res.value().get(), 1);
    if (!rows.ok()) return rows.status();
    if (auto outcome = HoldOutcome(req, rows->front())) return std::move(*outcome);
    // Some codes are not seats of this showtime, or there is no such showtime (rare path).
    auto map = c.Exec(kExistingSeats, {P(req.showtime_id), ArrayLiteral(req.seats)});
    if (!map.ok()) return map.status();
    const PGresult* m = map.value().get();
    std::vector<std::string> found;
    for (int i = 0; i < PQntuples(m); ++i) found.push_back(Text(m, i, 0));
    bool exists = true;
    if (found.empty()) {
      auto showtime = c.Exec(kShowtimeExists, {P(req.showtime_id)});
      if (!showtime.ok()) return showtime.status();
      exists = PQntuples(showtime.value().get()) > 0;
    }
    return ExplainUnknownSeats(req, found, exists);
  });
}

io::asio::awaitable<Result<Hold>> PgStore::HoldSeatsAsync(HoldRequest request) {
  Impl::LoopState* loop = impl_->Loop();
  if (!loop) co_return HoldSeats(request);  // off the loops
  co_return co_await loop->batcher.Decide(std::move(request));
}

namespace {

// A hold's read, release or extension: one statement (migration 0015 for the two writes),
// sent on the pool's connection or a loop's pipeline alike, and its answer.
struct HoldStatement {
  const Sql* sql;
  std::vector<Param> params;
};

HoldStatement HoldActionStatement(const Param& now, Store::HoldAction action,
                                  const std::string& hold_id, int64_t customer_id, Millis ttl,
                                  Millis max_lifetime) {
  switch (action) {
    case Store::HoldAction::kRead:
      return {&kSelectHold, {now, hold_id, P(customer_id)}};
    case Store::HoldAction::kRelease:
      return {&kReleaseHoldFn, {now, hold_id, P(customer_id)}};
    case Store::HoldAction::kExtend:
      return {&kExtendHoldFn,
              {now, hold_id, P(customer_id), P(ttl.count()), P(max_lifetime.count())}};
  }
  AssertFail("unknown hold action", __FILE__, __LINE__);
}

Result<Hold> HoldActionOutcome(Store::HoldAction action, const PGresult* r,
                               const std::string& hold_id) {
  if (PQntuples(r) == 0) return HoldNotFound(hold_id);
  if (PQntuples(r) != 1) return BOX_BROKEN_AFTER_COMMIT(PQntuples(r) == 1);
  switch (action) {
    case Store::HoldAction::kRead:
      return ReadHold(r);
    case Store::HoldAction::kRelease: {
      Hold hold = ReadHold(r);
      if (hold.state == HoldState::kBooked) return Status(Code::kNotActive, "hold is booked");
      return hold;
    }
    case Store::HoldAction::kExtend: {
      if (Text(r, 0, 0) != "extended") return Status(Code::kNotActive, "hold is not active");
      Hold hold = ReadHold(r, 1);
      if (hold.state != HoldState::kHeld) return BOX_BROKEN_AFTER_COMMIT(hold.state == kHeld);
      return hold;
    }
  }
  AssertFail("unknown hold action", __FILE__, __LINE__);
}

}  // namespace

Result<Hold> PgStore::RunHoldAction(HoldAction action, const std::string& hold_id,
                                    int64_t customer_id, Millis ttl, Millis max_lifetime) {
  if (!IsUuid(hold_id)) return HoldNotFound(hold_id);
  return impl_->Run<Hold>(&retried_, [&](PgConnection& c) -> Result<Hold> {
    HoldStatement st =
        HoldActionStatement(impl_->Now(), action, hold_id, customer_id, ttl, max_lifetime);
    auto res = c.Exec(*st.sql, std::move(st.params));
    if (!res.ok()) return res.status();
    return HoldActionOutcome(action, res.value().get(), hold_id);
  });
}

Result<Hold> PgStore::GetHold(const std::string& hold_id, int64_t customer_id) {
  return RunHoldAction(HoldAction::kRead, hold_id, customer_id, Millis(0), Millis(0));
}

Result<Hold> PgStore::ReleaseHold(const std::string& hold_id, int64_t customer_id) {
  return RunHoldAction(HoldAction::kRelease, hold_id, customer_id, Millis(0), Millis(0));
}

Result<Hold> PgStore::ExtendHold(const std::string& hold_id, int64_t customer_id, Millis ttl,
                                 Millis max_lifetime) {
  return RunHoldAction(HoldAction::kExtend, hold_id, customer_id, ttl, max_lifetime);
}

io::asio::awaitable<Result<Hold>> PgStore::HoldActionAsync(HoldAction action, std::string hold_id,
                                                           int64_t customer_id, Millis ttl,
                                                           Millis max_lifetime) {
  Impl::LoopState* loop = impl_->Loop();
  if (!loop) co_return RunHoldAction(action, hold_id, customer_id, ttl, max_lifetime);
  if (!IsUuid(hold_id)) co_return HoldNotFound(hold_id);
  HoldStatement st =
      HoldActionStatement(impl_->Now(), action, hold_id, customer_id, ttl, max_lifetime);
  auto res = co_await loop->pipelines.Exec(*st.sql, std::move(st.params));
  if (!res.ok()) co_return res.status();
  co_return HoldActionOutcome(action, res->get(), hold_id);
}

Result<int> PgStore::SweepExpired(int batch_limit, std::vector<SeatRef>* freed) {
  return impl_->Run<int>(&retried_, [&](PgConnection& c) -> Result<int> {
    auto res = c.Exec(kSweepExpired, {impl_->Now(), P(int64_t{batch_limit})});
    if (!res.ok()) return res.status();
    const PGresult* r = res.value().get();
    if (freed) {
      for (int i = 0; i < PQntuples(r); ++i) freed->push_back(SeatRef{Int(r, i, 0), Text(r, i, 1)});
    }
    return PQntuples(r);
  });
}

}  // namespace boxoffice
