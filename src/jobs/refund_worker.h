// RefundWorker: gives money back until the gateway has accepted every refund intent.
//
// Refund intents are rows written in the transaction that decided them (a late or
// mismatched payment, a payment for nothing we sold). Each round asks the gateway to
// refund up to batch_limit of them, with the refund id as idempotency key, so a refund
// retried after a crash or a timeout is never issued twice; each accepted one is completed
// in the store (booking REFUNDED, BookingRefunded event). Failures wait for the next round.
#pragma once

#include "core/metrics.h"
#include "jobs/periodic.h"
#include "payments/gateway.h"
#include "store/store.h"

namespace boxoffice {

class RefundWorker {
 public:
  RefundWorker(Store* store, Gateway* gateway, Millis interval, int batch_limit, Metrics* metrics);
  ~RefundWorker();  // stops and joins

  // One round now: refunds completed, or the error that stopped reading them.
  Result<int> RunOnce();
  void Start();
  void Stop();

 private:
  Store* store_;
  Gateway* gateway_;
  Millis interval_;
  int batch_limit_;
  Counter& issued_;
  Counter& failed_;
  Periodic periodic_;
};

}  // namespace boxoffice
