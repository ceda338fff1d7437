// PgMoneyTx: the money rules' primitives (store/money.h) over an open PostgreSQL
// transaction. `now` is read once from the database clock (or the test clock) and passed
// to every statement as $1 where it counts.
#pragma once

#include "store/money.h"
#include "store/pg_connection.h"

namespace boxoffice {

class PgMoneyTx final : public MoneyTx {
 public:
  PgMoneyTx(PgConnection& c, Param clock_override) : c_(c), clock_(std::move(clock_override)) {}

  Result<Instant> Now() override;
  Result<Hold> LockHold(const std::string& hold_id, int64_t customer_id, Instant now) override;
  Result<std::optional<ShowtimeTerms>> ReadShowtime(int64_t showtime_id, RowLock lock) override;
  Result<int64_t> BookingShowtime(int64_t booking_id) override;
  Status MarkShowtimeCancelled(int64_t showtime_id, const std::string& reason,
                               Instant now) override;
  Result<std::vector<Booking>> LockLiveBookings(int64_t showtime_id) override;
  Result<std::vector<std::string>> FreeSeats(int64_t showtime_id) override;
  Result<int64_t> CountCheckIns(int64_t booking_id) override;
  Result<int> FreeBookedSeats(const Booking& booking) override;
  Result<std::optional<Showtime>> LoadShowtime(int64_t showtime_id) override;
  Result<bool> SalesStarted(int64_t showtime_id, Instant now) override;
  Status UpdateShowtime(const Showtime& after) override;
  Status InsertAdminChange(const AdminChange& change, Instant now) override;
  Result<int64_t> PendingBookingOf(const std::string& hold_id) override;
  Result<int> RearmSeats(const Hold& hold, Instant expires_at, Instant now) override;
  Status SetHoldExpiry(const std::string& hold_id, Instant expires_at) override;
  Result<std::vector<Price>> SeatPrices(int64_t showtime_id,
                                        const std::vector<std::string>& seats) override;
  Result<int64_t> InsertBooking(const Booking& b, Instant now) override;
  Result<std::optional<Booking>> LockBooking(int64_t booking_id) override;
  Result<bool> InsertPayment(const PaymentReport& p, int64_t booking_id, Instant now) override;
  Result<bool> ConfirmSeats(const Booking& b, Instant now) override;
  Status MarkHoldBooked(const std::string& hold_id) override;
  Status UpdateBooking(int64_t booking_id, BookingStatus status, const std::string& payment_id,
                       Instant now) override;
  Status InsertRefund(const Refund& refund, Instant now) override;
  Result<bool> MarkRefundIssued(const std::string& refund_id, const std::string& gateway_refund_id,
                                Instant now) override;
  Result<std::optional<Refund>> RefundBooking(const std::string& refund_id) override;
  Result<std::optional<IdempotencyRecord>> LockKey(int64_t customer_id,
                                                   const std::string& key) override;
  Result<bool> InsertKey(const IdempotencyRecord& rec, Instant now) override;
  Status UpdateKey(const IdempotencyRecord& rec, Instant now) override;
  Status DeleteKey(int64_t customer_id, const std::string& key) override;
  Status ResetSeatsExpiry(const Hold& hold, Instant from, Instant to) override;
  Result<bool> AttachSession(int64_t booking_id, const std::string& session_id,
                             const std::string& url, Instant expires_at, Instant,
                             const std::string& email) override;
  Status RefundBookings(const std::vector<RefundWrite>& writes, Instant now) override;
  Status InsertEvent(const std::string& event_id, const std::string& type, const std::string& key,
                     const std::string& payload, Instant now) override;

 private:
  PgConnection& c_;
  Param clock_;
};

}  // namespace boxoffice
