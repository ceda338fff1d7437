#include "jobs/refund_worker.h"

#include "core/log.h"

namespace boxoffice {

RefundWorker::RefundWorker(Store* store, Gateway* gateway, Millis interval, int batch_limit,
                           Metrics* metrics)
    : store_(store),
      gateway_(gateway),
      interval_(interval),
      batch_limit_(batch_limit),
      issued_(metrics->GetCounter("boxoffice_refunds_issued_total",
                                  "Refunds accepted by the gateway.")),
      failed_(metrics->GetCounter("boxoffice_refund_attempts_failed_total",
                                  "Refund attempts the gateway did not accept (retried).")) {}

RefundWorker::~RefundWorker() { Stop(); }

Result<int> RefundWorker::RunOnce() {
  auto pending = store_->PendingRefunds(batch_limit_);
  if (!pending.ok()) return pending.status();
  int done = 0;
  for (const Refund& r : pending.value()) {
    auto accepted = gateway_->Refund(r.payment_id, r.amount.amount, r.refund_id);
    if (!accepted.ok()) {
      failed_.Inc();
      LogWarn("refund not accepted yet",
              {{"refundId", r.refund_id}, {"error", accepted.status().message()}});
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
