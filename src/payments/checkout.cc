#include "payments/checkout.h"

#include <csignal>
#include <nlohmann/json.hpp>

#include "core/log.h"
#include "core/status.h"
#include "core/time_format.h"

namespace boxoffice {
namespace {

// The 201 body of API.md; stored with the key and replayed byte for byte.
std::string CheckoutJson(const Booking& b, const GatewaySession& session, Instant expires_at) {
  return nlohmann::json{{"bookingId", b.id},
                        {"holdId", b.hold_id},
                        {"status", BookingStatusName(BookingStatus::kPending)},
                        {"amount", {{"amount", b.amount.amount}, {"currency", b.amount.currency}}},
                        {"payment",
                         {{"sessionId", session.session_id},
                          {"url", session.url},
                          {"expiresAt", FormatRfc3339(expires_at)}}}}
      .dump();
}

}  // namespace

std::string GatewaySessionKey(const std::string& installation_id, int64_t booking_id) {
  // InstallationId refuses an empty id; booking ids from the store are positive.
  BOX_ASSERT(!installation_id.empty() && booking_id > 0);
  return installation_id + ":" + std::to_string(booking_id);
}

std::string SessionMismatch(const GatewaySession& session, int64_t amount,
                            const std::string& currency, const std::string& reference,
                            Instant expires_at) {
  // What the gateway stated is checked; API.md's gateway need state only the session's id
  // and url (its status is then asked for, see CheckoutAsync).
  if (session.amount && *session.amount != amount) {
    return "amount " + std::to_string(*session.amount) + ", asked " + std::to_string(amount);
  }
  if (!session.currency.empty() && session.currency != currency) {
    return "currency '" + session.currency + "', asked '" + currency + "'";
  }
  if (!session.reference.empty() && session.reference != reference) {
    return "reference '" + session.reference + "', asked '" + reference + "'";
  }
  if (session.status != "OPEN") return "status '" + session.status + "', not OPEN";
  if (session.expires_at && *session.expires_at > expires_at + kSessionExpirySlack) {
    return "ends " + FormatRfc3339(*session.expires_at) + ", asked " + FormatRfc3339(expires_at);
  }
  return "";
}

bool IsValidIdempotencyKey(const std::string& key) {
  if (key.empty() || key.size() > 255) return false;
  for (unsigned char c : key) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

CheckoutService::CheckoutService(CheckoutStore* store, Gateway* gateway, CheckoutOptions options,
                                 Metrics* metrics, SeatGate* gate)
    : store_(store),
      gateway_(gateway),
      options_(std::move(options)),
      metrics_(metrics),
      gate_(gate),
      public_url_(options_.public_url),
      follow_ups_(metrics, "checkout") {
  // From the flags, as ServeFlagsError checked them (or the defaults): the session never
  // outlives the hold's margin, and a claim's lease ends.
  BOX_ASSERT(options_.hold_ttl > Millis(0) && options_.hold_max_lifetime >= options_.hold_ttl);
  BOX_ASSERT(options_.payment_ttl > Millis(0) && options_.payment_ttl <= options_.hold_ttl);
  BOX_ASSERT(options_.key_lease > Millis(0));
  for (const char* outcome : {"created", "replayed", "refused", "in_progress", "too_late",
                              "gateway_unavailable", "gateway_mismatch", "error"}) {
    outcomes_[outcome] =
        &metrics_->GetCounter("boxoffice_checkouts_total", "Checkout requests by outcome.",
                              std::string("outcome=\"") + outcome + "\"");
  }
}

void CheckoutService::Count(const char* outcome) {
  auto it = outcomes_.find(outcome);
  BOX_ASSERT(it != outcomes_.end());
  it->second->Inc();
}

void CheckoutService::SetPublicUrl(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  MutexLock lock(public_url_mu_);
  public_url_ = std::move(url);
}

std::pair<std::string, std::string> CheckoutService::PublicUrls(
    const std::string& reference) const {
  MutexLock lock(public_url_mu_);
  return {public_url_ + "/payments/callback", public_url_ + "/#/bookings/" + reference};
}

io::asio::awaitable<Result<std::string>> CheckoutService::InstallationId(int64_t booking_id) {
  // Each database keeps its own id; a booking id says its database (its shard). Booking
  // ids come from the store, so they always name a shard.
  const std::optional<int> shard = ShardOfId(booking_id);
  BOX_ASSERT(shard.has_value() && *shard < kMaxShards);
  std::atomic<const std::string*>& slot = installation_ids_[static_cast<size_t>(*shard)];
  if (const std::string* known = slot.load(std::memory_order_acquire)) co_return *known;
  auto read = [this, booking_id] { return store_->InstallationId(booking_id); };
  auto id = co_await io::Offload(std::move(read));
  if (!id.ok()) co_return id.status();
  if (id->empty()) co_return Status(Code::kInternal, "the database has no installation id");
  MutexLock lock(installation_mu_);
  if (!slot.load(std::memory_order_relaxed)) {
    installation_owned_.push_back(std::make_unique<const std::string>(id.value()));
    slot.store(installation_owned_.back().get(), std::memory_order_release);
  }
  co_return id.value();
}

void CheckoutService::MaybeCrash(const char* point) const {
  if (options_.crash_at != point) return;
  LogWarn("checkout fault injection: killing the process", {{"point", point}});
  FlushLogs();
  std::raise(SIGKILL);
}

Result<CheckoutResponse> CheckoutService::Checkout(int64_t customer_id,
                                                   const std::string& idempotency_key,
                                                   const std::string& hold_id,
                                                   const std::string& email) {
  return io::RunSync(CheckoutAsync(customer_id, idempotency_key, hold_id, email));
}

io::asio::awaitable<void> CheckoutService::Abort(const KeyLock& lock, int64_t booking_id) {
  // Never refused by a full pool: an undo left undone would leave the checkout half-done.
  auto undo = [this, lock] { return store_->AbortCheckout(lock); };
  if (Status s = co_await io::Offload(std::move(undo), /*may_refuse=*/false); !s.ok()) {
    // Tried again aside until the lease ends; after that a retry with the key carries the
    // checkout on from its phase, which is a state it may be left in.
    LogWarn("checkout not undone yet", {{"bookingId", booking_id}, {"error", s.message()}});
    follow_ups_.Add(
        "undo the checkout of booking " + std::to_string(booking_id),
        [this, lock] {
          return store_->AbortCheckout(lock).ok() ? io::FollowUps::Outcome::kDone
                                                  : io::FollowUps::Outcome::kRetry;
        },
        io::FollowUps::Clock::now() + options_.key_lease);
  }
}

void CheckoutService::EndLeaseAside(const KeyLock& lock) {
  follow_ups_.Add(
      "end the lease of a checkout whose answer was lost",
      [this, lock] {
        return store_->EndCheckoutLease(lock).ok() ? io::FollowUps::Outcome::kDone
                                                   : io::FollowUps::Outcome::kRetry;
      },
      io::FollowUps::Clock::now() + options_.key_lease);
}

// (Each store phase is a named lambda handed to io::Offload: see io/loop.h on g++ 12.)
io::asio::awaitable<Result<CheckoutService::Begun>> CheckoutService::Begin(
    int64_t customer_id, std::string idempotency_key, std::string hold_id) {
  // The claim's token, chosen here: a claim whose answer is lost can still be found.
  IdempotencyKey key{customer_id, idempotency_key, hold_id, NewUuidOnShard(ShardOfUuid(hold_id))};
  const KeyLock claim{customer_id, idempotency_key, key.token};
  CheckoutStore::CheckoutBegun begun;
  auto at_once = co_await store_->TryBeginCheckoutAsync(
      key, hold_id, options_.key_lease, options_.hold_ttl, options_.hold_max_lifetime, &begun);
  if (!at_once.ok()) {
    if (at_once.status().maybe_applied()) EndLeaseAside(claim);
    co_return at_once.status();
  }
  if (at_once.value()) {
    // Claimed and booked in one step: the two recovery points are passed together.
    MaybeCrash("claimed");
    co_return Begun{std::move(begun.record), std::move(begun.booking)};
  }

  // Phase 1: claim the key, or find the response to replay.
  auto claim_key = [this, key] { return store_->ClaimCheckoutKey(key, options_.key_lease); };
  auto record = co_await io::Offload(std::move(claim_key));
  if (!record.ok()) {
    if (record.status().maybe_applied()) EndLeaseAside(claim);
    co_return record.status();
  }
  if (record->phase == KeyPhase::kFinished) co_return Begun{std::move(record.value()), {}};
  const KeyLock lock = record->lock();
  MaybeCrash("claimed");

  // Phase 2: the booking, or the one a request that died before us recorded.
  auto book = [this, lock, hold_id, customer_id, phase = record->phase,
               recorded = record->booking_id]() -> Result<Booking> {
    if (phase == KeyPhase::kStarted) {
      return store_->StartCheckout(lock, hold_id, options_.hold_ttl, options_.hold_max_lifetime);
    }
    auto found = store_->GetBooking(recorded, customer_id);
    if (found.ok() && found->status != BookingStatus::kPending) {
      return Status(Code::kNotActive, "the checkout was abandoned");
    }
    return found;
  };
  Result<Booking> booking = co_await io::Offload(std::move(book));
  if (!booking.ok()) {
    // Nothing of this request is left but the key: drop it so a retry starts afresh.
    if (booking.status().code() != Code::kInProgress) co_await Abort(lock, 0);
    co_return booking.status();
  }
  co_return Begun{std::move(record.value()), std::move(booking.value())};
}

io::asio::awaitable<Result<CheckoutResponse>> CheckoutService::CheckoutAsync(
    int64_t customer_id, std::string idempotency_key, std::string hold_id, std::string email) {
  auto begun = co_await Begin(customer_id, idempotency_key, hold_id);
  if (!begun.ok()) {
    Count(begun.status().code() == Code::kInProgress ? "in_progress" : "refused");
    co_return begun.status();
  }
  const IdempotencyRecord& record = begun->record;
  if (record.phase == KeyPhase::kFinished) {
    Count("replayed");
    co_return CheckoutResponse{record.response_status, record.response_body, true};
  }
  BOX_ASSERT(begun->booking.has_value());
  const KeyLock lock = record.lock();
  const Booking* booking = &*begun->booking;
  MaybeCrash("booked");

  // The session ends payment_ttl after checkout, and never later than the hold's expiry
  // minus the margin (hold_ttl - payment_ttl): a hold extended near its lifetime cap ends
  // sooner than checkout + payment_ttl, and a payment after the hold ended is refunded.
  // Both instants come from the store's clock (created_at, the re-armed expiry).
  const std::optional<Instant> hold_ends =
      booking->hold_expires_at ? booking->hold_expires_at : record.hold_expiry_after;
  BOX_ASSERT(hold_ends.has_value());  // a started checkout knows its hold's expiry
  const Instant expires_at = std::min(booking->created_at + options_.payment_ttl,
                                      *hold_ends - (options_.hold_ttl - options_.payment_ttl));
  if (expires_at - booking->created_at < std::min(kMinPaymentWindow, options_.payment_ttl / 2)) {
    co_await Abort(lock, booking->id);
    Count("too_late");
    co_return Status(Code::kNotActive,
                     "the hold ends too soon to pay for it: hold the seats again");
  }

  // Phase 3: the gateway session, outside any transaction. The installation id and the
  // booking id as idempotency key make a retry after a crash find the session the first
  // attempt opened, and never a session another deployment opened for its own booking of
  // the same id.
  auto installation = co_await InstallationId(booking->id);
  if (!installation.ok()) {
    LogWarn("installation id not read; checkout undone",
            {{"bookingId", booking->id}, {"error", installation.status().message()}});
    co_await Abort(lock, booking->id);
    Count("error");
    co_return installation.status();
  }
  std::string reference = std::to_string(booking->id);
  std::string session_key = GatewaySessionKey(installation.value(), booking->id);
  auto [callback_url, return_url] = PublicUrls(reference);
  auto session = co_await gateway_->CreateSessionAsync(
      booking->amount.amount, booking->amount.currency, reference, std::move(callback_url),
      std::move(return_url), expires_at, session_key);
  if (!session.ok()) {
    LogWarn("payment session not opened; checkout undone",
            {{"bookingId", booking->id}, {"error", session.status().message()}});
    co_await Abort(lock, booking->id);
    Count("gateway_unavailable");
    co_return Status(Code::kUnavailable,
                     "payment gateway unavailable: " + session.status().message());
  }
  // A gateway that does not say where the session stands is asked (GET /v1/sessions/{id},
  // on the blocking pool: the reconciler's question); one that does not answer is as
  // unreachable.
  if (session->status.empty()) {
    auto ask = [this, id = session->session_id] { return gateway_->GetSession(id); };
    auto standing = co_await io::Offload(std::move(ask));
    if (!standing.ok()) {
      LogWarn("payment session's status not known; checkout undone",
              {{"bookingId", booking->id}, {"error", standing.status().message()}});
      co_await Abort(lock, booking->id);
      Count("gateway_unavailable");
      co_return Status(Code::kUnavailable,
                       "payment gateway unavailable: " + standing.status().message());
    }
    session->status = standing->status;
  }
  // The customer is sent only to the session asked for. Anything else (a session opened
  // under this key by someone else, or one that ended) is undone like an unreachable
  // gateway: the retry books afresh, under a new key.
  if (std::string mismatch = SessionMismatch(session.value(), booking->amount.amount,
                                             booking->amount.currency, reference, expires_at);
      !mismatch.empty()) {
    LogError("payment gateway returned another session; checkout undone",
             {{"bookingId", booking->id},
              {"sessionId", session->session_id},
              {"idempotencyKey", session_key},
              {"mismatch", mismatch},
              {"amount", session->amount.value_or(-1)},
              {"currency", session->currency},
              {"reference", session->reference},
              {"status", session->status}});
    co_await Abort(lock, booking->id);
    Count("gateway_mismatch");
    co_return Status(Code::kUnavailable,
                     "payment gateway returned a session that is not this booking's");
  }
  BOX_ASSERT(session->status == "OPEN");  // SessionMismatch refuses any other
  MaybeCrash("session");

  // Phase 4: attach the session and store the response, in one transaction.
  CheckoutResponse response{201, CheckoutJson(*booking, session.value(), expires_at), false};
  // The session exists: finishing is never refused by a full pool (the checkout would be
  // left half-done until its key's lease ran out).
  auto finished =
      co_await store_->FinishCheckoutAsync(lock, session->session_id, session->url, expires_at,
                                           response.status, response.body, std::move(email));
  if (!finished.ok()) {
    // Its answer lost, the session may be attached and the response stored, or not: the
    // lease ends, and the customer's retry replays the one or finishes the other.
    if (finished.status().maybe_applied()) EndLeaseAside(lock);
    Count(finished.status().code() == Code::kInProgress ? "in_progress" : "error");
    co_return finished.status();
  }
  if (!finished.value()) {
    Count("refused");
    co_return Status(Code::kNotActive, "the checkout was abandoned");
  }
  Count("created");
  // The gate's keys follow the hold's new expiry. Until now they ended earlier than the
  // hold, which only ever lets the store decide; after an undo they already match.
  if (gate_ && booking->hold_expires_at) {
    gate_->Rearm(
        booking->showtime_id, booking->seats, booking->hold_id,
        std::chrono::duration_cast<Millis>(*booking->hold_expires_at - SystemClock().Now()));
  }
  LogInfo("checkout created",
          {{"bookingId", booking->id}, {"holdId", hold_id}, {"sessionId", session->session_id}});
  co_return response;
}

}  // namespace boxoffice
