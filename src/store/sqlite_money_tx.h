// The money rules' primitives (store/money.h) over one SQLite write transaction.
#pragma once

#include "core/clock.h"
#include "core/status.h"
#include "store/money.h"
#include "store/sqlite_connection.h"
#include "store/sqlite_rows.h"
#include "store/sqlite_sql.h"

namespace boxoffice::sqlite {

// One writer at a time: no row locks are needed.
class SqliteMoneyTx final : public MoneyTx {
 public:
  SqliteMoneyTx(SqliteConnection& c, const Clock* clock) : c_(c), clock_(clock) {}

  Result<Instant> Now() override { return clock_->Now(); }
  Result<Hold> LockHold(const std::string& hold_id, int64_t customer_id, Instant now) override {
    return LoadHold(c_, hold_id, customer_id, now);
  }
  Result<std::optional<ShowtimeTerms>> ReadShowtime(int64_t showtime_id, RowLock) override {
    Query q(c_, kShowtimeTerms, {showtime_id});
    if (!q.Next()) {
      if (!q.status().ok()) return q.status();
      return std::optional<ShowtimeTerms>();
    }
    ShowtimeTerms terms{FromEpochMs(q.Int(0)), FromEpochMs(q.Int(1)), q.Int(2) != 0, std::nullopt};
    if (!q.IsNull(3)) terms.refund_until_minutes = static_cast<int>(q.Int(3));
    return std::optional<ShowtimeTerms>(terms);
  }
  Result<int64_t> BookingShowtime(int64_t booking_id) override {
    Query q(c_, kBookingShowtime, {booking_id});
    if (!q.Next())
      return q.status().ok() ? Result<int64_t>(int64_t{0}) : Result<int64_t>(q.status());
    return q.Int(0);
  }
  Status MarkShowtimeCancelled(int64_t showtime_id, const std::string& reason,
                               Instant now) override {
    auto r = Query(c_, kMarkShowtimeCancelled, {showtime_id, reason, ToEpochMs(now)}).Exec();
    if (!r.ok()) return r.status();
    // CancelShowtimeIn read the row SCHEDULED in this transaction.
    if (r.value() != 1) {
      return Status(Code::kInternal, "showtime " + std::to_string(showtime_id) + " not cancelled");
    }
    return Status::Ok();
  }
  Result<std::vector<Booking>> LockLiveBookings(int64_t showtime_id) override {
    Query q(c_, kLiveBookings, {showtime_id});
    std::vector<Booking> out;
    while (q.Next()) out.push_back(ReadBooking(q));
    if (!q.status().ok()) return q.status();
    return out;
  }
  Result<std::vector<std::string>> FreeSeats(int64_t showtime_id) override {
    auto ended = Query(c_, kEndShowtimeHolds, {showtime_id}).Exec();
    if (!ended.ok()) return ended.status();
    Query q(c_, kFreeShowtimeSeats, {showtime_id});
    std::vector<std::string> seats;
    while (q.Next()) seats.push_back(q.Text(0));
    if (!q.status().ok()) return q.status();
    return seats;
  }
  Result<int64_t> CountCheckIns(int64_t booking_id) override {
    Query q(c_, kCountBookingCheckIns, {booking_id});
    if (!q.Next()) return q.status().ok() ? Status(Code::kInternal, "no count") : q.status();
    return q.Int(0);
  }
  Result<int> FreeBookedSeats(const Booking& b) override {
    return Query(c_, kFreeBookedSeats, {b.showtime_id, b.id}).Exec();
  }
  Result<std::optional<Showtime>> LoadShowtime(int64_t showtime_id) override {
    Query q(c_, kSelectShowtime, {showtime_id});
    if (!q.Next()) {
      if (!q.status().ok()) return q.status();
      return std::optional<Showtime>();
    }
    Showtime s = sqlite::ReadShowtime(q);
    if (Status st = LoadPrices(c_, &s); !st.ok()) return st;
    return std::optional<Showtime>(std::move(s));
  }
  Result<bool> SalesStarted(int64_t showtime_id, Instant now) override {
    Query q(c_, kSalesStarted, {showtime_id, ToEpochMs(now)});
    if (!q.Next()) return q.status().ok() ? Status(Code::kInternal, "no answer") : q.status();
    return q.Int(0) != 0;
  }
  Status UpdateShowtime(const Showtime& s) override {
    auto r =
        Query(c_, kUpdateShowtime,
              {s.id, s.title, ToEpochMs(s.starts_at),
               s.refund_until_minutes ? Value(int64_t{*s.refund_until_minutes}) : Value(nullptr)})
            .Exec();
    if (!r.ok()) return r.status();
    for (const auto& [category, price] : s.prices) {
      auto p = Query(c_, kUpdatePrice, {s.id, category, price.amount, price.currency}).Exec();
      if (!p.ok()) return p.status();
    }
    return Status::Ok();
  }
  Status InsertAdminChange(const AdminChange& change, Instant now) override {
    auto r = Query(c_, kInsertAdminChange,
                   {change.showtime_id, change.actor, change.action, change.before, change.after,
                    ToEpochMs(now)})
                 .Exec();
    return r.ok() ? Status::Ok() : r.status();
  }
  Result<int64_t> PendingBookingOf(const std::string& hold_id) override {
    Query q(c_, kPendingBookingOfHold, {hold_id});
    if (!q.Next())
      return q.status().ok() ? Result<int64_t>(int64_t{0}) : Result<int64_t>(q.status());
    return q.Int(0);
  }
  Result<int> RearmSeats(const Hold& hold, Instant expires_at, Instant now) override {
    return Query(c_, kRearmSeats,
                 {ToEpochMs(expires_at), hold.showtime_id, hold.hold_id, ToEpochMs(now)})
        .Exec();
  }
  Status SetHoldExpiry(const std::string& hold_id, Instant expires_at) override {
    auto r = Query(c_, kSetHoldExpiry, {ToEpochMs(expires_at), hold_id}).Exec();
    return r.ok() ? Status::Ok() : r.status();
  }
  Result<std::vector<Price>> SeatPrices(int64_t showtime_id,
                                        const std::vector<std::string>& seats) override {
    Query q(c_, kSeatPrices, {showtime_id, SeatsJson(seats)});
    std::vector<Price> prices;
    while (q.Next()) prices.push_back(Price{q.Int(0), q.Text(1)});
    if (!q.status().ok()) return q.status();
    return prices;
  }
  Result<int64_t> InsertBooking(const Booking& b, Instant now) override {
    // StartCheckoutIn's booking: priced seats, PENDING.
    BOX_ASSERT(!b.seats.empty() && b.amount.amount >= 0 && b.status == BookingStatus::kPending);
    auto r = Query(c_, kInsertBooking,
                   {b.hold_id, b.showtime_id, b.customer_id, JoinComma(b.seats), b.amount.amount,
                    b.amount.currency, ToEpochMs(now)})
                 .Exec();
    if (!r.ok()) return r.status();
    return sqlite3_last_insert_rowid(c_.db());
  }
  Result<std::optional<Booking>> LockBooking(int64_t booking_id) override {
    return LoadBooking(c_, booking_id);
  }
  Result<bool> InsertPayment(const PaymentReport& p, int64_t booking_id, Instant now) override {
    BOX_ASSERT(!p.payment_id.empty());  // SettlePaymentIn refuses a report without one
    auto r = Query(c_, kInsertPayment,
                   {p.payment_id, p.session_id, booking_id ? Value(booking_id) : Value(nullptr),
                    std::string(p.succeeded ? "SUCCEEDED" : "FAILED"), p.amount, p.currency,
                    ToEpochMs(now)})
                 .Exec();
    if (!r.ok()) return r.status();
    return r.value() == 1;
  }
  Result<bool> ConfirmSeats(const Booking& b, Instant now) override {
    // All or none: a short count is undone back to the savepoint.
    if (Status s = c_.ExecScript("SAVEPOINT confirm_seats"); !s.ok()) return s;
    auto r = Query(c_, kConfirmSeats, {b.id, b.showtime_id, b.hold_id, ToEpochMs(now)}).Exec();
    const bool all = r.ok() && static_cast<size_t>(r.value()) == b.seats.size();
    if (!all) c_.ExecScript("ROLLBACK TO confirm_seats");
    c_.ExecScript("RELEASE confirm_seats");
    if (!r.ok()) return r.status();
    return all;
  }
  Status MarkHoldBooked(const std::string& hold_id) override {
    auto r = Query(c_, kMarkHoldBooked, {hold_id}).Exec();
    return r.ok() ? Status::Ok() : r.status();
  }
  Status UpdateBooking(int64_t booking_id, BookingStatus status, const std::string& payment_id,
                       Instant now) override {
    auto r =
        Query(c_, kUpdateBooking,
              {std::string(BookingStatusName(status)),
               payment_id.empty() ? Value(nullptr) : Value(payment_id), ToEpochMs(now), booking_id})
            .Exec();
    return r.ok() ? Status::Ok() : r.status();
  }
  Status InsertRefund(const Refund& refund, Instant now) override {
    BOX_ASSERT(!refund.refund_id.empty() && !refund.payment_id.empty() && !refund.issued);
    auto r = Query(c_, kInsertRefund,
                   {refund.refund_id, refund.payment_id,
                    refund.booking_id ? Value(refund.booking_id) : Value(nullptr),
                    refund.amount.amount, refund.amount.currency, ToEpochMs(now),
                    refund.reason.empty() ? Value(nullptr) : Value(refund.reason)})
                 .Exec();
    return r.ok() ? Status::Ok() : r.status();
  }
  Result<bool> MarkRefundIssued(const std::string& refund_id, const std::string& gateway_refund_id,
                                Instant now) override {
    auto r = Query(c_, kMarkRefundIssued, {gateway_refund_id, ToEpochMs(now), refund_id}).Exec();
    if (!r.ok()) return r.status();
    return r.value() == 1;
  }
  Result<std::optional<Refund>> RefundBooking(const std::string& refund_id) override {
    Query q(c_, kRefundBooking, {refund_id});
    if (!q.Next()) {
      if (!q.status().ok()) return q.status();
      return std::optional<Refund>();
    }
    Refund refund;
    refund.refund_id = refund_id;
    refund.booking_id = q.IsNull(0) ? 0 : q.Int(0);
    refund.reason = q.IsNull(1) ? "" : q.Text(1);
    return std::optional<Refund>(std::move(refund));
  }
  Result<std::optional<IdempotencyRecord>> LockKey(int64_t customer_id,
                                                   const std::string& key) override {
    Query q(c_, kSelectKey, {customer_id, key});
    if (!q.Next()) {
      if (!q.status().ok()) return q.status();
      return std::optional<IdempotencyRecord>();
    }
    IdempotencyRecord r;
    r.key = IdempotencyKey{customer_id, key, q.Text(0)};
    auto phase = ParseKeyPhase(q.Text(1));
    if (!phase) return Status(Code::kInternal, "unknown idempotency key state " + q.Text(1));
    r.phase = *phase;
    r.token = q.Text(2);
    r.locked_until = ReadOptMs(q, 3);
    r.booking_id = q.IsNull(4) ? 0 : q.Int(4);
    r.hold_expiry_before = ReadOptMs(q, 5);
    r.hold_expiry_after = ReadOptMs(q, 6);
    r.response_status = q.IsNull(7) ? 0 : static_cast<int>(q.Int(7));
    r.response_body = q.Text(8);
    return std::optional<IdempotencyRecord>(std::move(r));
  }
  Result<bool> InsertKey(const IdempotencyRecord& r, Instant now) override {
    // ClaimCheckoutKeyIn's fresh claim: started, with its token and lease.
    BOX_ASSERT(r.phase == KeyPhase::kStarted && !r.token.empty() && r.locked_until.has_value());
    auto n =
        Query(c_, kInsertKey,
              {r.key.customer_id, r.key.key, r.key.fingerprint, std::string(KeyPhaseName(r.phase)),
               r.token, OptMs(r.locked_until), ToEpochMs(now)})
            .Exec();
    if (!n.ok()) return n.status();
    return n.value() == 1;
  }
  Status UpdateKey(const IdempotencyRecord& r, Instant now) override {
    auto n = Query(c_, kUpdateKey,
                   {r.key.customer_id, r.key.key, std::string(KeyPhaseName(r.phase)),
                    r.token.empty() ? Value(nullptr) : Value(r.token), OptMs(r.locked_until),
                    r.booking_id ? Value(r.booking_id) : Value(nullptr),
                    OptMs(r.hold_expiry_before), OptMs(r.hold_expiry_after),
                    r.response_status ? Value(int64_t{r.response_status}) : Value(nullptr),
                    r.response_status ? Value(r.response_body) : Value(nullptr), ToEpochMs(now)})
                 .Exec();
    return n.ok() ? Status::Ok() : n.status();
  }
  Status DeleteKey(int64_t customer_id, const std::string& key) override {
    auto n = Query(c_, kDeleteKey, {customer_id, key}).Exec();
    return n.ok() ? Status::Ok() : n.status();
  }
  Status ResetSeatsExpiry(const Hold& hold, Instant from, Instant to) override {
    auto n = Query(c_, kResetSeatsExpiry,
                   {hold.showtime_id, hold.hold_id, ToEpochMs(from), ToEpochMs(to)})
                 .Exec();
    return n.ok() ? Status::Ok() : n.status();
  }
  Result<bool> AttachSession(int64_t booking_id, const std::string& session_id,
                             const std::string& url, Instant expires_at, Instant now,
                             const std::string& email) override {
    auto n = Query(c_, kAttachSession,
                   {session_id, url, ToEpochMs(expires_at), ToEpochMs(now), booking_id,
                    email.empty() ? Value(nullptr) : Value(email)})
                 .Exec();
    if (!n.ok()) return n.status();
    return n.value() == 1;
  }
  Status InsertEvent(const std::string& event_id, const std::string& type, const std::string& key,
                     const std::string& payload, Instant now) override {
    auto r = Query(c_, kInsertEvent, {event_id, type, key, payload, ToEpochMs(now)}).Exec();
    return r.ok() ? Status::Ok() : r.status();
  }

 private:
  SqliteConnection& c_;
  const Clock* clock_;
};

}  // namespace boxoffice::sqlite
