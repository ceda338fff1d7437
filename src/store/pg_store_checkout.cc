// PgStore's CheckoutStore role: the purchase's phases before the money, its idempotency
// keys, the booking reads and the reconciler's claims (docs/payments.md).
#include "store/pg_store_impl.h"

namespace boxoffice {

// Migration 0026's row: this database's installation id (Store::InstallationId).
constexpr Sql kInstallationId{"installation_id", "SELECT id::text FROM installation_identity"};

Result<std::string> PgStore::InstallationId(int64_t /*booking_id: this database's*/) {
  return impl_->Run<std::string>(&retried_, [](PgConnection& c) -> Result<std::string> {
    auto res = c.Exec(kInstallationId, {});
    if (!res.ok()) return res.status();
    if (PQntuples(res.value().get()) != 1) return Status(Code::kInternal, "no installation id");
    return Text(res.value().get(), 0, 0);
  });
}

Result<Booking> PgStore::StartCheckout(const std::string& hold_id, int64_t customer_id, Millis ttl,
                                       Millis max_lifetime) {
  return impl_->InTx<Booking>(&retried_, [&](PgConnection& c) {
    PgMoneyTx tx(c, impl_->Now());
    return StartCheckoutIn(tx, nullptr, hold_id, customer_id, ttl, max_lifetime);
  });
}

Status PgStore::AttachPaymentSession(int64_t booking_id, const std::string& session_id,
                                     const std::string& url, Instant expires_at) {
  auto r = impl_->Run<bool>(&retried_, [&](PgConnection& c) -> Result<bool> {
    PgMoneyTx tx(c, impl_->Now());
    return tx.AttachSession(booking_id, session_id, url, expires_at, Instant(), "");
  });
  if (!r.ok()) return r.status();
  if (!r.value()) return Status(Code::kNotActive, "booking is not pending or has another session");
  return Status::Ok();
}

Result<Booking> PgStore::StartCheckout(const KeyLock& lock, const std::string& hold_id, Millis ttl,
                                       Millis max_lifetime) {
  return impl_->InTx<Booking>(&retried_, [&](PgConnection& c) {
    PgMoneyTx tx(c, impl_->Now());
    return StartCheckoutIn(tx, &lock, hold_id, lock.customer_id, ttl, max_lifetime);
  });
}

Result<IdempotencyRecord> PgStore::ClaimCheckoutKey(const IdempotencyKey& key, Millis lease) {
  return impl_->InTx<IdempotencyRecord>(&retried_, [&](PgConnection& c) {
    PgMoneyTx tx(c, impl_->Now());
    return ClaimCheckoutKeyIn(tx, key, lease);
  });
}

namespace {

std::vector<Param> FinishParams(Param now, const KeyLock& lock, const std::string& session_id,
                                const std::string& url, Instant expires_at, int response_status,
                                const std::string& response_body, const std::string& email) {
  return {std::move(now),
          P(lock.customer_id),
          lock.key,
          lock.token,
          session_id,
          url,
          P(ToEpochMs(expires_at)),
          P(int64_t{response_status}),
          response_body,
          email.empty() ? Param() : Param(email)};
}

// kCheckoutFinish's answer, as FinishCheckout's.
Result<bool> FinishAnswer(const PGresult* r) {
  if (PQntuples(r) != 1) return BOX_BROKEN_AFTER_COMMIT(PQntuples(r) == 1);
  const std::string outcome = Text(r, 0, 0);
  if (outcome == "finished") return true;
  if (outcome == "abandoned") return false;
  if (outcome != "lost") return BOX_BROKEN_AFTER_COMMIT(outcome == "lost");
  return Status(Code::kInProgress, "another request took over this idempotency key");
}

}  // namespace

// One statement (migration 0013) where the general transaction (FinishCheckoutIn, which
// SQLite runs) takes five: the same rule, decided in the database.
Result<bool> PgStore::FinishCheckout(const KeyLock& lock, const std::string& session_id,
                                     const std::string& url, Instant expires_at,
                                     int response_status, const std::string& response_body,
                                     const std::string& email) {
  return impl_->Run<bool>(&retried_, [&](PgConnection& c) -> Result<bool> {
    auto res = c.Exec(kCheckoutFinish, FinishParams(impl_->Now(), lock, session_id, url, expires_at,
                                                    response_status, response_body, email));
    if (!res.ok()) return res.status();
    return FinishAnswer(res.value().get());
  });
}

// On a loop, the last phases that arrive together are decided by one statement (migration
// 0033), each as FinishCheckout would decide it.
io::asio::awaitable<Result<bool>> PgStore::FinishCheckoutAsync(KeyLock lock, std::string session_id,
                                                               std::string url, Instant expires_at,
                                                               int response_status,
                                                               std::string response_body,
                                                               std::string email) {
  Impl::LoopState* loop = impl_->Loop();
  if (!loop) {
    co_return FinishCheckout(lock, session_id, url, expires_at, response_status, response_body,
                             email);
  }
  const auto queue = static_cast<int64_t>(static_cast<uint64_t>(lock.customer_id) %
                                           Impl::kCheckoutQueues);
  CheckoutFinishRequest request{lock,          session_id,    url,  expires_at,
                                response_status, response_body, email};
  auto row = co_await loop->finishes.Submit(queue, std::move(request));
  if (row.ok()) {
    switch (row.value()) {
      case FinishOutcome::kFinished:
        co_return true;
      case FinishOutcome::kAbandoned:
        co_return false;
      case FinishOutcome::kLost:
        co_return Status(Code::kInProgress, "another request took over this idempotency key");
    }
  }
  if (row.status().code() != Code::kUnavailable) co_return row.status();
  // The session exists: a full queue or a lost connection does not leave the checkout
  // half-done until its key's lease runs out; the pool's connection finishes it, if the
  // blocking pool has room (else 503, and the client's retry carries on once the lease
  // ends). (Had the statement run before the connection was lost, the claim is finished and
  // this answers kInProgress: the client's retry replays the response.)
  auto finish = [this, lock = std::move(lock), session_id = std::move(session_id),
                 url = std::move(url), expires_at, response_status,
                 response_body = std::move(response_body), email = std::move(email)] {
    return FinishCheckout(lock, session_id, url, expires_at, response_status, response_body, email);
  };
  co_return co_await io::Offload(std::move(finish));
}

// On a loop, the new-key checkouts that arrive together are decided by one statement
// (migration 0033), each as ClaimCheckoutKey then StartCheckout(lock, …) would decide it.
io::asio::awaitable<Result<bool>> PgStore::TryBeginCheckoutAsync(IdempotencyKey key,
                                                                 std::string hold_id, Millis lease,
                                                                 Millis ttl, Millis max_lifetime,
                                                                 CheckoutBegun* begun) {
  BOX_ASSERT(begun != nullptr);
  Impl::LoopState* loop = impl_->Loop();
  if (!loop || !IsUuid(hold_id)) co_return false;  // the general path explains a bad id
  const std::string token = ClaimToken(key);
  const auto queue = static_cast<int64_t>(std::hash<std::string>{}(hold_id) % Impl::kCheckoutQueues);
  CheckoutBeginRequest request{key, hold_id, lease, ttl, max_lifetime};
  request.key.token = token;
  auto found = co_await loop->checkouts.Submit(queue, std::move(request));
  if (!found.ok()) co_return found.status();
  BeginRow& row = found.value();
  if (!row.booked) co_return false;
  Booking& b = begun->booking;
  b = Booking{};
  b.id = row.booking_id;
  b.hold_id = hold_id;
  b.showtime_id = row.showtime_id;
  b.customer_id = key.customer_id;
  b.seats = std::move(row.seats);
  b.status = BookingStatus::kPending;
  b.amount = std::move(row.amount);
  b.created_at = row.created_at;
  b.hold_expires_at = row.expiry_after;
  IdempotencyRecord& record = begun->record;
  record = IdempotencyRecord{};
  record.key = std::move(key);
  record.phase = KeyPhase::kBookingCreated;
  record.token = token;
  record.locked_until = b.created_at + lease;
  record.booking_id = b.id;
  record.hold_expiry_before = row.expiry_before;
  record.hold_expiry_after = row.expiry_after;
  if (!(b.id > 0 && !b.seats.empty() && row.expiry_after >= row.expiry_before)) {
    co_return BOX_BROKEN_AFTER_COMMIT(b.id > 0 && !b.seats.empty() && expiry_after >= before);
  }
  co_return true;
}

Status PgStore::AbortCheckout(const KeyLock& lock) {
  auto r = impl_->InTx<bool>(&retried_, [&](PgConnection& c) -> Result<bool> {
    PgMoneyTx tx(c, impl_->Now());
    if (Status s = AbortCheckoutIn(tx, lock); !s.ok()) return s;
    return true;
  });
  return r.ok() ? Status::Ok() : r.status();
}

Status PgStore::EndCheckoutLease(const KeyLock& lock) {
  auto r = impl_->InTx<bool>(&retried_, [&](PgConnection& c) -> Result<bool> {
    PgMoneyTx tx(c, impl_->Now());
    if (Status s = EndCheckoutLeaseIn(tx, lock); !s.ok()) return s;
    return true;
  });
  return r.ok() ? Status::Ok() : r.status();
}

Result<int> PgStore::PurgeCheckoutKeys(Millis older_than, int limit) {
  return impl_->Run<int>(&retried_, [&](PgConnection& c) -> Result<int> {
    auto res = c.Exec(kPurgeKeys, {impl_->Now(), P(older_than.count()), P(int64_t{limit})});
    if (!res.ok()) return res.status();
    return std::atoi(PQcmdTuples(res.value().get()));
  });
}

namespace {

// The booking found, if any and if it is the customer's (or kAnyCustomer's).
Result<Booking> BookingOf(std::optional<Booking> found, int64_t booking_id, int64_t customer_id) {
  if (!found || (customer_id != Store::kAnyCustomer && found->customer_id != customer_id)) {
    return BookingNotFound(booking_id);
  }
  return std::move(*found);
}

}  // namespace

Result<Booking> PgStore::GetBooking(int64_t booking_id, int64_t customer_id) {
  return impl_->Run<Booking>(&retried_, [&](PgConnection& c) -> Result<Booking> {
    auto res = c.Exec(kSelectBooking, {P(booking_id)});
    if (!res.ok()) return res.status();
    const PGresult* r = res.value().get();
    return BookingOf(PQntuples(r) == 0 ? std::nullopt : std::optional<Booking>(ReadBooking(r)),
                     booking_id, customer_id);
  });
}

io::asio::awaitable<Result<Booking>> PgStore::GetBookingAsync(int64_t booking_id,
                                                              int64_t customer_id) {
  Impl::LoopState* loop = impl_->Loop();
  if (!loop) co_return GetBooking(booking_id, customer_id);  // off the loops
  auto found = co_await loop->booking_reads.Get(booking_id);
  if (!found.ok()) co_return found.status();
  co_return BookingOf(std::move(found.value()), booking_id, customer_id);
}

Result<std::vector<Booking>> PgStore::ClaimStaleCheckouts(Millis older_than, Millis lease,
                                                          int limit) {
  return impl_->Run<std::vector<Booking>>(
      &retried_, [&](PgConnection& c) -> Result<std::vector<Booking>> {
        auto claimed = c.Exec(kClaimStale, {impl_->Now(), P(older_than.count()), P(lease.count()),
                                            P(int64_t{limit})});
        if (!claimed.ok()) return claimed.status();
        std::vector<Booking> out;
        for (int i = 0; i < PQntuples(claimed.value().get()); ++i) {
          auto b = c.Exec(kSelectBooking, {P(Int(claimed.value().get(), i, 0))});
          if (!b.ok()) return b.status();
          if (PQntuples(b.value().get()) == 1) out.push_back(ReadBooking(b.value().get()));
        }
        return out;
      });
}

Status PgStore::ReleaseCheckoutClaims(const std::vector<int64_t>& booking_ids) {
  if (booking_ids.empty()) return Status::Ok();
  auto r = impl_->Run<bool>(&retried_, [&](PgConnection& c) -> Result<bool> {
    auto res = c.Exec(kReleaseClaims, {IntArrayLiteral(booking_ids)});
    if (!res.ok()) return res.status();
    return true;
  });
  return r.ok() ? Status::Ok() : r.status();
}

Result<bool> PgStore::AbandonCheckout(int64_t booking_id) {
  return impl_->InTx<bool>(&retried_, [&](PgConnection& c) {
    PgMoneyTx tx(c, impl_->Now());
    return AbandonCheckoutIn(tx, booking_id);
  });
}

}  // namespace boxoffice
