#include "jobs/reconciler.h"

#include "core/clock.h"
#include "core/log.h"
#include "core/status.h"

namespace boxoffice {

namespace {
// The gauge's wall-clock time (not the store's clock, which tests move).
int64_t UnixMillisNow() { return ToEpochMs(SystemClock().Now()); }
}  // namespace

Reconciler::Reconciler(CheckoutStore* store, Gateway* gateway, PaymentService* payments,
                       ReconcilerOptions options, Metrics* metrics, const std::string& labels)
    : store_(store),
      gateway_(gateway),
      payments_(payments),
      options_(options),
      metrics_(metrics),
      rounds_(std::make_shared<Rounds>()) {
  // --reconcile-interval is checked positive (ServeFlagsError); the rest are constants.
  BOX_ASSERT(options_.batch_limit >= 1 && options_.lease > Millis(0) &&
             options_.interval > Millis(0));
  // Every outcome's series from the start at 0, so a rate over it works from the first
  // one (and the family is there for the dashboard before anything was reconciled).
  Count("abandoned", 0);
  Count("malformed_answer", 0);
  for (size_t i = 0; i <= static_cast<size_t>(Settlement::kOtherSession); ++i) {
    Count(SettlementName(static_cast<Settlement>(i)), 0);
  }
  // A job just started counts as having read the database now: its first round is an
  // interval away.
  rounds_->last_ok_unix_ms = UnixMillisNow();
  metrics_->AddGauge(
      "boxoffice_reconciler_claimed",
      "Checkouts the reconciler claimed in its last round; a round of "
      "boxoffice_reconciler_batch_limit means more were due.",
      [rounds = rounds_] { return static_cast<double>(rounds->claimed.load()); }, labels);
  metrics_->AddGauge(
      "boxoffice_reconciler_batch_limit", "Checkouts the reconciler claims in one round at most.",
      [limit = options_.batch_limit] { return static_cast<double>(limit); }, labels);
  metrics_->AddGauge(
      "boxoffice_reconciler_last_round_timestamp_seconds",
      "When the reconciler's last round that could read the database ended (Unix time).",
      [rounds = rounds_] { return static_cast<double>(rounds->last_ok_unix_ms.load()) / 1000.0; },
      labels);
}

Reconciler::~Reconciler() { Stop(); }

Result<int> Reconciler::RunOnce() {
  auto claimed =
      store_->ClaimStaleCheckouts(options_.older_than, options_.lease, options_.batch_limit);
  if (!claimed.ok()) return claimed.status();
  int settled = 0;
  const std::vector<Booking>& batch = claimed.value();
  BOX_ASSERT(batch.size() <= static_cast<size_t>(options_.batch_limit));  // the claim's LIMIT
  rounds_->claimed = static_cast<int64_t>(batch.size());
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
  rounds_->last_ok_unix_ms = UnixMillisNow();
  return settled;
}

void Reconciler::Count(const std::string& outcome, uint64_t by) {
  Counter& c = metrics_->GetCounter("boxoffice_reconciled_total",
                                    "Checkouts the reconciler asked the gateway about, by outcome.",
                                    "outcome=\"" + outcome + "\"");
  if (by > 0) c.Inc(by);
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
