// PaymentStore: what the gateway reported, settled exactly once per payment id, and the
// refunds owed whenever money would otherwise be kept without a seat. A role of Store.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "domain/booking.h"
#include "io/loop.h"

namespace boxoffice {

class PaymentStore {
 public:
  virtual ~PaymentStore() = default;

  // Applies what the gateway reported, all in one transaction, exactly once per payment id
  // (kInvalid for a report without one):
  // the seeds' confirm statement (HELD → BOOKED only where hold_id matches and the hold has
  // not expired), the booking's new status, its outbox event, and a refund intent whenever
  // money would otherwise be kept without a seat.
  // *confirmed (when given) receives the booking a kConfirmed report confirmed, as it now
  // is, so the caller need not read it again.
  virtual Result<Settlement> SettlePayment(const PaymentReport& report, Booking* confirmed) = 0;
  Result<Settlement> SettlePayment(const PaymentReport& report) {
    return SettlePayment(report, nullptr);
  }
  // SettlePayment for a successful payment of the right amount and session for a PENDING
  // booking whose seats are all still its hold's: kConfirmed (with *confirmed), or
  // kDuplicate for a payment id settled before.
  virtual io::asio::awaitable<Result<std::optional<Settlement>>> TryConfirmPaymentAsync(
      PaymentReport report, Booking* confirmed);

  // The customer cancels their CONFIRMED booking (API.md "Customers cancel"), while
  // now < startsAt − refundUntilMinutesBefore and no ticket of it was admitted: in one
  // transaction its seats AVAILABLE again, the booking REFUNDED with its refund intent
  // (reason CUSTOMER_CANCELLED) and BookingRefunded event. A booking REFUNDED already is
  // answered as it is (two clicks refund once). kNotFound for another customer's booking,
  // kNotRefundable when the terms or its state do not allow it.
  virtual Result<BookingCancel> CancelBooking(int64_t booking_id, int64_t customer_id) = 0;
  virtual io::asio::awaitable<Result<BookingCancel>> CancelBookingAsync(int64_t booking_id,
                                                                        int64_t customer_id);

  // How many bookings made in the last `window` are in each status (for /metrics; the
  // window bounds the cost of counting, by an index on created_at).
  virtual Result<std::map<BookingStatus, int64_t>> CountRecentBookings(Millis window) = 0;

  // Refunds not yet accepted by the gateway whose next attempt is due, the longest due
  // first (a refund just written is due at once).
  virtual Result<std::vector<Refund>> PendingRefunds(int limit) = 0;
  // The gateway did not accept refund_id: its next attempt is retry_after from now (the
  // store's clock); refused marks a 4xx answer (kept aside in RefundBacklog).
  virtual Status RefundAttemptFailed(const std::string& refund_id, bool refused,
                                     const std::string& error, Millis retry_after) = 0;
  virtual Result<RefundBacklog> CountRefundBacklog() = 0;
  // The gateway accepted refund_id: it becomes ISSUED and its booking (if any) REFUNDED,
  // with a BookingRefunded event, in one transaction. Repeating it changes nothing.
  virtual Status CompleteRefund(const std::string& refund_id,
                                const std::string& gateway_refund_id) = 0;
};

}  // namespace boxoffice
