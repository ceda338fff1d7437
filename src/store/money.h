// The rules of checkout and payment settlement, written once for both stores.
//
// Each store runs them inside one of its own transactions through MoneyTx, a handful of
// primitive statements over that transaction. The rules live here so SQLite and
// PostgreSQL cannot drift apart; the statements live in each store. Lock order, which
// every primitive sequence below keeps (docs/payments.md): showtime → booking → seat_hold
// → show_seat (in seat order). Only a settlement (FOR SHARE), a customer's cancel (FOR
// SHARE) and a showtime's cancel (FOR NO KEY UPDATE) take the showtime's row, and always
// first.
#pragma once

#include <optional>
#include <string>

#include "store/store.h"

namespace boxoffice {

// What the money rules read of a showtime (MoneyTx::ReadShowtime).
struct ShowtimeTerms {
  Instant starts_at;
  Instant sales_close_at;
  bool cancelled = false;
  std::optional<int> refund_until_minutes;
};

// How MoneyTx::ReadShowtime takes the showtime's row (PostgreSQL; SQLite has one writer).
enum class RowLock { kNone, kShare, kUpdate };

class MoneyTx {
 public:
  virtual ~MoneyTx() = default;
  // The store's clock, read once per transaction.
  virtual Result<Instant> Now() = 0;

  // The hold, locked for this transaction, if customer_id owns it (kNotFound otherwise).
  virtual Result<Hold> LockHold(const std::string& hold_id, int64_t customer_id, Instant now) = 0;
  // The PENDING booking of a hold, or 0.
  virtual Result<int64_t> PendingBookingOf(const std::string& hold_id) = 0;
  // The showtime's terms, its row taken as `lock` says; nullopt for an unknown showtime.
  virtual Result<std::optional<ShowtimeTerms>> ReadShowtime(int64_t showtime_id, RowLock lock) = 0;
  // The showtime a booking belongs to (never changes, so read without a lock), or 0.
  virtual Result<int64_t> BookingShowtime(int64_t booking_id) = 0;
  // SCHEDULED → CANCELLED with the reason; the caller holds the row (RowLock::kUpdate).
  virtual Status MarkShowtimeCancelled(int64_t showtime_id, const std::string& reason,
                                       Instant now) = 0;
  // The showtime's PENDING and CONFIRMED bookings, locked in booking-id order.
  virtual Result<std::vector<Booking>> LockLiveBookings(int64_t showtime_id) = 0;
  // A cancelled showtime's seats: every hold still HELD is RELEASED (locked in id order),
  // then every seat HELD or BOOKED is AVAILABLE again (in seat order), so no seat row
  // names a booking the cancel refunded. Returns the seats freed.
  virtual Result<std::vector<std::string>> FreeSeats(int64_t showtime_id) = 0;
  // Seats of the booking admitted at the door so far.
  virtual Result<int64_t> CountCheckIns(int64_t booking_id) = 0;
  // A booking its customer cancelled: its BOOKED seats AVAILABLE again (in seat order).
  // Returns how many.
  virtual Result<int> FreeBookedSeats(const Booking& booking) = 0;
  // The showtime with its prices, or nullopt for an unknown one (the caller holds its row).
  virtual Result<std::optional<Showtime>> LoadShowtime(int64_t showtime_id) = 0;
  // Whether the showtime's sales have started (API.md: a seat held, in checkout or sold): a
  // booking of it is PENDING or CONFIRMED, or a seat is BOOKED or held unexpired. Its seats are
  // taken FOR SHARE in seat order, so a hold deciding now commits before this reads them or waits
  // until this transaction ends.
  virtual Result<bool> SalesStarted(int64_t showtime_id, Instant now) = 0;
  // Writes title, start, refund terms and prices as `after` has them.
  virtual Status UpdateShowtime(const Showtime& after) = 0;
  // Appends to the showtime's admin trail.
  virtual Status InsertAdminChange(const AdminChange& change, Instant now) = 0;
  // Sets the expiry of every seat this hold still owns unexpired; returns how many.
  virtual Result<int> RearmSeats(const Hold& hold, Instant expires_at, Instant now) = 0;
  virtual Status SetHoldExpiry(const std::string& hold_id, Instant expires_at) = 0;
  // The category price of each of the seats (one entry per seat found).
  virtual Result<std::vector<Price>> SeatPrices(int64_t showtime_id,
                                                const std::vector<std::string>& seats) = 0;
  virtual Result<int64_t> InsertBooking(const Booking& booking, Instant now) = 0;

  // The booking, locked for this transaction, or nullopt.
  virtual Result<std::optional<Booking>> LockBooking(int64_t booking_id) = 0;
  // Records the payment; false if its id was recorded before.
  virtual Result<bool> InsertPayment(const PaymentReport& report, int64_t booking_id,
                                     Instant now) = 0;
  // The seeds' confirm: HELD → BOOKED where hold_id matches and the hold has not expired.
  // Changes all of the booking's seats or none; returns whether it changed them.
  virtual Result<bool> ConfirmSeats(const Booking& booking, Instant now) = 0;
  virtual Status MarkHoldBooked(const std::string& hold_id) = 0;
  virtual Status UpdateBooking(int64_t booking_id, BookingStatus status,
                               const std::string& payment_id, Instant now) = 0;
  virtual Status InsertRefund(const Refund& refund, Instant now) = 0;
  // PENDING → ISSUED; false if it was not pending (already issued, or unknown).
  virtual Result<bool> MarkRefundIssued(const std::string& refund_id,
                                        const std::string& gateway_refund_id, Instant now) = 0;
  // The booking a refund belongs to (booking_id 0 for none) and its reason, or nullopt for
  // an unknown refund.
  virtual Result<std::optional<Refund>> RefundBooking(const std::string& refund_id) = 0;
  // The key's record, locked for this transaction, or nullopt.
  virtual Result<std::optional<IdempotencyRecord>> LockKey(int64_t customer_id,
                                                           const std::string& key) = 0;
  // Records a new key; false if a concurrent request recorded it first.
  virtual Result<bool> InsertKey(const IdempotencyRecord& record, Instant now) = 0;
  // Writes the record's phase, claim, booking, hold expiries and response.
  virtual Status UpdateKey(const IdempotencyRecord& record, Instant now) = 0;
  virtual Status DeleteKey(int64_t customer_id, const std::string& key) = 0;
  // Sets the hold's seats that still end at `from` to end at `to`.
  virtual Status ResetSeatsExpiry(const Hold& hold, Instant from, Instant to) = 0;
  // Store::AttachPaymentSession's statement; false if the booking is not PENDING or has
  // another session. A non-empty email is stored as where the tickets go.
  virtual Result<bool> AttachSession(int64_t booking_id, const std::string& session_id,
                                     const std::string& url, Instant expires_at, Instant now,
                                     const std::string& email) = 0;
  virtual Status InsertEvent(const std::string& event_id, const std::string& type,
                             const std::string& key, const std::string& payload, Instant now) = 0;

  // Bookings refunded by a cancel (a showtime's, or a customer's), each already locked by
  // this transaction and CONFIRMED: each booking REFUNDED, its refund intent, its
  // BookingRefunded event. Row by row here (SQLite writes in process); PostgreSQL overrides
  // it with three statements for the lot, however many bookings a hall holds.
  struct RefundWrite {
    int64_t booking_id = 0;
    Refund refund;         // PENDING, of the booking's payment
    std::string event_id;  // the BookingRefunded event
    std::string event;     // its payload
  };
  virtual Status RefundBookings(const std::vector<RefundWrite>& writes, Instant now);
};

// Store::StartCheckout's rules, keyed when lock is not null. An error status means the
// caller rolls back.
Result<Booking> StartCheckoutIn(MoneyTx& tx, const KeyLock* lock, const std::string& hold_id,
                                int64_t customer_id, Millis ttl, Millis max_lifetime);
// Store::ClaimCheckoutKey's rules.
Result<IdempotencyRecord> ClaimCheckoutKeyIn(MoneyTx& tx, const IdempotencyKey& key, Millis lease);
// Store::FinishCheckout's rules.
Result<bool> FinishCheckoutIn(MoneyTx& tx, const KeyLock& lock, const std::string& session_id,
                              const std::string& url, Instant expires_at, int response_status,
                              const std::string& response_body, const std::string& email);
// Store::AbortCheckout's rules.
Status AbortCheckoutIn(MoneyTx& tx, const KeyLock& lock);
// The token a claim of key takes: the caller's, or a new one on the fingerprint's shard.
std::string ClaimToken(const IdempotencyKey& key);
// Store::EndCheckoutLease's rules.
Status EndCheckoutLeaseIn(MoneyTx& tx, const KeyLock& lock);
// Store::ExtendHold's rules.
Result<Hold> ExtendHoldIn(MoneyTx& tx, const std::string& hold_id, int64_t customer_id, Millis ttl,
                          Millis max_lifetime);
// Store::SettlePayment's rules; *confirmed (if given) gets the booking a confirmation made.
// The booking id a payment report's reference names, if it is one (a positive decimal).
std::optional<int64_t> ParseReference(const std::string& text);
Result<Settlement> SettlePaymentIn(MoneyTx& tx, const PaymentReport& report,
                                   Booking* confirmed = nullptr);
// Store::AbandonCheckout's rules.
Result<bool> AbandonCheckoutIn(MoneyTx& tx, int64_t booking_id);
// AdminStore::EditShowtime's rules.
Result<Showtime> EditShowtimeIn(MoneyTx& tx, int64_t showtime_id, const ShowtimeEdit& edit,
                                int64_t actor);
// AdminStore::CancelShowtime's rules.
Result<ShowtimeCancel> CancelShowtimeIn(MoneyTx& tx, int64_t showtime_id, const std::string& reason,
                                        int64_t actor);
// PaymentStore::CancelBooking's rules.
Result<BookingCancel> CancelBookingIn(MoneyTx& tx, int64_t booking_id, int64_t customer_id);
// Store::CompleteRefund's rules.
Status CompleteRefundIn(MoneyTx& tx, const std::string& refund_id,
                        const std::string& gateway_refund_id);

}  // namespace boxoffice
