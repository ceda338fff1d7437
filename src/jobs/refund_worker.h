// RefundWorker: gives money back until the gateway has accepted every refund intent.
//
// Refund intents are rows written in the transaction that decided them (a late or
// mismatched payment, a payment for nothing we sold). Each round asks the gateway to
// refund up to batch_limit of those due, with the refund id as idempotency key, so a
// refund retried after a crash or a timeout is never issued twice; each accepted one is
// completed in the store (booking REFUNDED, BookingRefunded event).
//
// Each refund the gateway does not accept waits its own exponential backoff (kFirstRetry,
// doubled per attempt, capped at kMaxRetry), recorded in the store on its clock, so a
// refund the gateway keeps refusing never takes a later one's turn and is asked (and
// logged) once per backoff step, not every round. A refusal (a 4xx answer: the gateway
// will not change its mind by itself) is kept aside: counted in /metrics
// (boxoffice_refunds_backlog{state="refused"}) for an operator, and still retried every
// kMaxRetry, because money must go back. A gateway that does not answer ends the round.
//
// Each round also reads the refund progress of the showtimes cancelled in the last day
// (RefundBacklog::cancelled, bounded per database) for /metrics:
// boxoffice_cancelled_showtime_refunds{showtime="42",state="issued|pending|refused"}.
#pragma once

#include <atomic>
#include <vector>

#include "core/metrics.h"
#include "core/sync.h"
#include "jobs/periodic.h"
#include "payments/gateway.h"
#include "store/payment_store.h"

namespace boxoffice {

class RefundWorker {
 public:
  static constexpr Millis kFirstRetry{1'000};
  static constexpr Millis kMaxRetry{600'000};  // API.md: backoff capped at 10 minutes
  // The wait after `attempts` failed attempts.
  static Millis Backoff(int attempts);

  // metric_labels: put before the backlog gauge's state label (`shard="1"` per shard).
  RefundWorker(PaymentStore* store, Gateway* gateway, Millis interval, int batch_limit,
               Metrics* metrics, const std::string& metric_labels = "");
  ~RefundWorker();  // stops and joins

  // One round now: refunds completed, or the error that stopped reading them.
  Result<int> RunOnce();
  void Start();
  void Stop();

 private:
  PaymentStore* store_;
  Gateway* gateway_;
  Millis interval_;
  int batch_limit_;
  Counter& issued_;
  Counter& failed_;
  std::atomic<int64_t> retrying_{0};  // as of the last round, for /metrics
  std::atomic<int64_t> refused_{0};
  // Lock order: the collector's own lock (Metrics::Render runs a collector under it, not
  // under the registry's), then this one; RunOnce takes this one alone.
  Mutex cancelled_mu_;
  std::vector<CancelledShowtimeRefunds> cancelled_ BOX_GUARDED_BY(cancelled_mu_);
  Metrics::CollectorHandle backlog_gauge_;
  Metrics::CollectorHandle cancelled_gauge_;
  Periodic periodic_;
};

}  // namespace boxoffice
