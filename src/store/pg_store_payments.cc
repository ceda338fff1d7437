// PgStore's PaymentStore role: settlements (batched confirmations on the loops), refunds
// and booking counts.
#include "store/pg_store_impl.h"

namespace boxoffice {

namespace {

// A report for a booking another shard issued is not this database's to judge: recorded
// here as unknown it would be refunded while its own shard confirms it (the reconciler
// asks). kUnavailable, so the gateway delivers it again, to an instance that knows.
Status OnAnotherShard(const PaymentReport& report, int own_shard) {
  const auto id = ParseReference(report.reference);
  const auto shard = id ? ShardOfId(*id) : std::nullopt;
  if (!shard || *shard == own_shard || *shard >= kMaxShards) return Status::Ok();
  return Status(Code::kUnavailable, "booking " + report.reference + " is on shard " +
                                        std::to_string(*shard) + ", not this database's (" +
                                        std::to_string(own_shard) + ")");
}

}  // namespace

Result<Settlement> PgStore::SettlePayment(const PaymentReport& report, Booking* confirmed) {
  if (Status s = OnAnotherShard(report, own_shard_.load()); !s.ok()) return s;
  return impl_->InTx<Settlement>(&retried_, [&](PgConnection& c) {
    PgMoneyTx tx(c, impl_->Now());
    return SettlePaymentIn(tx, report, confirmed);
  });
}

io::asio::awaitable<Result<std::optional<Settlement>>> PgStore::TryConfirmPaymentAsync(
    PaymentReport report, Booking* confirmed) {
  using Outcome = std::optional<Settlement>;
  Impl::LoopState* loop = impl_->Loop();
  const std::optional<int64_t> booking_id = ParseReference(report.reference);
  if (!loop || !report.succeeded || report.payment_id.empty() || !booking_id ||
      !OnAnotherShard(report, own_shard_.load()).ok()) {
    co_return Outcome();  // (the general path refuses another shard's report)
  }
  ConfirmRequest request{report.payment_id, report.session_id, *booking_id,
                         report.amount,     report.currency,   NewUuid()};
  const int64_t queue = *booking_id % Impl::kConfirmQueues;
  BOX_ASSERT(queue >= 0 && queue < Impl::kConfirmQueues);  // ParseReference's ids are positive
  auto row = co_await loop->confirmations.Submit(queue, std::move(request));
  if (!row.ok()) co_return row.status();
  switch (row->outcome) {
    case ConfirmRow::Outcome::kDuplicate:
      co_return Outcome(Settlement::kDuplicate);
    case ConfirmRow::Outcome::kSlow:
      co_return Outcome();
    case ConfirmRow::Outcome::kConfirmed:
      break;
  }
  if (row->booking.id != *booking_id || row->booking.status != BookingStatus::kConfirmed) {
    co_return BOX_BROKEN_AFTER_COMMIT(booking.id == reference && booking.status == kConfirmed);
  }
  if (confirmed) *confirmed = std::move(row->booking);
  co_return Outcome(Settlement::kConfirmed);
}

Status PgStore::CompleteRefund(const std::string& refund_id, const std::string& gateway_refund_id) {
  auto r = impl_->InTx<bool>(&retried_, [&](PgConnection& c) -> Result<bool> {
    PgMoneyTx tx(c, impl_->Now());
    Status s = CompleteRefundIn(tx, refund_id, gateway_refund_id);
    if (!s.ok()) return s;
    return true;
  });
  return r.ok() ? Status::Ok() : r.status();
}

Result<std::map<BookingStatus, int64_t>> PgStore::CountRecentBookings(Millis window) {
  return impl_->Run<std::map<BookingStatus, int64_t>>(
      &retried_, [&](PgConnection& c) -> Result<std::map<BookingStatus, int64_t>> {
        auto res = c.Exec(kCountRecentBookings, {impl_->Now(), P(window.count())});
        if (!res.ok()) return res.status();
        std::map<BookingStatus, int64_t> out;
        for (int i = 0; i < PQntuples(res.value().get()); ++i) {
          if (auto status = ParseBookingStatus(Text(res.value().get(), i, 0)))
            out[*status] = Int(res.value().get(), i, 1);
        }
        return out;
      });
}

Result<std::vector<Refund>> PgStore::PendingRefunds(int limit) {
  return impl_->Run<std::vector<Refund>>(
      &retried_, [&](PgConnection& c) -> Result<std::vector<Refund>> {
        auto res = c.Exec(kPendingRefunds, {impl_->Now(), P(int64_t{limit})});
        if (!res.ok()) return res.status();
        const PGresult* r = res.value().get();
        std::vector<Refund> out;
        for (int i = 0; i < PQntuples(r); ++i) {
          out.push_back(Refund{
              Text(r, i, 0), Text(r, i, 1), PQgetisnull(r, i, 2) ? 0 : Int(r, i, 2),
              Price{Int(r, i, 3), Text(r, i, 4)}, false, static_cast<int>(Int(r, i, 5)), ""});
        }
        return out;
      });
}

Status PgStore::RefundAttemptFailed(const std::string& refund_id, bool refused,
                                    const std::string& error, Millis retry_after) {
  if (!IsUuid(refund_id)) return Status(Code::kNotFound, "refund " + refund_id + " not found");
  auto r = impl_->Run<bool>(&retried_, [&](PgConnection& c) -> Result<bool> {
    auto res = c.Exec(kRefundAttemptFailed, {impl_->Now(), refused ? "true" : "false", error,
                                             P(retry_after.count()), refund_id});
    if (!res.ok()) return res.status();
    return true;
  });
  return r.ok() ? Status::Ok() : r.status();
}

Result<RefundBacklog> PgStore::CountRefundBacklog() {
  return impl_->Run<RefundBacklog>(&retried_, [&](PgConnection& c) -> Result<RefundBacklog> {
    auto res = c.Exec(kRefundBacklog, {});
    if (!res.ok()) return res.status();
    RefundBacklog backlog{Int(res.value().get(), 0, 0), Int(res.value().get(), 0, 1), {}};
    auto cancelled = c.Exec(kCancelledRefunds, {impl_->Now(), P(kCancelledRefundsWindow.count()),
                                                P(int64_t{kMaxCancelledShowtimesFollowed})});
    if (!cancelled.ok()) return cancelled.status();
    const PGresult* r = cancelled.value().get();
    for (int i = 0; i < PQntuples(r); ++i) {
      backlog.cancelled.push_back(CancelledShowtimeRefunds{
          Int(r, i, 0), RefundProgress{Int(r, i, 1), Int(r, i, 2), Int(r, i, 3)}});
    }
    BOX_ASSERT(backlog.cancelled.size() <= size_t{kMaxCancelledShowtimesFollowed});  // LIMIT
    return backlog;
  });
}

}  // namespace boxoffice
