#include "jobs/refund_worker.h"

#include "core/log.h"
#include "core/status.h"
#include "core/text.h"

namespace boxoffice {

RefundWorker::RefundWorker(PaymentStore* store, Gateway* gateway, Millis interval, int batch_limit,
                           Metrics* metrics, const std::string& metric_labels)
    : store_(store),
      gateway_(gateway),
      interval_(interval),
      batch_limit_(batch_limit),
      issued_(metrics->GetCounter("boxoffice_refunds_issued_total",
                                  "Refunds accepted by the gateway.")),
      failed_(metrics->GetCounter("boxoffice_refund_attempts_failed_total",
                                  "Refund attempts the gateway did not accept (retried).")) {
  BOX_ASSERT(batch_limit_ >= 1 && interval_ > Millis(0));  // the service's constants
  backlog_gauge_ = metrics->AddCollector(
      "boxoffice_refunds_backlog", "Refunds the gateway has yet to accept, by state.",
      [this, prefix = metric_labels.empty() ? "" : metric_labels + ","](Metrics::Samples* out) {
        out->emplace_back(prefix + "state=\"retrying\"", static_cast<double>(retrying_.load()));
        out->emplace_back(prefix + "state=\"refused\"", static_cast<double>(refused_.load()));
      });
  cancelled_gauge_ = metrics->AddCollector(
      "boxoffice_cancelled_showtime_refunds",
      "Refunds of the bookings of each showtime cancelled in the last day, by state.",
      [this, prefix = metric_labels.empty() ? "" : metric_labels + ","](Metrics::Samples* out) {
        MutexLock lock(cancelled_mu_);
        for (const CancelledShowtimeRefunds& c : cancelled_) {
          const std::string showtime =
              prefix + "showtime=\"" + std::to_string(c.showtime_id) + "\",";
          out->emplace_back(showtime + "state=\"issued\"", static_cast<double>(c.refunds.issued));
          out->emplace_back(showtime + "state=\"pending\"", static_cast<double>(c.refunds.pending));
          out->emplace_back(showtime + "state=\"refused\"", static_cast<double>(c.refunds.refused));
        }
      });
}

namespace {
constexpr size_t kMaxErrorBytes = 500;  // of a refusal's text kept with the refund
}  // namespace

Millis RefundWorker::Backoff(int attempts) {
  Millis wait = kFirstRetry;
  for (int i = 1; i < attempts && wait < kMaxRetry; ++i) wait *= 2;
  const Millis backoff = std::min(wait, kMaxRetry);
  // Whatever count a refund row carries: 1 s to the 10-minute cap, never 0, never past it.
  BOX_ASSERT(backoff >= kFirstRetry && backoff <= kMaxRetry);
  return backoff;
}

RefundWorker::~RefundWorker() { Stop(); }

Result<int> RefundWorker::RunOnce() {
  auto pending = store_->PendingRefunds(batch_limit_);
  if (!pending.ok()) return pending.status();
  BOX_ASSERT(pending->size() <= static_cast<size_t>(batch_limit_));  // the statement's LIMIT
  int done = 0;
  for (const Refund& r : pending.value()) {
    auto accepted = gateway_->Refund(r.payment_id, r.amount.amount, r.refund_id);
    if (!accepted.ok()) {
      failed_.Inc();
      // kUnavailable: the gateway did not answer or failed (5xx); anything else is its
      // refusal, which it will not take back by itself.
      const bool refused = accepted.status().code() != Code::kUnavailable;
      const Millis wait = Backoff(r.attempts + 1);
      LogWarn(refused ? "refund refused by the gateway" : "refund not accepted yet",
              {{"refundId", r.refund_id},
               {"attempt", r.attempts + 1},
               {"nextAttemptInMs", wait.count()},
               {"error", accepted.status().message()}});
      // The gateway's words may be any bytes: stored as clean text, bounded.
      if (Status s = store_->RefundAttemptFailed(
              r.refund_id, refused, CleanTextPrefix(accepted.status().message(), kMaxErrorBytes),
              wait);
          !s.ok()) {
        LogWarn("refund attempt not recorded", {{"refundId", r.refund_id}, {"error", s.message()}});
      }
      // The gateway is down or slow: the rest of the batch would only wait out timeouts.
      if (!refused) break;
      continue;
    }
    if (Status s = store_->CompleteRefund(r.refund_id, accepted.value()); !s.ok()) {
      LogWarn("refund accepted but not recorded yet",
              {{"refundId", r.refund_id}, {"error", s.message()}});
      continue;
    }
    issued_.Inc();
    LogInfo("refund issued",
            {{"refundId", r.refund_id}, {"paymentId", r.payment_id}, {"bookingId", r.booking_id}});
    ++done;
  }
  if (auto backlog = store_->CountRefundBacklog(); backlog.ok()) {
    retrying_ = backlog->retrying;
    refused_ = backlog->refused;
    MutexLock lock(cancelled_mu_);
    cancelled_ = std::move(backlog->cancelled);
  }
  return done;
}

void RefundWorker::Start() {
  periodic_.Start(interval_, [this] {
    if (auto r = RunOnce(); !r.ok())
      LogWarn("refund round failed", {{"error", r.status().message()}});
    return false;  // failures are retried next round, not in a tight loop
  });
}

void RefundWorker::Stop() { periodic_.Stop(); }

}  // namespace boxoffice
