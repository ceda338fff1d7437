// Reconciler: settles checkouts whose callback never came (the seeds' section 8, case 3).
//
// Every round it claims PENDING bookings whose payment session has ended, or older than
// `older_than` (a lease, not an open transaction, so the gateway call holds no lock and
// other instances skip them), asks the gateway about each session and applies the same
// rules as the callback: PAID settles as a success (confirmed, or failed and refunded if
// late), FAILED as a failure, EXPIRED (or no session at all) abandons the checkout. Asking
// as soon as the session ended matters: the hold outlives its payment session by a margin
// (API.md, Checkout), so a payment whose callback was lost still confirms its seats. OPEN
// sessions, gateway errors and a PAID answer without a payment id wait for the lease to
// run out and a later round; a gateway that does not answer ends the round at once, so an
// outage never holds the reconciler in timeouts, one booking after another.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "core/metrics.h"
#include "jobs/periodic.h"
#include "payments/gateway.h"
#include "payments/settlement.h"
#include "store/checkout_store.h"

namespace boxoffice {

struct ReconcilerOptions {
  Millis interval{60'000};     // --reconcile-interval
  Millis older_than{900'000};  // --reconcile-after: API.md asks again 15 minutes after checkout
  Millis lease{60'000};        // a claimed booking is left to this instance for this long
  int batch_limit = 100;       // bookings per round
};

class Reconciler {
 public:
  // payments: settles what the gateway answers, as it settles a callback.
  // labels: the shard's (shard="N"), on the gauges of its rounds; empty for one database.
  Reconciler(CheckoutStore* store, Gateway* gateway, PaymentService* payments, ReconcilerOptions options,
             Metrics* metrics, const std::string& labels = "");
  ~Reconciler();  // stops and joins

  // One round now: how many bookings were settled or abandoned.
  Result<int> RunOnce();
  void Start();
  void Stop();

 private:
  void Count(const std::string& outcome, uint64_t by = 1);

  CheckoutStore* store_;
  Gateway* gateway_;
  PaymentService* payments_;
  ReconcilerOptions options_;
  Metrics* metrics_;
  // The last round, for the gauges (alert ReconcilerBehind, deploy/prometheus/alerts.yml):
  // how many checkouts it claimed, and when the last round that could read the database
  // ended. Shared with the gauges, which may be read after this is gone.
  struct Rounds {
    std::atomic<int64_t> claimed{0};
    std::atomic<int64_t> last_ok_unix_ms{0};
  };
  std::shared_ptr<Rounds> rounds_;
  Periodic periodic_;
};

}  // namespace boxoffice
