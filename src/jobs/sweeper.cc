#include "jobs/sweeper.h"

#include "core/log.h"

namespace boxoffice {

Sweeper::Sweeper(Store* store, Millis interval, int batch_limit, Metrics* metrics)
    : store_(store),
      interval_(interval),
      batch_limit_(batch_limit),
      released_(metrics->GetCounter("boxoffice_sweeper_released_seats_total",
                                    "Expired held seats freed by the sweeper.")),
      errors_(metrics->GetCounter("boxoffice_sweeper_errors_total", "Sweeper runs that failed.")) {}

Sweeper::~Sweeper() { Stop(); }

Result<int> Sweeper::RunOnce() {
  int total = 0;
  for (int batch = 0; batch < kMaxBatchesPerRun; ++batch) {
    auto freed = store_->SweepExpired(batch_limit_);
    if (!freed.ok()) {
      errors_.Inc();
      return freed.status();
    }
    total += freed.value();
    released_.Inc(static_cast<uint64_t>(freed.value()));
    if (freed.value() < batch_limit_) break;
  }
  return total;
}

void Sweeper::Start() {
  thread_ = std::thread([this] {
    std::unique_lock lock(mu_);
    while (!cv_.wait_for(lock, interval_, [this] { return stop_; })) {
      lock.unlock();
      auto freed = RunOnce();
      if (!freed.ok()) {
        LogWarn("sweep failed", {{"error", freed.status().message()}});
      } else if (freed.value() > 0) {
        LogInfo("expired holds swept", {{"seats", freed.value()}});
      }
      lock.lock();
    }
  });
}

void Sweeper::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace boxoffice
