#include "store/pg_money_tx.h"

#include <algorithm>

#include "core/crypto.h"
#include "core/status.h"
#include "store/pg_rows.h"
#include "store/pg_sql.h"

namespace boxoffice {

Result<Instant> PgMoneyTx::Now() {
  auto r = c_.Exec(kNowMs, {clock_});
  if (!r.ok()) return r.status();
  return FromEpochMs(Int(r.value().get(), 0, 0));
}

Result<Hold> PgMoneyTx::LockHold(const std::string& hold_id, int64_t customer_id, Instant now) {
  if (!IsUuid(hold_id)) return HoldNotFound(hold_id);
  auto r = c_.Exec(kLockHold, {P(ToEpochMs(now)), hold_id, P(customer_id)});
  if (!r.ok()) return r.status();
  if (PQntuples(r.value().get()) == 0) return HoldNotFound(hold_id);
  return ReadHold(r.value().get());
}

Result<std::optional<ShowtimeTerms>> PgMoneyTx::ReadShowtime(int64_t showtime_id, RowLock lock) {
  const Sql& sql = lock == RowLock::kShare    ? kShowtimeTermsShare
                   : lock == RowLock::kUpdate ? kShowtimeTermsUpdate
                                              : kShowtimeTerms;
  auto r = c_.Exec(sql, {P(showtime_id)});
  if (!r.ok()) return r.status();
  const PGresult* g = r.value().get();
  if (PQntuples(g) == 0) return std::optional<ShowtimeTerms>();
  ShowtimeTerms terms{FromEpochMs(Int(g, 0, 0)), FromEpochMs(Int(g, 0, 1)), Bool(g, 0, 2),
                      std::nullopt};
  if (!PQgetisnull(g, 0, 3)) terms.refund_until_minutes = static_cast<int>(Int(g, 0, 3));
  return std::optional<ShowtimeTerms>(terms);
}

Result<int64_t> PgMoneyTx::BookingShowtime(int64_t booking_id) {
  auto r = c_.Exec(kBookingShowtime, {P(booking_id)});
  if (!r.ok()) return r.status();
  return PQntuples(r.value().get()) == 0 ? int64_t{0} : Int(r.value().get(), 0, 0);
}

Status PgMoneyTx::MarkShowtimeCancelled(int64_t showtime_id, const std::string& reason,
                                        Instant now) {
  auto r = c_.Exec(kMarkShowtimeCancelled, {P(showtime_id), reason, P(ToEpochMs(now))});
  if (!r.ok()) return r.status();
  // CancelShowtimeIn read the row SCHEDULED under its lock.
  if (std::atoi(PQcmdTuples(r.value().get())) != 1) {
    return Status(Code::kInternal, "showtime " + std::to_string(showtime_id) + " not cancelled");
  }
  return Status::Ok();
}

Result<std::vector<Booking>> PgMoneyTx::LockLiveBookings(int64_t showtime_id) {
  auto r = c_.Exec(kLockLiveBookings, {P(showtime_id)});
  if (!r.ok()) return r.status();
  std::vector<Booking> out;
  for (int i = 0; i < PQntuples(r.value().get()); ++i)
    out.push_back(ReadBooking(r.value().get(), i));
  return out;
}

Result<std::vector<std::string>> PgMoneyTx::FreeSeats(int64_t showtime_id) {
  if (Status s = Done(c_.Exec(kEndShowtimeHolds, {P(showtime_id)})); !s.ok()) return s;
  auto r = c_.Exec(kFreeShowtimeSeats, {P(showtime_id)});
  if (!r.ok()) return r.status();
  const PGresult* g = r.value().get();
  std::vector<std::string> seats, holds;
  for (int i = 0; i < PQntuples(g); ++i) {
    seats.push_back(Text(g, i, 0));
    if (Text(g, i, 1) == "HELD" && !PQgetisnull(g, i, 2)) holds.push_back(Text(g, i, 2));
  }
  std::sort(holds.begin(), holds.end());
  holds.erase(std::unique(holds.begin(), holds.end()), holds.end());
  if (!holds.empty()) {
    if (Status s = Done(c_.Exec(kEndHoldsAfter, {ArrayLiteral(holds)})); !s.ok()) return s;
  }
  return seats;
}

Result<int64_t> PgMoneyTx::CountCheckIns(int64_t booking_id) {
  auto r = c_.Exec(kCountBookingCheckIns, {P(booking_id)});
  if (!r.ok()) return r.status();
  return Int(r.value().get(), 0, 0);
}

Result<int> PgMoneyTx::FreeBookedSeats(const Booking& b) {
  auto r = c_.Exec(kFreeBookedSeats, {P(b.showtime_id), ArrayLiteral(b.seats), P(b.id)});
  if (!r.ok()) return r.status();
  return std::atoi(PQcmdTuples(r.value().get()));
}

Result<std::optional<Showtime>> PgMoneyTx::LoadShowtime(int64_t showtime_id) {
  auto r = c_.Exec(kSelectShowtime, {P(showtime_id)});
  if (!r.ok()) return r.status();
  std::vector<Showtime> one = ReadShowtimes(r.value().get());
  if (one.empty()) return std::optional<Showtime>();
  if (Status s = LoadPrices(c_, &one); !s.ok()) return s;
  return std::optional<Showtime>(std::move(one[0]));
}

Result<bool> PgMoneyTx::SalesStarted(int64_t showtime_id, Instant now) {
  auto r = c_.Exec(kSalesStarted, {P(ToEpochMs(now)), P(showtime_id)});
  if (!r.ok()) return r.status();
  return Bool(r.value().get(), 0, 0);
}

Status PgMoneyTx::UpdateShowtime(const Showtime& s) {
  if (Status st =
          Done(c_.Exec(kUpdateShowtime,
                       {P(s.id), s.title, P(ToEpochMs(s.starts_at)),
                        s.refund_until_minutes ? P(int64_t{*s.refund_until_minutes}) : Param()}));
      !st.ok())
    return st;
  std::vector<std::string> categories, currencies;
  std::vector<int64_t> amounts;
  for (const auto& [category, price] : s.prices) {
    categories.push_back(category);
    amounts.push_back(price.amount);
    currencies.push_back(price.currency);
  }
  return Done(c_.Exec(kUpdatePrices, {P(s.id), ArrayLiteral(categories), IntArrayLiteral(amounts),
                                      ArrayLiteral(currencies)}));
}

Status PgMoneyTx::InsertAdminChange(const AdminChange& change, Instant now) {
  return Done(c_.Exec(kInsertAdminChange, {P(change.showtime_id), P(change.actor), change.action,
                                           change.before, change.after, P(ToEpochMs(now))}));
}

Result<int64_t> PgMoneyTx::PendingBookingOf(const std::string& hold_id) {
  auto r = c_.Exec(kPendingBookingOfHold, {hold_id});
  if (!r.ok()) return r.status();
  return PQntuples(r.value().get()) == 0 ? int64_t{0} : Int(r.value().get(), 0, 0);
}

Result<int> PgMoneyTx::RearmSeats(const Hold& hold, Instant expires_at, Instant now) {
  auto r = c_.Exec(kRearmSeats, {P(ToEpochMs(now)), P(hold.showtime_id), ArrayLiteral(hold.seats),
                                 hold.hold_id, P(ToEpochMs(expires_at))});
  if (!r.ok()) return r.status();
  return std::atoi(PQcmdTuples(r.value().get()));
}

Status PgMoneyTx::SetHoldExpiry(const std::string& hold_id, Instant expires_at) {
  return Done(c_.Exec(kSetHoldExpiry, {P(ToEpochMs(expires_at)), hold_id}));
}

Result<std::vector<Price>> PgMoneyTx::SeatPrices(int64_t showtime_id,
                                                 const std::vector<std::string>& seats) {
  auto r = c_.Exec(kSeatPrices, {P(showtime_id), ArrayLiteral(seats)});
  if (!r.ok()) return r.status();
  const PGresult* g = r.value().get();
  std::vector<Price> prices;
  for (int i = 0; i < PQntuples(g); ++i) prices.push_back(Price{Int(g, i, 0), Text(g, i, 1)});
  return prices;
}

Result<int64_t> PgMoneyTx::InsertBooking(const Booking& b, Instant now) {
  // StartCheckoutIn's booking: priced seats, PENDING.
  BOX_ASSERT(!b.seats.empty() && b.amount.amount >= 0 && b.status == BookingStatus::kPending);
  auto r =
      c_.Exec(kInsertBooking, {b.hold_id, P(b.showtime_id), P(b.customer_id), ArrayLiteral(b.seats),
                               P(b.amount.amount), b.amount.currency, P(ToEpochMs(now))});
  if (!r.ok()) return r.status();
  return Int(r.value().get(), 0, 0);
}

Result<std::optional<Booking>> PgMoneyTx::LockBooking(int64_t booking_id) {
  auto r = c_.Exec(kLockBooking, {P(booking_id)});
  if (!r.ok()) return r.status();
  if (PQntuples(r.value().get()) == 0) return std::optional<Booking>();
  return std::optional<Booking>(ReadBooking(r.value().get()));
}

Result<bool> PgMoneyTx::InsertPayment(const PaymentReport& p, int64_t booking_id, Instant now) {
  BOX_ASSERT(!p.payment_id.empty());  // SettlePaymentIn refuses a report without one
  auto r =
      c_.Exec(kInsertPayment, {p.payment_id, p.session_id, booking_id ? P(booking_id) : Param(),
                               std::string(p.succeeded ? "SUCCEEDED" : "FAILED"), P(p.amount),
                               p.currency, P(ToEpochMs(now))});
  if (!r.ok()) return r.status();
  return PQntuples(r.value().get()) == 1;
}

Result<bool> PgMoneyTx::ConfirmSeats(const Booking& b, Instant now) {
  auto r = c_.Exec(kConfirmSeats, {P(ToEpochMs(now)), P(b.showtime_id), ArrayLiteral(b.seats),
                                   b.hold_id, P(b.id), P(static_cast<int64_t>(b.seats.size()))});
  if (!r.ok()) return r.status();
  return static_cast<size_t>(Int(r.value().get(), 0, 0)) == b.seats.size();
}

Status PgMoneyTx::MarkHoldBooked(const std::string& hold_id) {
  return Done(c_.Exec(kMarkHoldBooked, {hold_id}));
}

Status PgMoneyTx::UpdateBooking(int64_t booking_id, BookingStatus status,
                                const std::string& payment_id, Instant now) {
  return Done(c_.Exec(kUpdateBooking, {std::string(BookingStatusName(status)),
                                       payment_id.empty() ? Param() : Param(payment_id),
                                       P(ToEpochMs(now)), P(booking_id)}));
}

Status PgMoneyTx::InsertRefund(const Refund& refund, Instant now) {
  BOX_ASSERT(!refund.refund_id.empty() && !refund.payment_id.empty() && !refund.issued);
  return Done(c_.Exec(
      kInsertRefund,
      {refund.refund_id, refund.payment_id, refund.booking_id ? P(refund.booking_id) : Param(),
       P(refund.amount.amount), refund.amount.currency, P(ToEpochMs(now)),
       refund.reason.empty() ? Param() : Param(refund.reason)}));
}

Result<bool> PgMoneyTx::MarkRefundIssued(const std::string& refund_id,
                                         const std::string& gateway_refund_id, Instant now) {
  auto r = c_.Exec(kMarkRefundIssued, {gateway_refund_id, P(ToEpochMs(now)), refund_id});
  if (!r.ok()) return r.status();
  return PQntuples(r.value().get()) == 1;
}

Result<std::optional<Refund>> PgMoneyTx::RefundBooking(const std::string& refund_id) {
  if (!IsUuid(refund_id)) return std::optional<Refund>();
  auto r = c_.Exec(kRefundBooking, {refund_id});
  if (!r.ok()) return r.status();
  const PGresult* g = r.value().get();
  if (PQntuples(g) == 0) return std::optional<Refund>();
  Refund refund;
  refund.refund_id = refund_id;
  refund.booking_id = PQgetisnull(g, 0, 0) ? 0 : Int(g, 0, 0);
  refund.reason = Text(g, 0, 1);
  return std::optional<Refund>(std::move(refund));
}

Result<std::optional<IdempotencyRecord>> PgMoneyTx::LockKey(int64_t customer_id,
                                                            const std::string& key) {
  auto res = c_.Exec(kLockKey, {P(customer_id), key});
  if (!res.ok()) return res.status();
  const PGresult* r = res.value().get();
  if (PQntuples(r) == 0) return std::optional<IdempotencyRecord>();
  auto opt_ms = [r](int col) -> std::optional<Instant> {
    if (PQgetisnull(r, 0, col)) return std::nullopt;
    return FromEpochMs(Int(r, 0, col));
  };
  IdempotencyRecord rec;
  rec.key = IdempotencyKey{customer_id, key, Text(r, 0, 0)};
  auto phase = ParseKeyPhase(Text(r, 0, 1));
  if (!phase) return Status(Code::kInternal, "unknown idempotency key state " + Text(r, 0, 1));
  rec.phase = *phase;
  rec.token = Text(r, 0, 2);
  rec.locked_until = opt_ms(3);
  rec.booking_id = PQgetisnull(r, 0, 4) ? 0 : Int(r, 0, 4);
  rec.hold_expiry_before = opt_ms(5);
  rec.hold_expiry_after = opt_ms(6);
  rec.response_status = PQgetisnull(r, 0, 7) ? 0 : static_cast<int>(Int(r, 0, 7));
  rec.response_body = Text(r, 0, 8);
  return std::optional<IdempotencyRecord>(std::move(rec));
}

Result<bool> PgMoneyTx::InsertKey(const IdempotencyRecord& rec, Instant now) {
  // ClaimCheckoutKeyIn's fresh claim: started, with its token and lease.
  BOX_ASSERT(rec.phase == KeyPhase::kStarted && !rec.token.empty() && rec.locked_until);
  auto res = c_.Exec(kInsertKey, {P(rec.key.customer_id), rec.key.key, rec.key.fingerprint,
                                  std::string(KeyPhaseName(rec.phase)), rec.token,
                                  OptMs(rec.locked_until), P(ToEpochMs(now))});
  if (!res.ok()) return res.status();
  return PQntuples(res.value().get()) == 1;
}

Status PgMoneyTx::UpdateKey(const IdempotencyRecord& rec, Instant now) {
  return Done(c_.Exec(
      kUpdateKey, {P(rec.key.customer_id), rec.key.key, std::string(KeyPhaseName(rec.phase)),
                   rec.token.empty() ? Param() : Param(rec.token), OptMs(rec.locked_until),
                   rec.booking_id ? P(rec.booking_id) : Param(), OptMs(rec.hold_expiry_before),
                   OptMs(rec.hold_expiry_after),
                   rec.response_status ? P(int64_t{rec.response_status}) : Param(),
                   rec.response_status ? Param(rec.response_body) : Param(), P(ToEpochMs(now))}));
}

Status PgMoneyTx::DeleteKey(int64_t customer_id, const std::string& key) {
  return Done(c_.Exec(kDeleteKey, {P(customer_id), key}));
}

Status PgMoneyTx::ResetSeatsExpiry(const Hold& hold, Instant from, Instant to) {
  return Done(c_.Exec(kResetSeatsExpiry, {P(hold.showtime_id), ArrayLiteral(hold.seats),
                                          hold.hold_id, P(ToEpochMs(from)), P(ToEpochMs(to))}));
}

Result<bool> PgMoneyTx::AttachSession(int64_t booking_id, const std::string& session_id,
                                      const std::string& url, Instant expires_at, Instant,
                                      const std::string& email) {
  auto res = c_.Exec(kAttachSession, {session_id, url, P(ToEpochMs(expires_at)), P(booking_id),
                                      email.empty() ? Param() : Param(email)});
  if (!res.ok()) return res.status();
  return std::atoi(PQcmdTuples(res.value().get())) == 1;
}

Status PgMoneyTx::RefundBookings(const std::vector<RefundWrite>& writes, Instant now) {
  if (writes.empty()) return Status::Ok();
  std::vector<int64_t> bookings, amounts;
  std::vector<std::string> refund_ids, payments, currencies, reasons, event_ids, keys, events;
  for (const RefundWrite& w : writes) {
    // Each a refund of its booking's payment with a reason (the statements take no NULLs).
    BOX_ASSERT(w.refund.booking_id == w.booking_id && !w.refund.payment_id.empty() &&
               !w.refund.reason.empty() && !w.refund.issued);
    bookings.push_back(w.booking_id);
    refund_ids.push_back(w.refund.refund_id);
    payments.push_back(w.refund.payment_id);
    amounts.push_back(w.refund.amount.amount);
    currencies.push_back(w.refund.amount.currency);
    reasons.push_back(w.refund.reason);
    event_ids.push_back(w.event_id);
    keys.push_back(std::to_string(w.booking_id));
    events.push_back(w.event);
  }
  const Param at = P(ToEpochMs(now));
  auto updated = c_.Exec(kRefundBookings, {at, IntArrayLiteral(bookings)});
  if (!updated.ok()) return updated.status();
  // Every booking was locked CONFIRMED by this transaction (the caller's rule).
  const std::string changed = PQcmdTuples(updated.value().get());
  if (changed != std::to_string(writes.size())) {
    return Status(Code::kInternal, "refunded " + changed + " of " + std::to_string(writes.size()) +
                                       " confirmed bookings");
  }
  if (Status s = Done(c_.Exec(kInsertRefunds, {at, ArrayLiteral(refund_ids), ArrayLiteral(payments),
                                               IntArrayLiteral(bookings), IntArrayLiteral(amounts),
                                               ArrayLiteral(currencies), ArrayLiteral(reasons)}));
      !s.ok())
    return s;
  return Done(c_.Exec(kInsertEvents, {at, std::string("BookingRefunded"), ArrayLiteral(event_ids),
                                      ArrayLiteral(keys), ArrayLiteral(events)}));
}

Status PgMoneyTx::InsertEvent(const std::string& event_id, const std::string& type,
                              const std::string& key, const std::string& payload, Instant now) {
  return Done(c_.Exec(kInsertEvent, {event_id, type, key, payload, P(ToEpochMs(now))}));
}

}  // namespace boxoffice
