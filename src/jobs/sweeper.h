// Sweeper: tidies expired holds in the background (the seeds' ExpiredHoldSweeper).
//
// Correctness never depends on it: expiry is lazy in every statement. It only makes the
// stored state match what readers already see, in batches of at most batch_limit rows per
// statement and at most kMaxBatchesPerRun statements per run, so one run is bounded even
// after a long outage. Safe on many instances at once (the store's sweep is idempotent).
// It also deletes checkout idempotency keys older than kKeyRetention (API.md: kept 24 h).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/metrics.h"
#include "jobs/periodic.h"
#include "store/store.h"

namespace boxoffice {

class Sweeper {
 public:
  // A run ends after this many full batches; the rest waits for the next interval.
  static constexpr int kMaxBatchesPerRun = 100;
  static constexpr Millis kKeyRetention{24 * 3'600'000};

  // Told, per showtime, of the seats each run freed (for seat-change events).
  using Listener = std::function<void(int64_t showtime_id, std::vector<std::string> seats)>;

  Sweeper(Store* store, Millis interval, int batch_limit, Metrics* metrics,
          Listener on_freed = nullptr);
  ~Sweeper();  // stops and joins

  // One run now: returns the seats freed, or the first error.
  Result<int> RunOnce();
  void Start();
  void Stop();

 private:
  Store* store_;
  Listener on_freed_;
  Millis interval_;
  int batch_limit_;
  Counter& released_;
  Counter& keys_purged_;
  Counter& errors_;
  Periodic periodic_;
};

}  // namespace boxoffice
