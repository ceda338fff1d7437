// The source of truth: showtimes, seats and holds.
//
// Store is the one interface the services see; SqliteStore (embedded default) and
// PgStore (production) implement it and one contract test suite runs on both
// (tests/store/store_contract_test.cc). What every implementation guarantees:
//
//  * HoldSeats decides who gets a seat with one conditional UPDATE whose WHERE clause
//    holds the availability check, expired holds counting as free (lazy expiry). If fewer
//    rows change than seats were asked for, the transaction rolls back: all or nothing.
//    Seats are locked in seat-code order, so overlapping holds never deadlock.
//  * A hold is data (hold_expires_at), never an open transaction or a held lock.
//  * Release and extend act only while this hold id still owns the rows, and only for the
//    hold's customer: a stale hold id can never touch a newer hold.
//  * Reads apply lazy expiry too: an expired hold reads as AVAILABLE / EXPIRED.
//  * Time comes from one source per store (see each implementation's design note).
//
// Every method is thread-safe and bounded: it waits at most the configured pool and
// statement timeouts, then returns kUnavailable. Errors are the Codes of core/status.h.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "io/loop.h"

namespace boxoffice {

struct Price {
  int64_t amount = 0;  // minor units (cents)
  std::string currency;
};

struct RowLayout {
  std::string row;
  int seats = 0;
  std::string category;
  std::vector<int> aisles = {};      // an aisle after each of these seat numbers (1 … seats-1)
  std::vector<int> accessible = {};  // wheelchair places (1 … seats)
};

struct NewShowtime {
  std::string title;
  std::string cinema;
  std::string hall;
  Instant starts_at;
  std::vector<RowLayout> rows;
  std::map<std::string, Price> prices;   // by category
  bool forbid_single_seat_gaps = false;  // API.md "singleSeatGaps": "forbid"
  std::string time_zone = "UTC";         // API.md "timeZone": the cinema's IANA zone
  int sales_close_minutes = 0;           // API.md "salesCloseMinutesBefore"
};

// API.md: sales close at most a week before the start.
inline constexpr int kMaxSalesCloseMinutes = 7 * 24 * 60;

struct Showtime {
  int64_t id = 0;
  std::string title;
  std::string cinema;
  std::string hall;
  Instant starts_at;
  std::map<std::string, Price> prices;
  int seat_count = 0;
  bool forbid_single_seat_gaps = false;
  std::string time_zone = "UTC";
  int sales_close_minutes = 0;
  // When sales close: holds, checkouts and queue joins are refused from then on.
  Instant sales_close_at() const { return starts_at - Millis(int64_t{sales_close_minutes} * 60'000); }
};

// Showtimes with from <= starts_at < to, ordered by (starts_at, id), after the cursor.
struct ShowtimeQuery {
  std::optional<Instant> from;
  std::optional<Instant> to;
  std::optional<std::string> cinema;
  std::optional<std::pair<Instant, int64_t>> after;  // (starts_at, id) of the last row seen
  int limit = 100;
};

enum class SeatStatus { kAvailable, kHeld, kBooked };
const char* SeatStatusName(SeatStatus s);

struct SeatView {
  std::string code;
  std::string row;
  int number = 0;
  std::string category;
  SeatStatus status = SeatStatus::kAvailable;
  bool accessible = false;   // a wheelchair place
  bool aisle_after = false;  // an aisle follows this seat in its row
};

struct SeatMap {
  int64_t showtime_id = 0;
  Instant as_of;
  std::vector<SeatView> seats;  // in hall order: row, then number
};

// A seat of a showtime.
struct SeatRef {
  int64_t showtime_id = 0;
  std::string code;
};

// Who owns a seat right now, for operators and tests; never shown to customers.
struct SeatOwner {
  std::string code;
  SeatStatus status = SeatStatus::kAvailable;  // lazy expiry applied
  std::string hold_id;                         // empty when AVAILABLE
  int64_t customer_id = 0;
};

// The single-seat gap rule as a check on one neighbour of a pick (holds/seat_rules.h builds
// them from the hall's layout, which never changes): `seat`, not in the pick, must not be
// left alone. The pick would strand it when `seat` is free and `beyond` (the next seat
// outward in its row, before any aisle) is not, or when `beyond` is empty (an aisle or the
// row's end, or a seat of the pick itself). Every store, and the Redis gate, apply exactly
// this rule (CheckPick) on the seats' state inside the step that decides the hold.
struct SeatGuard {
  std::string seat;
  std::string beyond;
  bool operator==(const SeatGuard&) const = default;
};

// Seats to hold together (sorted, distinct) and the guards the hold must respect.
struct SeatPick {
  std::vector<std::string> seats;
  std::vector<SeatGuard> guards;
  bool operator==(const SeatPick&) const = default;
};

struct HoldRequest {
  std::string hold_id;  // a fresh UUID chosen by the caller
  int64_t showtime_id = 0;
  int64_t customer_id = 0;
  // Picked by hand: validated, sorted, distinct (core/seats.h). Empty for best available.
  std::vector<std::string> seats;
  Millis ttl{0};
  // Picked by hand on a showtime that forbids single-seat gaps: the neighbours `seats`
  // must not strand (kSingleSeatGap naming them otherwise).
  std::vector<SeatGuard> guards = {};
  // Best available: the blocks to try, best first, in the same decision; the first whose
  // seats are all free and whose guards hold is held (kConflict with no seats when none).
  // Shared: a layout's ranked blocks are worked out once (HallLayout::Best).
  std::shared_ptr<const std::vector<SeatPick>> best = nullptr;
  bool is_best() const { return seats.empty(); }
  const std::vector<SeatPick>& picks() const {
    static const std::vector<SeatPick> kNone;
    return best ? *best : kNone;
  }
};

// How a pick fares on the seats' state at the moment of the decision. `free` says whether
// a code is a seat of the showtime that nobody holds (an expired hold counting as free) or
// has booked. taken: the pick's seats that are not free; stranded: the guards' seats it
// would leave alone (only looked at when nothing is taken). Both in the pick's order.
struct PickCheck {
  std::vector<std::string> taken;
  std::vector<std::string> stranded;
  bool ok() const { return taken.empty() && stranded.empty(); }
};
template <class Free>
PickCheck CheckPick(const std::vector<std::string>& seats, const std::vector<SeatGuard>& guards,
                    const Free& free) {
  PickCheck check;
  for (const auto& seat : seats) {
    if (!free(seat)) check.taken.push_back(seat);
  }
  if (!check.taken.empty()) return check;
  for (const auto& g : guards) {
    if (free(g.seat) && (g.beyond.empty() || !free(g.beyond))) check.stranded.push_back(g.seat);
  }
  return check;
}

enum class HoldState { kHeld, kExpired, kReleased, kBooked };
const char* HoldStateName(HoldState s);

struct Hold {
  std::string hold_id;
  int64_t showtime_id = 0;
  int64_t customer_id = 0;
  std::vector<std::string> seats;
  HoldState state = HoldState::kHeld;
  Instant created_at;
  Instant expires_at;
};

enum class BookingStatus { kPending, kConfirmed, kFailed, kRefunded };
const char* BookingStatusName(BookingStatus s);
std::optional<BookingStatus> ParseBookingStatus(std::string_view text);

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
};

// Refunds the gateway has yet to accept (for /metrics): retrying after a transport error
// or 5xx, and refused (a 4xx answer: kept aside, still retried at the longest backoff).
struct RefundBacklog {
  int64_t retrying = 0;
  int64_t refused = 0;
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

// A showtime's waiting room (API.md): at most active_limit customers admitted at once,
// each for admission_ttl.
struct WaitingRoomConfig {
  bool enabled = false;
  int active_limit = 500;
  Millis admission_ttl{900'000};
  bool operator==(const WaitingRoomConfig&) const = default;
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
  int64_t violations() const {
    return booked_seats_without_confirmed_booking + confirmed_bookings_missing_seats +
           payments_unaccounted;
  }
};

// The Statuses every store reports the same way, with the seeds' messages.
Status ShowtimeNotFound(int64_t showtime_id);
// kSalesClosed: the showtime's sales closed at sales_close_at().
Status SalesClosed(int64_t showtime_id);
Status HoldNotFound(const std::string& hold_id);
// kConflict listing `taken`, with the message "Seats [F6, F7] of showtime 42 are not available".
Status SeatsUnavailable(const HoldRequest& request, std::vector<std::string> taken);
// kConflict with no seats: best available found no block free.
Status NoBlockAvailable(const HoldRequest& request);
// kSingleSeatGap naming the seats the hold would leave alone.
Status SingleSeatGap(const HoldRequest& request, std::vector<std::string> stranded);
// kUnknownSeats listing the requested codes missing from `found`.
Status UnknownSeats(const HoldRequest& request, const std::vector<std::string>& found);
Status BookingNotFound(int64_t booking_id);
// kHoldLimit: the customer already holds `held` live seats of the showtime, and the request
// would take them past kMaxSeatsPerCustomer.
Status HoldLimit(const HoldRequest& request, int64_t held);
// A hold refused because some requested codes are not seats of the showtime (`found` are
// the ones that are): kNotFound when none is and the showtime does not exist, else
// kUnknownSeats.
Status ExplainUnknownSeats(const HoldRequest& request, const std::vector<std::string>& found,
                           bool showtime_exists);

// The rules both stores apply to the rows they read, written once so they cannot drift.
// A seat's stored status: "HELD", "BOOKED", anything else AVAILABLE (lazy expiry is the
// query's: an expired hold is read as AVAILABLE).
SeatStatus ParseSeatStatus(std::string_view stored);
// A hold's state from its stored status: RELEASED and BOOKED as stored; a HELD hold whose
// time has passed (`expired`, judged on the store's clock) is EXPIRED.
HoldState DeriveHoldState(std::string_view stored, bool expired);
// Whether seat `number` is among a row's layout numbers (RowLayout::aisles or accessible).
bool IsLayoutSeat(const std::vector<int>& numbers, int number);

// The event JSON of API.md "Events" for a booking.
std::string BookingEventJson(const std::string& event_id, const std::string& type,
                             const Booking& booking, Instant occurred_at);

class Store {
 public:
  virtual ~Store() = default;

  // Applies pending migrations; safe when several processes start at once.
  virtual Status Migrate() = 0;
  // Round trip to the engine, for /readyz.
  virtual Status Ping() = 0;
  // The same, awaited on an I/O loop (by default on the loop's blocking pool).
  virtual io::asio::awaitable<Status> PingAsync();

  // kInvalid when the layout breaks a schema rule the caller should have checked.
  virtual Result<int64_t> CreateShowtime(const NewShowtime& showtime) = 0;
  // The same, awaited on an I/O loop (by default on the loop's blocking pool).
  virtual io::asio::awaitable<Result<int64_t>> CreateShowtimeAsync(NewShowtime showtime);
  virtual Result<Showtime> GetShowtime(int64_t showtime_id) = 0;
  virtual Result<std::vector<Showtime>> ListShowtimes(const ShowtimeQuery& query) = 0;
  // The same reads, awaited on an I/O loop (by default on the loop's blocking pool).
  virtual io::asio::awaitable<Result<Showtime>> GetShowtimeAsync(int64_t showtime_id);
  virtual io::asio::awaitable<Result<std::vector<Showtime>>> ListShowtimesAsync(
      ShowtimeQuery query);
  virtual Result<int64_t> CountShowtimes() = 0;
  // `boxoffice seed` at chain scale: writes `showtimes` as the batch named `batch`, all or
  // nothing, and false (nothing written) when a batch of that name was written before, so
  // an interrupted seed resumes where it stopped. `route` picks the shard of a store of
  // several (batch i on shard i mod N, whatever the instance). PostgreSQL copies the seats
  // (COPY) in one transaction with the batch's name; by default each showtime is created
  // on its own (SQLite: the demo's few, not resumable).
  virtual Result<bool> SeedBatch(const std::string& batch,
                                 const std::vector<NewShowtime>& showtimes, int64_t route);
  // Bytes the database takes on disk (kInvalid where not measured).
  virtual Result<int64_t> SizeOnDisk();
  // kNotFound for an unknown showtime.
  virtual Result<SeatMap> GetSeatMap(int64_t showtime_id) = 0;
  // The same read, awaited on an I/O loop (by default on the loop's blocking pool).
  virtual io::asio::awaitable<Result<SeatMap>> GetSeatMapAsync(int64_t showtime_id);
  virtual Result<std::vector<SeatOwner>> GetSeatOwners(int64_t showtime_id) = 0;

  // The hold, or: kHoldLimit when the customer's live holds of the showtime would pass
  // kMaxSeatsPerCustomer seats (counted atomically with the hold, whatever the instance),
  // kConflict naming the seats held or booked by anyone (including this customer),
  // kUnknownSeats naming codes not in the showtime, kNotFound for an unknown showtime. On
  // any error nothing is held.
  virtual Result<Hold> HoldSeats(const HoldRequest& request) = 0;
  // The same decision, awaited on an I/O loop without blocking it. By default HoldSeats
  // runs on the loop's blocking pool (io::Offload); off the loops, inline.
  virtual io::asio::awaitable<Result<Hold>> HoldSeatsAsync(HoldRequest request);
  // kNotFound unless the hold exists and belongs to customer_id.
  virtual Result<Hold> GetHold(const std::string& hold_id, int64_t customer_id) = 0;
  // Frees the hold's seats at once. OK for an expired or already released hold;
  // kNotActive for a booked one; kNotFound as GetHold.
  // Returns the hold (its showtime and seats, for the gate and the seat-map cache).
  virtual Result<Hold> ReleaseHold(const std::string& hold_id, int64_t customer_id) = 0;
  // Moves expiry to now + ttl, never past created_at + max_lifetime and never earlier than
  // it already is. kNotActive when the hold expired, was released or booked.
  virtual Result<Hold> ExtendHold(const std::string& hold_id, int64_t customer_id, Millis ttl,
                                  Millis max_lifetime) = 0;
  // The three above, awaited on an I/O loop without blocking it. By default they run on
  // the loop's blocking pool (io::Offload); off the loops, inline.
  enum class HoldAction { kRead, kRelease, kExtend };
  virtual io::asio::awaitable<Result<Hold>> HoldActionAsync(HoldAction action, std::string hold_id,
                                                            int64_t customer_id, Millis ttl,
                                                            Millis max_lifetime);

  // Frees up to batch_limit expired held seats; returns how many, and appends them to
  // *freed (showtime, seat code) when given. Idempotent and safe to run on several
  // instances at once (a correctness no-op thanks to lazy expiry): a seat freed is
  // reported by the one call that freed it.
  virtual Result<int> SweepExpired(int batch_limit, std::vector<SeatRef>* freed = nullptr) = 0;

  // Checkout's first atomic phase, in one transaction: the hold must be customer_id's and
  // active (kNotFound / kNotActive), with no checkout pending (kCheckoutExists naming the
  // booking); it is re-armed to now + ttl within created_at + max_lifetime, and a PENDING
  // booking is recorded for the sum of the seats' category prices.
  virtual Result<Booking> StartCheckout(const std::string& hold_id, int64_t customer_id, Millis ttl,
                                        Millis max_lifetime) = 0;
  // The same, as the second phase of a keyed checkout: the key's claim must still be
  // lock's (kInProgress otherwise) and in phase kStarted; in the same transaction the key
  // moves to kBookingCreated, remembering the booking and the hold's expiry before and after.
  virtual Result<Booking> StartCheckout(const KeyLock& lock, const std::string& hold_id, Millis ttl,
                                        Millis max_lifetime) = 0;

  // Checkout's idempotency keys (API.md "Checkout and bookings"; docs/payments.md lists the
  // recovery points). ClaimCheckoutKey records a new key in phase kStarted, or returns the
  // existing record: kFinished ones to replay, others re-claimed with a fresh token when
  // their lease ran out (the request that held them died). kKeyReused when the key was
  // first used with another fingerprint; kInProgress while another claim's lease runs.
  virtual Result<IdempotencyRecord> ClaimCheckoutKey(const IdempotencyKey& key, Millis lease) = 0;
  // The last phase, in one transaction: attaches the gateway session to the key's booking
  // and stores the response. false when the booking is no longer PENDING (the reconciler
  // abandoned it): the key is dropped instead. kInProgress if the claim is no longer lock's.
  virtual Result<bool> FinishCheckout(const KeyLock& lock, const std::string& session_id,
                                      const std::string& url, Instant expires_at,
                                      int response_status, const std::string& response_body) = 0;
  // FinishCheckout, awaited on an I/O loop (by default on the loop's blocking pool, never
  // refused: the gateway session exists, the checkout must not be left half-done).
  virtual io::asio::awaitable<Result<bool>> FinishCheckoutAsync(KeyLock lock,
                                                                std::string session_id,
                                                                std::string url, Instant expires_at,
                                                                int response_status,
                                                                std::string response_body);
  // The one-step forms of a purchase's phases, for the case a purchase meets when all goes
  // well (one statement each on PostgreSQL, awaited on an I/O loop). Each makes exactly the
  // decision the general methods would make for that case; for any other case it changes
  // nothing and returns false or nullopt, and the caller runs the general methods. By
  // default they always do.
  struct CheckoutBegun {
    IdempotencyRecord record;  // phase kBookingCreated, claimed by a fresh token
    Booking booking;           // PENDING, with hold_expires_at the re-armed expiry
  };
  // ClaimCheckoutKey then StartCheckout(lock, …), atomically, for a key never seen before
  // and an active hold of the key's customer with no checkout pending: true, with *begun.
  virtual io::asio::awaitable<Result<bool>> TryBeginCheckoutAsync(IdempotencyKey key,
                                                                  std::string hold_id, Millis lease,
                                                                  Millis ttl, Millis max_lifetime,
                                                                  CheckoutBegun* begun);
  // SettlePayment for a successful payment of the right amount and session for a PENDING
  // booking whose seats are all still its hold's: kConfirmed (with *confirmed), or
  // kDuplicate for a payment id settled before.
  virtual io::asio::awaitable<Result<std::optional<Settlement>>> TryConfirmPaymentAsync(
      PaymentReport report, Booking* confirmed);
  // Undoes a keyed checkout that cannot finish (the gateway is down), in one transaction: a
  // PENDING booking without a session becomes FAILED (never offered, nothing paid: no
  // event), the hold gets back the expiry it had unless it changed since, and the key is
  // dropped so a retry starts afresh. Does nothing if the claim is no longer lock's.
  virtual Status AbortCheckout(const KeyLock& lock) = 0;
  // Ends the lease of lock's claim now, its key staying at its phase, so the customer's
  // retry with the key carries on at once (a checkout whose answer was lost). Nothing when
  // the claim is no longer lock.token's or the key is finished; kNotFound when there is no
  // such key (its claim may still be on its way: try again).
  virtual Status EndCheckoutLease(const KeyLock& lock) = 0;
  // Deletes up to limit keys created more than older_than ago; returns how many.
  virtual Result<int> PurgeCheckoutKeys(Millis older_than, int limit) = 0;
  // The installation id of the database that holds booking_id (whether or not the booking
  // exists): a random UUID made once by migration 0026, the same on every call, another in
  // every database. With the booking id it makes the service's idempotency key at the
  // payment gateway unique per deployment (API.md "Checkout and bookings").
  virtual Result<std::string> InstallationId(int64_t booking_id) = 0;

  // Records the gateway session of a PENDING booking (idempotent for the same session).
  virtual Status AttachPaymentSession(int64_t booking_id, const std::string& session_id,
                                      const std::string& url, Instant expires_at) = 0;
  // kNotFound unless the booking exists and belongs to customer_id (any customer's for
  // kAnyCustomer, which services acting for the system pass; requests never can, their
  // customer ids being positive).
  static constexpr int64_t kAnyCustomer = 0;
  virtual Result<Booking> GetBooking(int64_t booking_id, int64_t customer_id) = 0;
  // The same read, awaited on an I/O loop (by default on the loop's blocking pool).
  virtual io::asio::awaitable<Result<Booking>> GetBookingAsync(int64_t booking_id,
                                                               int64_t customer_id);
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

  // How many bookings made in the last `window` are in each status (for /metrics; the
  // window bounds the cost of counting, by an index on created_at).
  virtual Result<std::map<BookingStatus, int64_t>> CountRecentBookings(Millis window) = 0;

  // Claims up to limit PENDING bookings whose payment session has ended (so the gateway's
  // answer is final while the hold's margin still keeps the seats), or older than
  // older_than, that no one has claimed (or whose claim ran out), for `lease`; safe with
  // several instances claiming at once. Those never claimed come first, then those claimed
  // longest ago: bookings the gateway cannot settle yet never keep the others from a turn.
  virtual Result<std::vector<Booking>> ClaimStaleCheckouts(Millis older_than, Millis lease,
                                                           int limit) = 0;
  // Gives back claims taken by ClaimStaleCheckouts that were not asked about (the round
  // ended early): those bookings are claimable again at once, first in line.
  virtual Status ReleaseCheckoutClaims(const std::vector<int64_t>& booking_ids) = 0;
  // A checkout whose payment never happened: PENDING → FAILED with a BookingFailed event.
  // Returns whether it changed the booking. The hold is left to expire.
  virtual Result<bool> AbandonCheckout(int64_t booking_id) = 0;

  // Unpublished outbox rows after after_id, in id order, at most limit of them.
  virtual Result<std::vector<OutboxEvent>> PendingEvents(int64_t after_id, int limit) = 0;
  // Takes or renews the lease `name` for owner until now + lease; false while another
  // owner's lease runs. Makes one outbox relay at a time drain the outbox. A negative
  // lease gives it up (if owner holds it) so another owner may take it at once.
  virtual Result<bool> AcquireLease(const std::string& name, const std::string& owner,
                                    Millis lease) = 0;
  // The invariants checked over the whole database (a full scan: for benchmarks and
  // operators, not for the request path).
  virtual Result<AuditReport> Audit() = 0;

  // Sets a showtime's waiting room; kNotFound for an unknown showtime.
  virtual Status SetWaitingRoom(int64_t showtime_id, const WaitingRoomConfig& config) = 0;
  // The same, awaited on an I/O loop (by default on the loop's blocking pool).
  virtual io::asio::awaitable<Status> SetWaitingRoomAsync(int64_t showtime_id,
                                                          WaitingRoomConfig config);
  // The showtimes whose waiting room is on.
  virtual Result<std::vector<std::pair<int64_t, WaitingRoomConfig>>> EnabledWaitingRooms() = 0;

  // Marks delivered outbox rows published; they are not returned by PendingEvents again.
  // Fenced by the lease `lease_name`: only while `owner` still holds it, unexpired (checked
  // in the same atomic step as the mark); otherwise kNotActive and nothing is marked, so a
  // relay whose lease ran out mid-delivery leaves the rows to the one that took over.
  virtual Status MarkEventsPublished(const std::vector<int64_t>& ids, const std::string& lease_name,
                                     const std::string& owner) = 0;
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
