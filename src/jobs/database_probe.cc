#include "jobs/database_probe.h"

#include <chrono>

#include "core/log.h"
#include "core/status.h"

namespace boxoffice {
namespace {
int64_t SteadyMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

DatabaseProbe::DatabaseProbe(Store* store, Millis interval, Metrics* metrics,
                             const std::string& labels)
    : store_(store),
      interval_(interval),
      last_ok_ms_(std::make_shared<std::atomic<int64_t>>(0)) {
  BOX_ASSERT(store_ != nullptr && interval_ > Millis(0));  // the service's constants
  // A database counts as up when the probe starts: the service opened and migrated it.
  *last_ok_ms_ = SteadyMillis();
  const int64_t stale_ms = kMissedRounds * interval_.count();
  metrics->AddGauge(
      "boxoffice_database_up",
      "1 while the database (each shard) answers pings, 0 once it has not for three rounds.",
      [last = last_ok_ms_, stale_ms] { return SteadyMillis() - last->load() <= stale_ms ? 1 : 0; },
      labels);
}

DatabaseProbe::~DatabaseProbe() { Stop(); }

Status DatabaseProbe::RunOnce() {
  Status s = store_->Ping();
  if (s.ok()) *last_ok_ms_ = SteadyMillis();
  return s;
}

void DatabaseProbe::Start() {
  periodic_.Start(interval_, [this] {
    if (Status s = RunOnce(); !s.ok()) LogWarn("database ping failed", {{"error", s.message()}});
    return false;
  });
}

void DatabaseProbe::Stop() { periodic_.Stop(); }

}  // namespace boxoffice
