#include "store/money.h"

#include <charconv>
#include <nlohmann/json.hpp>

#include "core/crypto.h"
#include "core/status.h"
#include "core/text.h"
#include "core/time_format.h"
#include "store/shards.h"

namespace boxoffice {
namespace {

// Re-arms an active hold's seats to now + ttl, never past its lifetime cap and never
// earlier than it already ends. kNotActive when the hold lost any seat.
Result<Hold> Rearm(MoneyTx& tx, Hold hold, Millis ttl, Millis max_lifetime, Instant now) {
  // The policy's, checked where it is made (ServeFlagsError, HoldService, CheckoutService).
  BOX_ASSERT(ttl > Millis(0) && max_lifetime >= ttl);
  if (hold.state != HoldState::kHeld) return Status(Code::kNotActive, "hold is not active");
  const Instant target =
      std::max(hold.expires_at, std::min(now + ttl, hold.created_at + max_lifetime));
  auto changed = tx.RearmSeats(hold, target, now);
  if (!changed.ok()) return changed.status();
  if (static_cast<size_t>(changed.value()) != hold.seats.size()) {
    return Status(Code::kNotActive, "hold lost its seats");
  }
  BOX_ASSERT(target >= hold.expires_at);  // a re-arm never shortens a hold
  if (Status s = tx.SetHoldExpiry(hold.hold_id, target); !s.ok()) return s;
  hold.expires_at = target;
  return hold;
}

// The price of a hold: every seat priced, one currency, and a sum that fits (checked: the
// admin API bounds prices, but a row written another way must not wrap or saturate).
Result<Price> SumPrices(const std::vector<Price>& prices, size_t seats) {
  if (prices.size() != seats || prices.empty()) {
    return Status(Code::kInternal, "seats lack a price");
  }
  Price total{0, prices.front().currency};
  for (const Price& p : prices) {
    if (p.currency != total.currency) return Status(Code::kInternal, "seats mix currencies");
    if (p.amount < 0 || __builtin_add_overflow(total.amount, p.amount, &total.amount)) {
      return Status(Code::kInternal, "seat prices do not sum");
    }
  }
  BOX_ASSERT(total.amount >= 0);  // each price checked non-negative, the sum checked
  return total;
}

Status WriteEvent(MoneyTx& tx, const char* type, const Booking& booking, Instant now,
                  const std::string& reason = "") {
  const std::string event_id = NewUuid();
  return tx.InsertEvent(event_id, type, std::to_string(booking.id),
                        BookingEventJson(event_id, type, booking, now, reason), now);
}

// A confirmed booking refunded by a cancel, with the reason, as MoneyTx::RefundBookings
// writes it (b.status becomes REFUNDED).
MoneyTx::RefundWrite RefundOf(Booking& b, Instant now, const std::string& reason) {
  b.status = BookingStatus::kRefunded;
  const std::string event_id = NewUuid();
  return MoneyTx::RefundWrite{
      b.id, Refund{NewUuid(), b.payment_id, b.id, b.amount, false, 0, reason}, event_id,
      BookingEventJson(event_id, "BookingRefunded", b, now, reason)};
}

Status WriteRefund(MoneyTx& tx, const PaymentReport& report, int64_t booking_id, Instant now,
                   const std::string& reason = "") {
  // Only money received is given back, and only a report with an id reaches here
  // (SettlePaymentIn refuses one without).
  BOX_ASSERT(report.succeeded && !report.payment_id.empty());
  return tx.InsertRefund(Refund{NewUuid(), report.payment_id, booking_id,
                                Price{report.amount, report.currency}, false, 0, reason},
                         now);
}

}  // namespace

std::optional<int64_t> ParseReference(const std::string& text) { return ParseDecimalId(text); }

Result<Hold> ExtendHoldIn(MoneyTx& tx, const std::string& hold_id, int64_t customer_id, Millis ttl,
                          Millis max_lifetime) {
  auto now = tx.Now();
  if (!now.ok()) return now.status();
  auto hold = tx.LockHold(hold_id, customer_id, now.value());
  if (!hold.ok()) return hold.status();
  return Rearm(tx, hold.value(), ttl, max_lifetime, now.value());
}

// The key's record if lock still holds its claim in the expected phase.
Result<IdempotencyRecord> LockClaimed(MoneyTx& tx, const KeyLock& lock, KeyPhase phase) {
  auto record = tx.LockKey(lock.customer_id, lock.key);
  if (!record.ok()) return record.status();
  if (!record.value() || record.value()->token != lock.token || record.value()->phase != phase) {
    return Status(Code::kInProgress, "another request took over this idempotency key");
  }
  return *record.value();
}

Result<Booking> StartCheckoutIn(MoneyTx& tx, const KeyLock* lock, const std::string& hold_id,
                                int64_t customer_id, Millis ttl, Millis max_lifetime) {
  auto now = tx.Now();
  if (!now.ok()) return now.status();
  // Lock order for keyed requests: the key row before everything else.
  std::optional<IdempotencyRecord> record;
  if (lock) {
    auto claimed = LockClaimed(tx, *lock, KeyPhase::kStarted);
    if (!claimed.ok()) return claimed.status();
    record = std::move(claimed.value());
  }
  auto hold = tx.LockHold(hold_id, customer_id, now.value());
  if (!hold.ok()) return hold.status();
  // A cancelled showtime sells nothing (its holds were ended: said first), and sales close
  // inside the decision, on the store's clock (API.md: no checkout after it). Read without
  // a lock: a checkout that slips past a cancel committing now is refused at its
  // confirmation, which takes the row.
  auto terms = tx.ReadShowtime(hold->showtime_id, RowLock::kNone);
  if (!terms.ok()) return terms.status();
  if (terms.value() && terms.value()->cancelled) return ShowtimeCancelled(hold->showtime_id);
  if (hold->state != HoldState::kHeld) return Status(Code::kNotActive, "hold is not active");
  if (terms.value() && now.value() >= terms.value()->sales_close_at) {
    return SalesClosed(hold->showtime_id);
  }
  auto pending = tx.PendingBookingOf(hold_id);
  if (!pending.ok()) return pending.status();
  if (pending.value() != 0) {
    return Status(Code::kCheckoutExists, "a checkout of this hold is pending")
        .WithId(pending.value());
  }
  auto rearmed = Rearm(tx, hold.value(), ttl, max_lifetime, now.value());
  if (!rearmed.ok()) return rearmed.status();
  auto prices = tx.SeatPrices(hold->showtime_id, hold->seats);
  if (!prices.ok()) return prices.status();
  auto price = SumPrices(prices.value(), hold->seats.size());
  if (!price.ok()) return price.status();
  Booking b;
  b.hold_id = hold_id;
  b.showtime_id = hold->showtime_id;
  b.customer_id = customer_id;
  b.seats = hold->seats;
  b.status = BookingStatus::kPending;
  b.amount = price.value();
  b.created_at = now.value();
  // SumPrices priced every seat of the hold: a booking is never for no seat.
  BOX_ASSERT(!b.seats.empty() && b.seats.size() == prices->size());
  auto id = tx.InsertBooking(b, now.value());
  if (!id.ok()) return id.status();
  b.id = id.value();
  b.hold_expires_at = rearmed->expires_at;
  // The undo (AbortCheckoutIn) puts the expiry back from after to before.
  BOX_ASSERT(rearmed->expires_at >= hold->expires_at);
  if (record) {
    record->phase = KeyPhase::kBookingCreated;
    record->booking_id = b.id;
    record->hold_expiry_before = hold->expires_at;
    record->hold_expiry_after = rearmed->expires_at;
    if (Status s = tx.UpdateKey(*record, now.value()); !s.ok()) return s;
  }
  return b;
}

std::string ClaimToken(const IdempotencyKey& key) {
  std::string token = key.token.empty() ? NewUuidOnShard(ShardOfUuid(key.fingerprint))  // routes
                                        : key.token;
  BOX_ASSERT(!token.empty());  // an empty token would match a finished key's cleared one
  return token;
}

namespace {

// The key's record, locked, while lock still holds its unfinished claim; nullopt when the
// claim is no longer lock's (another request's, finished, or gone).
Result<std::optional<IdempotencyRecord>> LockOwnClaim(MoneyTx& tx, const KeyLock& lock) {
  auto record = tx.LockKey(lock.customer_id, lock.key);
  if (!record.ok()) return record.status();
  if (!record.value() || record.value()->token != lock.token ||
      record.value()->phase == KeyPhase::kFinished) {
    return std::optional<IdempotencyRecord>();
  }
  return std::move(record.value());
}

}  // namespace

Status EndCheckoutLeaseIn(MoneyTx& tx, const KeyLock& lock) {
  auto now = tx.Now();
  if (!now.ok()) return now.status();
  // No key at all: the claim whose answer was lost may not have committed yet (kNotFound,
  // so the caller tries again); a key of another claim, or finished, is not ours any more.
  auto found = tx.LockKey(lock.customer_id, lock.key);
  if (!found.ok()) return found.status();
  if (!found.value()) return Status(Code::kNotFound, "no such idempotency key (yet)");
  IdempotencyRecord& r = *found.value();
  if (r.token != lock.token || r.phase == KeyPhase::kFinished) return Status::Ok();
  if (r.locked_until && *r.locked_until <= now.value()) return Status::Ok();
  r.locked_until = now.value();
  return tx.UpdateKey(r, now.value());
}

Result<IdempotencyRecord> ClaimCheckoutKeyIn(MoneyTx& tx, const IdempotencyKey& key, Millis lease) {
  BOX_ASSERT(lease > Millis(0));  // CheckoutOptions::key_lease, checked at construction
  auto now = tx.Now();
  if (!now.ok()) return now.status();
  auto found = tx.LockKey(key.customer_id, key.key);
  if (!found.ok()) return found.status();
  if (!found.value()) {
    IdempotencyRecord fresh;
    fresh.key = key;
    fresh.phase = KeyPhase::kStarted;
    fresh.token = ClaimToken(key);
    fresh.locked_until = now.value() + lease;
    auto inserted = tx.InsertKey(fresh, now.value());
    if (!inserted.ok()) return inserted.status();
    if (inserted.value()) return fresh;
    // A concurrent request recorded the key first; judge it as an existing one.
    found = tx.LockKey(key.customer_id, key.key);
    if (!found.ok()) return found.status();
    if (!found.value()) return Status(Code::kInProgress, "the idempotency key is being used");
  }
  IdempotencyRecord record = std::move(*found.value());
  if (record.key.fingerprint != key.fingerprint) {
    return Status(Code::kKeyReused, "this Idempotency-Key was used for another request");
  }
  if (record.phase == KeyPhase::kFinished) return record;
  if (record.locked_until && *record.locked_until > now.value()) {
    return Status(Code::kInProgress, "a request with this Idempotency-Key is in progress");
  }
  // The request that held the key died; this one carries it on from its recovery point.
  record.token = ClaimToken(key);
  record.locked_until = now.value() + lease;
  if (Status s = tx.UpdateKey(record, now.value()); !s.ok()) return s;
  return record;
}

Result<bool> FinishCheckoutIn(MoneyTx& tx, const KeyLock& lock, const std::string& session_id,
                              const std::string& url, Instant expires_at, int response_status,
                              const std::string& response_body, const std::string& email) {
  auto now = tx.Now();
  if (!now.ok()) return now.status();
  auto record = LockClaimed(tx, lock, KeyPhase::kBookingCreated);
  if (!record.ok()) return record.status();
  auto attached =
      tx.AttachSession(record->booking_id, session_id, url, expires_at, now.value(), email);
  if (!attached.ok()) return attached.status();
  if (!attached.value()) {
    if (Status s = tx.DeleteKey(lock.customer_id, lock.key); !s.ok()) return s;
    return false;
  }
  record->phase = KeyPhase::kFinished;
  record->token.clear();
  record->locked_until.reset();
  record->response_status = response_status;
  record->response_body = response_body;
  if (Status s = tx.UpdateKey(record.value(), now.value()); !s.ok()) return s;
  return true;
}

Status AbortCheckoutIn(MoneyTx& tx, const KeyLock& lock) {
  auto now = tx.Now();
  if (!now.ok()) return now.status();
  auto record = LockOwnClaim(tx, lock);
  if (!record.ok()) return record.status();
  if (!record.value()) return Status::Ok();  // not ours to undo
  const IdempotencyRecord& r = *record.value();
  BOX_ASSERT(r.token == lock.token && r.phase != KeyPhase::kFinished);  // LockOwnClaim's
  if (r.phase == KeyPhase::kBookingCreated) {
    auto booking = tx.LockBooking(r.booking_id);
    if (!booking.ok()) return booking.status();
    std::optional<Booking>& b = booking.value();
    if (b && b->status == BookingStatus::kPending && b->session_id.empty()) {
      if (Status s = tx.UpdateBooking(b->id, BookingStatus::kFailed, "", now.value()); !s.ok())
        return s;
      auto hold = tx.LockHold(b->hold_id, b->customer_id, now.value());
      if (!hold.ok()) return hold.status();
      if (r.hold_expiry_before && r.hold_expiry_after && hold->state == HoldState::kHeld &&
          hold->expires_at == *r.hold_expiry_after) {
        if (Status s =
                tx.ResetSeatsExpiry(hold.value(), *r.hold_expiry_after, *r.hold_expiry_before);
            !s.ok())
          return s;
        if (Status s = tx.SetHoldExpiry(b->hold_id, *r.hold_expiry_before); !s.ok()) return s;
      }
    }
  }
  return tx.DeleteKey(lock.customer_id, lock.key);
}

Result<Settlement> SettlePaymentIn(MoneyTx& tx, const PaymentReport& report,
                                   Booking* confirmed_booking) {
  auto now_r = tx.Now();
  if (!now_r.ok()) return now_r.status();
  const Instant now = now_r.value();
  // An empty id would collide with every other empty one and read as a duplicate.
  if (report.payment_id.empty()) return Status(Code::kInvalid, "a payment report needs its id");
  std::optional<Booking> booking;
  bool cancelled = false;  // the booking's showtime was cancelled
  if (auto id = ParseReference(report.reference)) {
    // Lock order: the showtime before the booking. Held FOR SHARE to the end, so a cancel
    // (which takes it for update) either committed before this read it, or waits for this
    // transaction: a booking is never confirmed on a cancelled showtime.
    auto showtime = tx.BookingShowtime(*id);
    if (!showtime.ok()) return showtime.status();
    if (showtime.value() != 0) {
      auto terms = tx.ReadShowtime(showtime.value(), RowLock::kShare);
      if (!terms.ok()) return terms.status();
      cancelled = terms.value() && terms.value()->cancelled;
    }
    auto found = tx.LockBooking(*id);
    if (!found.ok()) return found.status();
    booking = std::move(found.value());
  }
  // Why a paid booking's money goes back, when it does.
  const std::string refund_reason = cancelled ? kShowtimeCancelledReason : "";
  auto inserted = tx.InsertPayment(report, booking ? booking->id : 0, now);
  if (!inserted.ok()) return inserted.status();
  if (!inserted.value()) {
    // The booking this very payment confirmed comes back with the duplicate: the answer to
    // the first report may have been lost before the hold path heard of the confirmation.
    if (booking && booking->status == BookingStatus::kConfirmed &&
        booking->payment_id == report.payment_id && confirmed_booking) {
      *confirmed_booking = *booking;
    }
    return Settlement::kDuplicate;
  }

  if (!booking) {
    // Money for nothing we sold: record it and give it back.
    if (report.succeeded) {
      if (Status s = WriteRefund(tx, report, 0, now); !s.ok()) return s;
    }
    return Settlement::kUnknownRecorded;
  }
  Booking& b = *booking;
  if (b.status != BookingStatus::kPending) {
    if (!report.succeeded) return Settlement::kPaymentFailed;
    if (Status s = WriteRefund(tx, report, b.id, now, refund_reason); !s.ok()) return s;
    return Settlement::kNotPendingRefunded;
  }
  // Only the booking's own session may settle it. A booking whose session is not attached
  // yet (the checkout is between the gateway call and its last phase) has exactly one
  // session, opened under the booking's idempotency key, so such a report is its own.
  if (!b.session_id.empty() && report.session_id != b.session_id) {
    // Refunded as money for nothing we sold (booking 0): its completion must not mark this
    // booking REFUNDED, whose own session may be paid or fail on its own.
    if (report.succeeded) {
      if (Status s = WriteRefund(tx, report, 0, now); !s.ok()) return s;
    }
    return Settlement::kOtherSession;
  }
  // Any other amount or currency is not this booking's payment either, whatever it says:
  // recorded and, if it succeeded, refunded (its own amount) as money for nothing we sold.
  // The booking is left as it was, so the customer's payment through its session (the
  // right amount) still confirms it; a refund tied to the booking would mark it REFUNDED
  // once issued, as if that payment had been given back.
  if (report.amount != b.amount.amount || report.currency != b.amount.currency) {
    if (report.succeeded) {
      if (Status s = WriteRefund(tx, report, 0, now); !s.ok()) return s;
    }
    return Settlement::kMismatchRefunded;
  }
  if (!report.succeeded) {
    // The hold stays as it is: the customer may check out again while it lasts.
    b.status = BookingStatus::kFailed;
    if (Status s = tx.UpdateBooking(b.id, b.status, "", now); !s.ok()) return s;
    if (Status s = WriteEvent(tx, "BookingFailed", b, now); !s.ok()) return s;
    return Settlement::kPaymentFailed;
  }
  if (cancelled) {
    // Paid for a showtime cancelled meanwhile (a checkout that slipped past the cancel):
    // refused and refunded, never confirmed.
    b.status = BookingStatus::kFailed;
    if (Status s = tx.UpdateBooking(b.id, b.status, report.payment_id, now); !s.ok()) return s;
    if (Status s = WriteRefund(tx, report, b.id, now, refund_reason); !s.ok()) return s;
    if (Status s = WriteEvent(tx, "BookingFailed", b, now); !s.ok()) return s;
    return Settlement::kLateRefunded;
  }
  // Only a paid report of this booking's own session, amount and currency confirms it, on
  // a showtime not cancelled.
  BOX_ASSERT(b.status == BookingStatus::kPending && report.succeeded && !cancelled);
  BOX_ASSERT(report.amount == b.amount.amount && report.currency == b.amount.currency);
  BOX_ASSERT(b.session_id.empty() || report.session_id == b.session_id);
  // Lock order: the hold row before its seats, as release and extend take them.
  auto hold = tx.LockHold(b.hold_id, b.customer_id, now);
  if (!hold.ok()) return hold.status();
  auto seats = tx.ConfirmSeats(b, now);
  if (!seats.ok()) return seats.status();
  if (seats.value()) {
    if (Status s = tx.MarkHoldBooked(b.hold_id); !s.ok()) return s;
    b.status = BookingStatus::kConfirmed;
    if (Status s = tx.UpdateBooking(b.id, b.status, report.payment_id, now); !s.ok()) return s;
    if (Status s = WriteEvent(tx, "BookingConfirmed", b, now); !s.ok()) return s;
    if (confirmed_booking) {
      *confirmed_booking = b;
      confirmed_booking->payment_id = report.payment_id;
    }
    return Settlement::kConfirmed;
  }
  // Paid, but the seats cannot be delivered: never take seats back from a newer holder;
  // fail the booking and refund in this same transaction.
  b.status = BookingStatus::kFailed;
  if (Status s = tx.UpdateBooking(b.id, b.status, report.payment_id, now); !s.ok()) return s;
  if (Status s = WriteRefund(tx, report, b.id, now); !s.ok()) return s;
  if (Status s = WriteEvent(tx, "BookingFailed", b, now); !s.ok()) return s;
  return Settlement::kLateRefunded;
}

Result<bool> AbandonCheckoutIn(MoneyTx& tx, int64_t booking_id) {
  auto now = tx.Now();
  if (!now.ok()) return now.status();
  auto booking = tx.LockBooking(booking_id);
  if (!booking.ok()) return booking.status();
  if (!booking.value() || booking.value()->status != BookingStatus::kPending) return false;
  Booking& b = *booking.value();
  b.status = BookingStatus::kFailed;
  if (Status s = tx.UpdateBooking(b.id, b.status, "", now.value()); !s.ok()) return s;
  if (Status s = WriteEvent(tx, "BookingFailed", b, now.value()); !s.ok()) return s;
  return true;
}

Status CompleteRefundIn(MoneyTx& tx, const std::string& refund_id,
                        const std::string& gateway_refund_id) {
  auto now = tx.Now();
  if (!now.ok()) return now.status();
  // Lock order: booking first, as settlement takes it.
  auto refund = tx.RefundBooking(refund_id);
  if (!refund.ok()) return refund.status();
  if (!refund.value()) return Status(Code::kNotFound, "refund " + refund_id + " not found");
  std::optional<Booking> booking;
  if (refund.value()->booking_id != 0) {
    auto found = tx.LockBooking(refund.value()->booking_id);
    if (!found.ok()) return found.status();
    booking = std::move(found.value());
  }
  auto issued = tx.MarkRefundIssued(refund_id, gateway_refund_id, now.value());
  if (!issued.ok()) return issued.status();
  // A booking a cancel refunded is REFUNDED already, its event written with the decision.
  if (!issued.value() || !booking || booking->status != BookingStatus::kFailed) return Status::Ok();
  booking->status = BookingStatus::kRefunded;
  if (Status s = tx.UpdateBooking(booking->id, booking->status, "", now.value()); !s.ok()) return s;
  return WriteEvent(tx, "BookingRefunded", *booking, now.value(), refund.value()->reason);
}

namespace {

// The fields of a showtime an edit may change, as the admin trail records them.
nlohmann::json EditableJson(const Showtime& s) {
  nlohmann::json prices = nlohmann::json::object();
  for (const auto& [category, price] : s.prices) {
    prices[category] = {{"amount", price.amount}, {"currency", price.currency}};
  }
  return {{"title", s.title},
          {"startsAt", FormatRfc3339(s.starts_at)},
          {"prices", prices},
          {"refundUntilMinutesBefore",
           s.refund_until_minutes ? nlohmann::json(*s.refund_until_minutes) : nlohmann::json()}};
}

std::string Compact(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// An admin's change begins with the showtime's row, for update (the lock order's first):
// the store's clock and the showtime's terms; kNotFound for an unknown showtime.
Result<std::pair<Instant, ShowtimeTerms>> LockForChange(MoneyTx& tx, int64_t showtime_id) {
  auto now = tx.Now();
  if (!now.ok()) return now.status();
  auto terms = tx.ReadShowtime(showtime_id, RowLock::kUpdate);
  if (!terms.ok()) return terms.status();
  if (!terms.value()) return ShowtimeNotFound(showtime_id);
  return std::pair<Instant, ShowtimeTerms>(now.value(), *terms.value());
}

}  // namespace

Result<Showtime> EditShowtimeIn(MoneyTx& tx, int64_t showtime_id, const ShowtimeEdit& edit,
                                int64_t actor) {
  // Lock order: the showtime first, for update; then (for prices) its seats.
  auto locked = LockForChange(tx, showtime_id);
  if (!locked.ok()) return locked.status();
  const auto [now, terms] = locked.value();
  if (terms.cancelled) return ShowtimeCancelled(showtime_id);
  auto loaded = tx.LoadShowtime(showtime_id);
  if (!loaded.ok()) return loaded.status();
  if (!loaded.value()) return ShowtimeNotFound(showtime_id);
  const Showtime before = std::move(*loaded.value());
  Showtime after = before;
  if (edit.title) after.title = *edit.title;
  if (edit.starts_at) after.starts_at = *edit.starts_at;
  if (edit.refund_until_minutes) after.refund_until_minutes = *edit.refund_until_minutes;
  if (edit.prices && *edit.prices != before.prices) {
    // The layout never changes, so neither do its categories.
    for (const auto& [category, price] : *edit.prices) {
      if (!before.prices.contains(category)) {
        return Status(Code::kInvalid,
                      "showtime " + std::to_string(showtime_id) + " has no category " + category);
      }
    }
    if (edit.prices->size() != before.prices.size()) {
      return Status(Code::kInvalid, "prices must name every category of the showtime");
    }
    auto started = tx.SalesStarted(showtime_id, now);
    if (!started.ok()) return started.status();
    if (started.value()) {
      return Status(Code::kSalesStarted, "showtime " + std::to_string(showtime_id) +
                                             " has seats held, in checkout or sold: its prices"
                                             " are fixed");
    }
    after.prices = *edit.prices;
  }
  const nlohmann::json old_fields = EditableJson(before), new_fields = EditableJson(after);
  if (old_fields == new_fields) return after;  // nothing changes: nothing to record
  if (Status s = tx.UpdateShowtime(after); !s.ok()) return s;
  nlohmann::json was = nlohmann::json::object(), is = nlohmann::json::object();
  for (const auto& [key, value] : new_fields.items()) {
    if (old_fields[key] != value) {
      was[key] = old_fields[key];
      is[key] = value;
    }
  }
  AdminChange change{0, showtime_id, actor, "EDIT", Compact(was), Compact(is), now};
  if (Status s = tx.InsertAdminChange(change, now); !s.ok()) return s;
  return after;
}

Result<ShowtimeCancel> CancelShowtimeIn(MoneyTx& tx, int64_t showtime_id, const std::string& reason,
                                        int64_t actor) {
  // The handler's bound, as the column's CHECK has it.
  BOX_ASSERT(reason.size() <= kMaxCancelReason);
  // Lock order: the showtime first, for update; then its bookings, holds and seats.
  auto locked = LockForChange(tx, showtime_id);
  if (!locked.ok()) return locked.status();
  const auto [now, terms] = locked.value();
  ShowtimeCancel out;
  if (terms.cancelled) {
    out.already = true;
    return out;
  }
  if (Status s = tx.MarkShowtimeCancelled(showtime_id, reason, now); !s.ok()) return s;
  auto bookings = tx.LockLiveBookings(showtime_id);
  if (!bookings.ok()) return bookings.status();
  std::vector<MoneyTx::RefundWrite> refunds;
  for (Booking& b : bookings.value()) {
    BOX_ASSERT(b.showtime_id == showtime_id);  // LockLiveBookings's rows
    if (b.status == BookingStatus::kConfirmed) {
      // Confirmed, then refunded by the cancel: its refund intent and event in this
      // transaction, the money through the refund worker.
      if (b.payment_id.empty()) {
        return Status(Code::kInternal,
                      "confirmed booking " + std::to_string(b.id) + " has no payment");
      }
      refunds.push_back(RefundOf(b, now, kShowtimeCancelledReason));
      ++out.bookings_refunded;
    } else {
      BOX_ASSERT(b.status == BookingStatus::kPending);  // LockLiveBookings's rows
      // Left PENDING: its payment, if it comes (by callback, or the reconciler's question
      // to the gateway, which asks only about PENDING bookings), is refused and refunded
      // (SettlePaymentIn reads the showtime CANCELLED); an expired session fails it.
      ++out.bookings_pending;
    }
  }
  if (Status s = tx.RefundBookings(refunds, now); !s.ok()) return s;
  auto freed = tx.FreeSeats(showtime_id);
  if (!freed.ok()) return freed.status();
  out.seats_freed = std::move(freed.value());
  nlohmann::json after{{"status", "CANCELLED"},
                       {"reason", reason},
                       {"bookingsRefunded", out.bookings_refunded},
                       {"bookingsPending", out.bookings_pending}};
  AdminChange change{0,  showtime_id, actor, "CANCEL", R"({"status":"SCHEDULED"})", Compact(after),
                     now};
  if (Status s = tx.InsertAdminChange(change, now); !s.ok()) return s;
  return out;
}

Result<BookingCancel> CancelBookingIn(MoneyTx& tx, int64_t booking_id, int64_t customer_id) {
  auto now_r = tx.Now();
  if (!now_r.ok()) return now_r.status();
  const Instant now = now_r.value();
  // Lock order: the showtime (FOR SHARE: a showtime's cancel waits, or went first) before
  // the booking.
  auto showtime = tx.BookingShowtime(booking_id);
  if (!showtime.ok()) return showtime.status();
  if (showtime.value() == 0) return BookingNotFound(booking_id);
  auto terms = tx.ReadShowtime(showtime.value(), RowLock::kShare);
  if (!terms.ok()) return terms.status();
  auto found = tx.LockBooking(booking_id);
  if (!found.ok()) return found.status();
  if (!found.value() || found.value()->customer_id != customer_id || !terms.value()) {
    return BookingNotFound(booking_id);
  }
  Booking b = std::move(*found.value());
  // Refunded already (a second click, or the showtime's cancel): the answer again.
  if (b.status == BookingStatus::kRefunded) return BookingCancel{std::move(b), false};
  if (b.status != BookingStatus::kConfirmed) {
    return Status(Code::kNotRefundable, "only a confirmed booking can be cancelled");
  }
  // A showtime's cancel refunds every confirmed booking in its own transaction (a confirmed
  // booking of a cancelled showtime is a broken invariant: `boxoffice audit` counts it).
  if (terms.value()->cancelled) {
    return Status(Code::kInternal,
                  "confirmed booking " + std::to_string(b.id) + " of a cancelled showtime");
  }
  const std::optional<int>& minutes = terms.value()->refund_until_minutes;
  if (!minutes) return Status(Code::kNotRefundable, "this showtime allows no cancelling");
  if (now >= terms.value()->starts_at - Millis(int64_t{*minutes} * 60'000)) {
    return Status(Code::kNotRefundable,
                  "cancelling closed " + std::to_string(*minutes) + " minutes before the start");
  }
  auto admitted = tx.CountCheckIns(b.id);
  if (!admitted.ok()) return admitted.status();
  if (admitted.value() > 0) {
    return Status(Code::kNotRefundable, "a ticket of this booking was admitted at the door");
  }
  if (b.payment_id.empty()) {
    return Status(Code::kInternal, "confirmed booking " + std::to_string(b.id) + " has no payment");
  }
  auto freed = tx.FreeBookedSeats(b);
  if (!freed.ok()) return freed.status();
  if (static_cast<size_t>(freed.value()) != b.seats.size()) {
    return Status(Code::kInternal, "booking " + std::to_string(b.id) + " owned " +
                                       std::to_string(freed.value()) + " of its " +
                                       std::to_string(b.seats.size()) + " seats");
  }
  if (Status s = tx.RefundBookings({RefundOf(b, now, kCustomerCancelledReason)}, now); !s.ok())
    return s;
  return BookingCancel{std::move(b), true};
}

Status MoneyTx::RefundBookings(const std::vector<RefundWrite>& writes, Instant now) {
  for (const RefundWrite& w : writes) {
    BOX_ASSERT(w.refund.booking_id == w.booking_id);  // RefundOf's
    if (Status s = UpdateBooking(w.booking_id, BookingStatus::kRefunded, w.refund.payment_id, now);
        !s.ok())
      return s;
    if (Status s = InsertRefund(w.refund, now); !s.ok()) return s;
    if (Status s =
            InsertEvent(w.event_id, "BookingRefunded", std::to_string(w.booking_id), w.event, now);
        !s.ok())
      return s;
  }
  return Status::Ok();
}

}  // namespace boxoffice
