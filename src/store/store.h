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
#include "domain/booking.h"
#include "domain/hold.h"
#include "domain/showtime.h"
#include "io/loop.h"

namespace boxoffice {

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
