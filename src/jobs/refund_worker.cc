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
  thread_ = std::thread([this] {
    std::unique_lock lock(mu_);
    while (!cv_.wait_for(lock, interval_, [this] { return stop_; })) {
      lock.unlock();
      if (auto r = RunOnce(); !r.ok())
        LogWarn("refund round failed", {{"error", r.status().message()}});
      lock.lock();
    }
  });
}

void RefundWorker::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace boxoffice
