// DatabaseProbe: the gauge boxoffice_database_up of /metrics, one series per database
// (shard="N" on shards), 1 while it answers pings and 0 once it has not for three rounds.
// The alert "a shard down" (deploy/prometheus/alerts.yml, DatabaseDown) reads it.
//
// It pings every `interval` on its own thread, never on a scrape. The gauge is computed at
// the scrape from when the last ping succeeded, not from the last answer: a ping that hangs
// (a server gone without a reset, packets dropped) still turns the gauge to 0.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "core/metrics.h"
#include "jobs/periodic.h"
#include "store/store.h"

namespace boxoffice {

class DatabaseProbe {
 public:
  // The gauge reads 0 once no ping succeeded for this many intervals.
  static constexpr int kMissedRounds = 3;

  // labels: the database's (shard="N"), or empty for the one database.
  DatabaseProbe(Store* store, Millis interval, Metrics* metrics, const std::string& labels);
  ~DatabaseProbe();

  // One ping now: its answer (the gauge follows when it succeeds).
  Status RunOnce();
  void Start();
  void Stop();

 private:
  Store* store_;
  Millis interval_;
  // When the last ping succeeded (steady clock, ms); shared with the gauge, which may be
  // read after this is gone.
  std::shared_ptr<std::atomic<int64_t>> last_ok_ms_;
  Periodic periodic_;
};

}  // namespace boxoffice
