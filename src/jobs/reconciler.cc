#include "jobs/reconciler.h"

#include "core/log.h"
#include "core/status.h"

namespace boxoffice {

Reconciler::Reconciler(CheckoutStore* store, Gateway* gateway, PaymentService* payments,
                       ReconcilerOptions options, Metrics* metrics)
    : store_(store), gateway_(gateway), payments_(payments), options_(options), metrics_(metrics) {
  // --reconcile-interval is checked positive (ServeFlagsError); the rest are constants.
  BOX_ASSERT(options_.batch_limit >= 1 && options_.lease > Millis(0) &&
             options_.interval > Millis(0));
}

Reconciler::~Reconciler() { Stop(); }

Result<int> Reconciler::RunOnce() {
  auto claimed =
      store_->ClaimStaleCheckouts(options_.older_than, options_.lease, options_.batch_limit);
  if (!claimed.ok()) return claimed.status();
  int settled = 0;
  const std::vector<Booking>& batch = claimed.value();
  BOX_ASSERT(batch.size() <= static_cast<size_t>(options_.batch_limit));  // the claim's LIMIT
  for (size_t i = 0; i < batch.size(); ++i) {
    const Booking& b = batch[i];
    std::string outcome;
    if (b.session_id.empty()) {
      // The checkout died before its session was recorded; nobody can pay for it now.
      auto r = store_->AbandonCheckout(b.id);
      if (!r.ok()) continue;
      outcome = "abandoned";
    } else {
      auto session = gateway_->GetSession(b.session_id);
      if (!session.ok()) {
        LogWarn("reconciler could not ask the gateway",
                {{"bookingId", b.id}, {"error", session.status().message()}});
        // The gateway is down or slow: every other question would wait out its timeouts
        // too. The round ends, and the bookings not asked are given back, first in line
        // for the next round, so one booking the gateway keeps failing on never holds the
        // others back (its own claim runs out as usual).
        if (session.status().code() == Code::kUnavailable) {
          std::vector<int64_t> unasked;
          for (size_t j = i + 1; j < batch.size(); ++j) unasked.push_back(batch[j].id);
          if (Status s = store_->ReleaseCheckoutClaims(unasked); !s.ok()) {
            LogWarn("reconciler claims not given back", {{"error", s.message()}});
          }
          break;
        }
        continue;
      }
      if (session->status == "FAILED" && session->payment_id.empty()) {
        // Failed without a payment to record: the checkout simply did not happen.
        auto r = store_->AbandonCheckout(b.id);
        if (!r.ok()) continue;
        outcome = "abandoned";
      } else if (session->status == "PAID" && session->payment_id.empty()) {
        // Paid, but the gateway did not say which payment: nothing can be recorded or
        // refunded without its id. Asked again next round (never taken as a duplicate).
        LogError("gateway says a session is paid but names no payment",
                 {{"bookingId", b.id}, {"sessionId", b.session_id}});
        Count("malformed_answer");
        continue;
      } else if (session->status == "PAID" || session->status == "FAILED") {
        // The answers without a payment id went their own ways above: a report has one.
        BOX_ASSERT(!session->payment_id.empty());
        auto r = payments_->Settle(
            PaymentReport{session->payment_id, b.session_id, std::to_string(b.id),
                          session->status == "PAID", b.amount.amount, b.amount.currency},
            "reconciler");
        if (!r.ok()) continue;
        outcome = SettlementName(r.value());
      } else if (session->status == "EXPIRED") {
        auto r = store_->AbandonCheckout(b.id);
        if (!r.ok()) continue;
        outcome = "abandoned";
      } else {
        continue;  // still OPEN: the customer may be paying right now
      }
    }
    ++settled;
    Count(outcome);
    LogInfo("checkout reconciled", {{"bookingId", b.id}, {"outcome", outcome}});
  }
  return settled;
}

void Reconciler::Count(const std::string& outcome) {
  metrics_
      ->GetCounter("boxoffice_reconciled_total",
                   "Checkouts the reconciler asked the gateway about, by outcome.",
                   "outcome=\"" + outcome + "\"")
      .Inc();
}

void Reconciler::Start() {
  periodic_.Start(options_.interval, [this] {
    if (auto r = RunOnce(); !r.ok())
      LogWarn("reconcile round failed", {{"error", r.status().message()}});
    return false;
  });
}

void Reconciler::Stop() { periodic_.Stop(); }

}  // namespace boxoffice
