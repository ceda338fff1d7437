// A purchase's value types: bookings, what the gateway reports, settlements, refunds, the
// outbox's events, checkout's idempotency keys and the audit's counts.
#pragma once

#include <map>
#include <optional>

#include "domain/showtime.h"

namespace boxoffice {

enum class BookingStatus { kPending, kConfirmed, kFailed, kRefunded };
const char* BookingStatusName(BookingStatus s);
std::optional<BookingStatus> ParseBookingStatus(std::string_view text);

// A booking's order reference, as customers read it on the page and in the e-mail and say
// it on the phone: the id in Crockford's base 32 (digits and letters without I, L, O and U),
// at least six characters, in groups of three from the right: booking 15 is "000-00F",
// booking 123456789 is "3NQ-K8N". ParseOrderReference reads one back, forgiving case, the
// dashes and spaces, and the letters people confuse with digits (O for 0, I and L for 1).
std::string OrderReference(int64_t booking_id);
std::optional<int64_t> ParseOrderReference(std::string_view text);

struct Booking {
  int64_t id = 0;
  std::string hold_id;
  int64_t showtime_id = 0;
  int64_t customer_id = 0;
  std::vector<std::string> seats;
  BookingStatus status = BookingStatus::kPending;
  Price amount;
  std::string session_id;  // empty until the gateway session is attached
  std::string payment_url;
  std::optional<Instant> payment_expires_at;
  std::string payment_id;  // the payment that confirmed it, if any
  Instant created_at;
  std::optional<Instant> hold_expires_at;  // StartCheckout only: the hold's re-armed expiry
};

// What the gateway says about a payment (callback or status query).
struct PaymentReport {
  std::string payment_id;
  std::string session_id;
  std::string reference;  // our booking id, as the checkout gave it to the gateway
  bool succeeded = false;
  int64_t amount = 0;
  std::string currency;
};

// What SettlePayment did. Every outcome that kept money without a seat wrote a refund.
enum class Settlement {
  kDuplicate,           // this payment id was settled before: nothing changed
  kConfirmed,           // seats BOOKED, booking CONFIRMED, BookingConfirmed in the outbox
  kLateRefunded,        // paid, but the hold had expired or lost its seats: FAILED + refund
  kMismatchRefunded,    // reported for another amount or currency than the booking's:
                        // recorded, refunded if it succeeded; the booking is left as it was
  kPaymentFailed,       // the payment failed: booking FAILED, the hold is kept
  kNotPendingRefunded,  // paid for a booking no longer pending: refund
  kUnknownRecorded,     // reference matches no booking: recorded, refunded if it succeeded
  kOtherSession,        // reported for another session than the booking's: recorded, refunded
                        // if it succeeded; the booking is left as it was (the last value:
                        // tables are sized by it)
};
const char* SettlementName(Settlement s);

// A row of the outbox: an event to deliver at least once, in id order.
struct OutboxEvent {
  int64_t id = 0;
  std::string event_id;
  std::string type;     // BookingConfirmed, BookingFailed, BookingRefunded
  std::string key;      // the booking id: the Kafka message key
  std::string payload;  // the event JSON of API.md
  Instant created_at;
};

struct Refund {
  std::string refund_id;  // also the gateway idempotency key
  std::string payment_id;
  int64_t booking_id = 0;  // 0: the payment matched no booking
  Price amount;
  bool issued = false;
  int attempts = 0;  // attempts the gateway did not accept so far
  // Why the money goes back, when a seat was sold: kShowtimeCancelledReason or
  // kCustomerCancelledReason; empty for money without a seat.
  std::string reason;
};
inline constexpr const char* kShowtimeCancelledReason = "SHOWTIME_CANCELLED";
inline constexpr const char* kCustomerCancelledReason = "CUSTOMER_CANCELLED";

// The refunds of one showtime's bookings: accepted by the gateway, still to go (retried
// with backoff), and refused by it (kept aside for an operator, still retried).
struct RefundProgress {
  int64_t issued = 0;
  int64_t pending = 0;
  int64_t refused = 0;
};

// A showtime cancelled lately and how far the refunds of its bookings have got.
struct CancelledShowtimeRefunds {
  int64_t showtime_id = 0;
  RefundProgress refunds;
};

// The showtimes cancelled in the last kCancelledRefundsWindow that /metrics follows, the
// latest cancelled first, per database (each shard's own): bounded, so /metrics is.
inline constexpr int kMaxCancelledShowtimesFollowed = 50;
inline constexpr Millis kCancelledRefundsWindow{24 * 3600 * 1000};

// Refunds the gateway has yet to accept (for /metrics): retrying after a transport error
// or 5xx, and refused (a 4xx answer: kept aside, still retried at the longest backoff).
struct RefundBacklog {
  int64_t retrying = 0;
  int64_t refused = 0;
  // The showtimes cancelled in the window, in showtime order (at most
  // kMaxCancelledShowtimesFollowed per database).
  std::vector<CancelledShowtimeRefunds> cancelled;
};

// An Idempotency-Key as a customer sent it, and what the request was about (for checkout:
// the hold id). Keys are scoped per customer.
struct IdempotencyKey {
  int64_t customer_id = 0;
  std::string key;
  std::string fingerprint;
  // The token a claim of this key takes: chosen by the caller, so that a claim whose answer
  // was lost can still have its lease ended (EndCheckoutLease); empty: the store chooses.
  // It must say the fingerprint's shard (shards.h, NewUuidOnShard).
  std::string token = {};
};

// How far the request first sent with a key has come: its recovery point.
enum class KeyPhase {
  kStarted,         // claimed; nothing else done yet
  kBookingCreated,  // the PENDING booking exists and the hold is re-armed
  kFinished,        // the response is stored; it is replayed from now on
};
const char* KeyPhaseName(KeyPhase phase);
std::optional<KeyPhase> ParseKeyPhase(std::string_view text);

// A claim on a key: whoever holds the token may move the request to its next phase.
struct KeyLock {
  int64_t customer_id = 0;
  std::string key;
  std::string token;
};

struct IdempotencyRecord {
  IdempotencyKey key;
  KeyPhase phase = KeyPhase::kStarted;
  std::string token;                    // the current claim's token; empty once finished
  std::optional<Instant> locked_until;  // the current claim's lease
  int64_t booking_id = 0;
  std::optional<Instant> hold_expiry_before;  // the hold's expiry before checkout re-armed it
  std::optional<Instant> hold_expiry_after;   // and after
  int response_status = 0;                    // kFinished: the stored response
  std::string response_body;
  KeyLock lock() const { return KeyLock{key.customer_id, key.key, token}; }
};

// What `boxoffice audit` finds straight in the database after a run: the invariants of
// DESIGN.md as counts. The first three must be 0; together they mean no seat is sold twice
// (a seat row carries one booking, and every confirmed booking must own all its seats) and
// no money is kept without a seat.
struct AuditReport {
  int64_t booked_seats_without_confirmed_booking = 0;  // BOOKED rows not owned by one
  int64_t confirmed_bookings_missing_seats = 0;  // a confirmed booking not owning all its seats
  int64_t payments_unaccounted = 0;  // succeeded, yet not exactly one of: confirmed / refunded
  int64_t refunds_pending = 0;       // refunds the worker has yet to get accepted
  int64_t seats_booked = 0;
  int64_t bookings_confirmed = 0;
  int64_t payments_succeeded = 0;
  int64_t confirmed_on_cancelled = 0;  // CONFIRMED bookings of a CANCELLED showtime: must be 0
  int64_t violations() const {
    return booked_seats_without_confirmed_booking + confirmed_bookings_missing_seats +
           payments_unaccounted + confirmed_on_cancelled;
  }
};
Status BookingNotFound(int64_t booking_id);

// The event JSON of API.md "Events" for a booking.
// `reason` (BookingRefunded: why, e.g. kShowtimeCancelledReason) is written when not empty.
std::string BookingEventJson(const std::string& event_id, const std::string& type,
                             const Booking& booking, Instant occurred_at,
                             const std::string& reason = "");

// One entry of a showtime's admin trail (API.md "Running a cinema"): who (the admin's
// customer id), what, and the showtime's fields before and after, as JSON objects.
struct AdminChange {
  int64_t id = 0;
  int64_t showtime_id = 0;
  int64_t actor = 0;
  std::string action;  // "CANCEL", "EDIT"
  std::string before;  // JSON object
  std::string after;   // JSON object
  Instant at;
};

// A showtime's sales as its admin page shows them (API.md "GET /admin/showtimes/{id}/sales").
struct ShowtimeSales {
  bool cancelled = false;
  int64_t seats_available = 0;  // an expired hold's seats count as available
  int64_t seats_held = 0;
  int64_t seats_booked = 0;
  std::map<BookingStatus, int64_t> bookings;  // every status present, 0 when none
  // The money kept: the CONFIRMED bookings' amounts (every other payment is refunded, so
  // this is confirmed minus refunded money), exact, in the showtime's currency.
  Price revenue;
  int64_t checked_in = 0;  // seats admitted at the door
  RefundProgress refunds;  // of its bookings (a cancel's, a customer's, a late payment's)
};

// GET /admin/showtimes/{id}/bookings: the showtime's bookings in id order after `after_id`,
// of one status if given.
struct ShowtimeBookingsQuery {
  int64_t showtime_id = 0;
  std::optional<BookingStatus> status;
  int64_t after_id = 0;
  int limit = 100;
};

// PATCH /admin/showtimes/{id}: the fields to change (each absent one is left as it is).
// Prices change only before sales start; the layout never.
struct ShowtimeEdit {
  std::optional<std::string> title;
  std::optional<Instant> starts_at;
  std::optional<std::map<std::string, Price>> prices;      // every category of the showtime
  std::optional<std::optional<int>> refund_until_minutes;  // a value, or null: no cancelling
  bool empty() const { return !title && !starts_at && !prices && !refund_until_minutes; }
};

// What a customer's cancel did (PaymentStore::CancelBooking): the booking as it now is, and
// whether this call refunded it (false: it was refunded before, by a first click or by the
// showtime's cancel).
struct BookingCancel {
  Booking booking;
  bool refunded_now = false;
};

// What a showtime's cancel did (AdminStore::CancelShowtime).
struct ShowtimeCancel {
  bool already = false;                  // it was cancelled before: nothing changed
  int64_t bookings_refunded = 0;         // CONFIRMED → REFUNDED, each with its refund intent
  int64_t bookings_pending = 0;          // left PENDING: their payments, if they come, are refunded
  std::vector<std::string> seats_freed;  // held or booked before
};

}  // namespace boxoffice
