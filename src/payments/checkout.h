// CheckoutService: turns a hold into a PENDING booking with a payment session at the
// gateway, exactly once per Idempotency-Key, without a transaction open across the call to
// the gateway.
//
// The request moves through atomic phases, each one store transaction, and the key's record
// says which phase it reached (its recovery point, see docs/payments.md):
//
//   1. claim      the key is recorded (or found) with a lease; a finished key replays.
//   2. book       the hold is re-armed and a PENDING booking recorded; key → BOOKING_CREATED.
//   3. gateway    a session is opened with Idempotency-Key = the database's installation id
//                 and the booking id (no transaction), and what comes back is checked.
//   4. finish     the session is attached and the response stored; key → FINISHED.
//
// If the process dies between any two phases, the key's lease runs out and a retry with the
// same key carries on from the recorded phase: the gateway call is repeated with the same
// idempotency key, so the gateway opens one session however often it is asked. If the
// gateway cannot be reached, phase 2 is undone (booking FAILED, the hold's expiry restored,
// the key dropped) and the caller gets kUnavailable: nothing is left half-done.
//
// A phase whose answer was lost (kUnavailable from the store) may have committed. Its claim
// token is chosen here, so the claim can be found: the lease is ended at once (an undo is
// retried) by io::FollowUps until it takes, and the customer's retry with the same key
// carries on from the recorded phase without waiting out the lease.
//
// The gateway's key is unique per deployment: booking ids alone repeat across deployments
// that share a gateway account, and a gateway answers a key it has seen with the session it
// opened then, whoever asked. The session that comes back must also be the one asked for
// (SessionMismatch): otherwise the customer would be sent to pay someone else's amount, or
// an expired session. A mismatch is undone like an unreachable gateway and logged; the
// hold stays as it was, and a retry (with this key or another) books afresh under a new
// booking id, hence a new gateway key and a session of its own.
#pragma once

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/metrics.h"
#include "core/sync.h"
#include "gate/seat_gate.h"
#include "io/follow_ups.h"
#include "payments/gateway.h"
#include "store/checkout_store.h"
#include "store/shards.h"

namespace boxoffice {

struct CheckoutOptions {
  Millis hold_ttl{10 * 60'000};           // checkout re-arms the hold to now + this
  Millis hold_max_lifetime{20 * 60'000};  // but never past created_at + this
  // The gateway session ends this long after checkout, and never later than the hold's
  // expiry minus (hold_ttl - payment_ttl), the margin a late callback has.
  Millis payment_ttl{8 * 60'000};
  Millis key_lease{30'000};  // a request holds its key this long before a retry may take over
  // The service's base URL as the gateway and the customer's browser reach it (see below):
  // the gateway posts outcomes to <public_url>/payments/callback and sends the browser back
  // to the seat picker's booking page, <public_url>/#/bookings/<id>.
  std::string public_url;
  // Test-only fault injection: the process kills itself with SIGKILL at this recovery point
  // ("claimed", "booked" or "session"). Empty in production.
  std::string crash_at;
};

// What to answer: the status and body of the first response under this key.
struct CheckoutResponse {
  int status = 201;
  std::string body;
  bool replayed = false;  // true when this is a stored response sent again
};

class CheckoutService {
 public:
  // gate: the seat gate whose keys follow the hold's new expiry, or null.
  CheckoutService(CheckoutStore* store, Gateway* gateway, CheckoutOptions options, Metrics* metrics,
                  SeatGate* gate = nullptr);

  // As API.md "Checkout and bookings". Errors: kKeyReused, kInProgress, and those of
  // CheckoutStore::StartCheckout (kNotFound, kNotActive, kCheckoutExists); kUnavailable when the
  // gateway or the store cannot be reached (nothing half-done). email: where the booking's
  // tickets go (validated by the caller; empty: nowhere), stored with its last phase.
  Result<CheckoutResponse> Checkout(int64_t customer_id, const std::string& idempotency_key,
                                    const std::string& hold_id, const std::string& email = {});
  // The same, on an I/O loop: the store's phases run on the blocking pool, the gateway's
  // call is awaited (no thread waits on the gateway, however slow it is).
  io::asio::awaitable<Result<CheckoutResponse>> CheckoutAsync(int64_t customer_id,
                                                              std::string idempotency_key,
                                                              std::string hold_id,
                                                              std::string email = {});

  // For a service listening on port 0: its public URL is known once it listens.
  void SetPublicUrl(std::string url);

 private:
  void MaybeCrash(const char* point) const;
  void Count(const char* outcome);
  // Undoes phase 2 (booking FAILED, the hold's expiry restored, the key dropped); an undo
  // that fails is retried aside until the lease ends.
  io::asio::awaitable<void> Abort(const KeyLock& lock, int64_t booking_id);
  // A phase of lock's claim lost its answer: its lease is ended aside, until it takes.
  void EndLeaseAside(const KeyLock& lock);
  // Phases 1 and 2: the key's record (kFinished: replay it) and, unless finished, the
  // booking, made now or by a request that died before this one. One statement when the
  // store decides a new key's case in one step (CheckoutStore::TryBeginCheckoutAsync).
  struct Begun {
    IdempotencyRecord record;
    std::optional<Booking> booking;  // unless the record is kFinished
  };
  io::asio::awaitable<Result<Begun>> Begin(int64_t customer_id, std::string idempotency_key,
                                           std::string hold_id);
  // The callback and return URLs of a booking's payment session (reference: its id).
  std::pair<std::string, std::string> PublicUrls(const std::string& reference) const;
  // The installation id of the database holding the booking (CheckoutStore::InstallationId), read
  // once per database for the life of the process (it never changes): a checkout costs no
  // statement for it but the first.
  io::asio::awaitable<Result<std::string>> InstallationId(int64_t booking_id);

  CheckoutStore* store_;
  Gateway* gateway_;
  CheckoutOptions options_;
  Metrics* metrics_;
  SeatGate* gate_;
  std::map<std::string, Counter*> outcomes_;  // registered at construction
  mutable Mutex public_url_mu_;
  std::string public_url_ BOX_GUARDED_BY(public_url_mu_);
  // Installation ids by shard number (store/shards.h; a single database is shard 0): read
  // without a lock once published (no lock per checkout), set once each under
  // installation_mu_, which also guards the strings' owner; they live as long as the
  // service.
  std::array<std::atomic<const std::string*>, kMaxShards> installation_ids_{};
  Mutex installation_mu_;
  std::vector<std::unique_ptr<const std::string>> installation_owned_
      BOX_GUARDED_BY(installation_mu_);
  // Last: its thread (which calls into the store through this object) ends first.
  io::FollowUps follow_ups_;
};

// The service's Idempotency-Key at the gateway for a booking's session: unique per
// deployment ("<installation id>:<booking id>"), the same for every retry of the booking.
std::string GatewaySessionKey(const std::string& installation_id, int64_t booking_id);

// Why the session a gateway returned is not the one asked for (another amount, currency or
// reference, not OPEN, or ending later than asked), or "" when it is. The amount, currency,
// reference and end are checked where the gateway stated them (API.md's gateway need only
// return the session's id and url); its status must be OPEN (asked for when not stated).
std::string SessionMismatch(const GatewaySession& session, int64_t amount,
                            const std::string& currency, const std::string& reference,
                            Instant expires_at);

// A gateway may round a session's end up to its own precision (say, whole seconds); past
// this, a session ending later than asked would outlive the hold's margin.
inline constexpr Millis kSessionExpirySlack{1'000};

// A checkout whose hold would leave less than this (or half the payment TTL, if shorter) to
// pay is refused (kNotActive): nobody pays in less than a minute, and the session may not
// outlive the hold's margin.
inline constexpr Millis kMinPaymentWindow{60'000};

// Idempotency-Key syntax of API.md: 1 to 255 printable ASCII characters.
bool IsValidIdempotencyKey(const std::string& key);

}  // namespace boxoffice
