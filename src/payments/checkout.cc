#include "payments/checkout.h"

#include <csignal>
#include <nlohmann/json.hpp>

#include "core/log.h"
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

bool IsValidIdempotencyKey(const std::string& key) {
  if (key.empty() || key.size() > 255) return false;
  for (unsigned char c : key) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

CheckoutService::CheckoutService(Store* store, Gateway* gateway, CheckoutOptions options,
                                 Metrics* metrics, SeatGate* gate)
    : store_(store),
      gateway_(gateway),
      options_(std::move(options)),
      metrics_(metrics),
      gate_(gate),
      callback_url_(options_.callback_url) {}

void CheckoutService::SetCallbackUrl(std::string url) {
  std::lock_guard lock(callback_mu_);
  callback_url_ = std::move(url);
}

std::string CheckoutService::CallbackUrl() const {
  std::lock_guard lock(callback_mu_);
  return callback_url_;
}

void CheckoutService::MaybeCrash(const char* point) const {
  if (options_.crash_at != point) return;
  LogWarn("checkout fault injection: killing the process", {{"point", point}});
  std::raise(SIGKILL);
}

Result<CheckoutResponse> CheckoutService::Checkout(int64_t customer_id,
                                                   const std::string& idempotency_key,
                                                   const std::string& hold_id) {
  auto count = [this](const char* outcome) {
    metrics_
        ->GetCounter("boxoffice_checkouts_total", "Checkout requests by outcome.",
                     std::string("outcome=\"") + outcome + "\"")
        .Inc();
  };
  // Phase 1: claim the key, or find the response to replay.
  auto record = store_->ClaimCheckoutKey(IdempotencyKey{customer_id, idempotency_key, hold_id},
                                         options_.key_lease);
  if (!record.ok()) {
    count(record.status().code() == Code::kInProgress ? "in_progress" : "refused");
    return record.status();
  }
  if (record->phase == KeyPhase::kFinished) {
    count("replayed");
    return CheckoutResponse{record->response_status, record->response_body, true};
  }
  const KeyLock lock = record->lock();
  MaybeCrash("claimed");

  // Phase 2: the booking, or the one a request that died before us recorded.
  Result<Booking> booking = Status(Code::kInternal, "no booking");
  if (record->phase == KeyPhase::kStarted) {
    booking = store_->StartCheckout(lock, hold_id, options_.hold_ttl, options_.hold_max_lifetime);
  } else {
    booking = store_->GetBooking(record->booking_id, customer_id);
    if (booking.ok() && booking->status != BookingStatus::kPending) {
      booking = Status(Code::kNotActive, "the checkout was abandoned");
    }
  }
  if (!booking.ok()) {
    // Nothing of this request is left but the key: drop it so a retry starts afresh.
    if (booking.status().code() != Code::kInProgress) {
      if (Status s = store_->AbortCheckout(lock); !s.ok()) {
        LogWarn("checkout key not dropped", {{"error", s.message()}});
      }
    }
    count("refused");
    return booking.status();
  }
  MaybeCrash("booked");

  // The session ends payment_ttl after checkout, and never later than the hold's expiry
  // minus the margin (hold_ttl - payment_ttl): a hold extended near its lifetime cap ends
  // sooner than checkout + payment_ttl, and a payment after the hold ended is refunded.
  // Both instants come from the store's clock (created_at, the re-armed expiry).
  const std::optional<Instant> hold_ends =
      booking->hold_expires_at ? booking->hold_expires_at : record->hold_expiry_after;
  BOX_ASSERT(hold_ends.has_value());  // a started checkout knows its hold's expiry
  const Instant expires_at = std::min(booking->created_at + options_.payment_ttl,
                                      *hold_ends - (options_.hold_ttl - options_.payment_ttl));
  if (expires_at - booking->created_at < std::min(kMinPaymentWindow, options_.payment_ttl / 2)) {
    if (Status s = store_->AbortCheckout(lock); !s.ok()) {
      LogWarn("checkout not undone", {{"bookingId", booking->id}, {"error", s.message()}});
    }
    count("too_late");
    return Status(Code::kNotActive,
                  "the hold ends too soon to pay for it: hold the seats again");
  }

  // Phase 3: the gateway session, outside any transaction. The booking id as idempotency
  // key makes a retry after a crash find the session the first attempt opened.
  auto session = gateway_->CreateSession(booking->amount.amount, booking->amount.currency,
                                         std::to_string(booking->id), CallbackUrl(), expires_at,
                                         "checkout-" + std::to_string(booking->id));
  if (!session.ok()) {
    LogWarn("payment session not opened; checkout undone",
            {{"bookingId", booking->id}, {"error", session.status().message()}});
    if (Status s = store_->AbortCheckout(lock); !s.ok()) {
      // The key stays claimed; its lease runs out and a retry carries on from phase 3.
      LogWarn("checkout not undone", {{"bookingId", booking->id}, {"error", s.message()}});
    }
    count("gateway_unavailable");
    return Status(Code::kUnavailable, "payment gateway unavailable: " + session.status().message());
  }
  MaybeCrash("session");

  // Phase 4: attach the session and store the response, in one transaction.
  CheckoutResponse response{201, CheckoutJson(booking.value(), session.value(), expires_at), false};
  auto finished = store_->FinishCheckout(lock, session->session_id, session->url, expires_at,
                                         response.status, response.body);
  if (!finished.ok()) {
    count(finished.status().code() == Code::kInProgress ? "in_progress" : "error");
    return finished.status();
  }
  if (!finished.value()) {
    count("refused");
    return Status(Code::kNotActive, "the checkout was abandoned");
  }
  count("created");
  // The gate's keys follow the hold's new expiry. Until now they ended earlier than the
  // hold, which only ever lets the store decide; after an undo they already match.
  if (gate_ && booking->hold_expires_at) {
    gate_->Rearm(
        booking->showtime_id, booking->seats, booking->hold_id,
        std::chrono::duration_cast<Millis>(*booking->hold_expires_at - SystemClock().Now()));
  }
  LogInfo("checkout created",
          {{"bookingId", booking->id}, {"holdId", hold_id}, {"sessionId", session->session_id}});
  return response;
}

}  // namespace boxoffice
