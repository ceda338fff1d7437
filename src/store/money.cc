#include "store/money.h"

#include <charconv>

#include "core/crypto.h"

namespace boxoffice {
namespace {

// Re-arms an active hold's seats to now + ttl, never past its lifetime cap and never
// earlier than it already ends. kNotActive when the hold lost any seat.
Result<Hold> Rearm(MoneyTx& tx, Hold hold, Millis ttl, Millis max_lifetime, Instant now) {
  if (hold.state != HoldState::kHeld) return Status(Code::kNotActive, "hold is not active");
  const Instant target =
      std::max(hold.expires_at, std::min(now + ttl, hold.created_at + max_lifetime));
  auto changed = tx.RearmSeats(hold, target, now);
  if (!changed.ok()) return changed.status();
  if (static_cast<size_t>(changed.value()) != hold.seats.size()) {
    return Status(Code::kNotActive, "hold lost its seats");
  }
  if (Status s = tx.SetHoldExpiry(hold.hold_id, target); !s.ok()) return s;
  hold.expires_at = target;
  return hold;
}

std::optional<int64_t> ParseReference(const std::string& text) {
  int64_t id = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || end != text.data() + text.size() || id <= 0) return std::nullopt;
  return id;
}

Status WriteEvent(MoneyTx& tx, const char* type, const Booking& booking, Instant now) {
  const std::string event_id = NewUuid();
  return tx.InsertEvent(event_id, type, std::to_string(booking.id),
                        BookingEventJson(event_id, type, booking, now), now);
}

Status WriteRefund(MoneyTx& tx, const PaymentReport& report, int64_t booking_id, Instant now) {
  return tx.InsertRefund(Refund{NewUuid(), report.payment_id, booking_id,
                                Price{report.amount, report.currency}, false},
                         now);
}

}  // namespace

Result<Hold> ExtendHoldIn(MoneyTx& tx, const std::string& hold_id, int64_t customer_id, Millis ttl,
                          Millis max_lifetime) {
  auto now = tx.Now();
  if (!now.ok()) return now.status();
  auto hold = tx.LockHold(hold_id, customer_id, now.value());
  if (!hold.ok()) return hold.status();
  return Rearm(tx, hold.value(), ttl, max_lifetime, now.value());
}

Result<Booking> StartCheckoutIn(MoneyTx& tx, const std::string& hold_id, int64_t customer_id,
                                Millis ttl, Millis max_lifetime) {
  auto now = tx.Now();
  if (!now.ok()) return now.status();
  auto hold = tx.LockHold(hold_id, customer_id, now.value());
  if (!hold.ok()) return hold.status();
  if (hold->state != HoldState::kHeld) return Status(Code::kNotActive, "hold is not active");
  auto pending = tx.PendingBookingOf(hold_id);
  if (!pending.ok()) return pending.status();
  if (pending.value() != 0) {
    return Status(Code::kCheckoutExists, "a checkout of this hold is pending")
        .WithId(pending.value());
  }
  auto rearmed = Rearm(tx, hold.value(), ttl, max_lifetime, now.value());
  if (!rearmed.ok()) return rearmed.status();
  auto price = tx.SeatsPrice(hold->showtime_id, hold->seats);
  if (!price.ok()) return price.status();
  Booking b;
  b.hold_id = hold_id;
  b.showtime_id = hold->showtime_id;
  b.customer_id = customer_id;
  b.seats = hold->seats;
  b.status = BookingStatus::kPending;
  b.amount = price.value();
  b.created_at = now.value();
  auto id = tx.InsertBooking(b, now.value());
  if (!id.ok()) return id.status();
  b.id = id.value();
  return b;
}

Result<Settlement> SettlePaymentIn(MoneyTx& tx, const PaymentReport& report) {
  auto now_r = tx.Now();
  if (!now_r.ok()) return now_r.status();
  const Instant now = now_r.value();
  std::optional<Booking> booking;
  if (auto id = ParseReference(report.reference)) {
    auto found = tx.LockBooking(*id);
    if (!found.ok()) return found.status();
    booking = std::move(found.value());
  }
  auto inserted = tx.InsertPayment(report, booking ? booking->id : 0, now);
  if (!inserted.ok()) return inserted.status();
  if (!inserted.value()) return Settlement::kDuplicate;

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
    if (Status s = WriteRefund(tx, report, b.id, now); !s.ok()) return s;
    return Settlement::kNotPendingRefunded;
  }
  if (!report.succeeded) {
    // The hold stays as it is: the customer may check out again while it lasts.
    b.status = BookingStatus::kFailed;
    if (Status s = tx.UpdateBooking(b.id, b.status, "", now); !s.ok()) return s;
    if (Status s = WriteEvent(tx, "BookingFailed", b, now); !s.ok()) return s;
    return Settlement::kPaymentFailed;
  }
  const bool amount_matches =
      report.amount == b.amount.amount && report.currency == b.amount.currency;
  bool confirmed = false;
  if (amount_matches) {
    // Lock order: the hold row before its seats, as release and extend take them.
    auto hold = tx.LockHold(b.hold_id, b.customer_id, now);
    if (!hold.ok()) return hold.status();
    auto seats = tx.ConfirmSeats(b, now);
    if (!seats.ok()) return seats.status();
    confirmed = seats.value();
  }
  if (confirmed) {
    if (Status s = tx.MarkHoldBooked(b.hold_id); !s.ok()) return s;
    b.status = BookingStatus::kConfirmed;
    if (Status s = tx.UpdateBooking(b.id, b.status, report.payment_id, now); !s.ok()) return s;
    if (Status s = WriteEvent(tx, "BookingConfirmed", b, now); !s.ok()) return s;
    return Settlement::kConfirmed;
  }
  // Paid, but the seats cannot be delivered (or not for that money): never take seats back
  // from a newer holder; fail the booking and refund in this same transaction.
  b.status = BookingStatus::kFailed;
  if (Status s = tx.UpdateBooking(b.id, b.status, report.payment_id, now); !s.ok()) return s;
  if (Status s = WriteRefund(tx, report, b.id, now); !s.ok()) return s;
  if (Status s = WriteEvent(tx, "BookingFailed", b, now); !s.ok()) return s;
  return amount_matches ? Settlement::kLateRefunded : Settlement::kMismatchRefunded;
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
  auto booking_id = tx.RefundBooking(refund_id);
  if (!booking_id.ok()) return booking_id.status();
  if (!booking_id.value()) return Status(Code::kNotFound, "refund " + refund_id + " not found");
  std::optional<Booking> booking;
  if (*booking_id.value() != 0) {
    auto found = tx.LockBooking(*booking_id.value());
    if (!found.ok()) return found.status();
    booking = std::move(found.value());
  }
  auto issued = tx.MarkRefundIssued(refund_id, gateway_refund_id, now.value());
  if (!issued.ok()) return issued.status();
  if (!issued.value() || !booking || booking->status != BookingStatus::kFailed) return Status::Ok();
  booking->status = BookingStatus::kRefunded;
  if (Status s = tx.UpdateBooking(booking->id, booking->status, "", now.value()); !s.ok()) return s;
  return WriteEvent(tx, "BookingRefunded", *booking, now.value());
}

}  // namespace boxoffice
