// CheckoutStore: a purchase's phases before the money (docs/payments.md): the PENDING
// booking, the idempotency keys and their recovery points, the gateway session, and the
// reconciler's claims on checkouts whose payment never came. A role of Store.
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

class CheckoutStore {
 public:
  virtual ~CheckoutStore() = default;

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
  // and stores the response, and the address the tickets go to (email; empty: none). false when the
  // booking is no longer PENDING (the reconciler abandoned it): the key is dropped instead.
  // kInProgress if the claim is no longer lock's.
  virtual Result<bool> FinishCheckout(const KeyLock& lock, const std::string& session_id,
                                      const std::string& url, Instant expires_at,
                                      int response_status, const std::string& response_body,
                                      const std::string& email) = 0;
  // FinishCheckout, awaited on an I/O loop (by default on the loop's blocking pool, never
  // refused: the gateway session exists, the checkout must not be left half-done).
  virtual io::asio::awaitable<Result<bool>> FinishCheckoutAsync(
      KeyLock lock, std::string session_id, std::string url, Instant expires_at,
      int response_status, std::string response_body, std::string email);
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
};

}  // namespace boxoffice
