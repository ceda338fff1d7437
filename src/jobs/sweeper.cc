#include "jobs/sweeper.h"

#include <algorithm>
#include <map>

#include "core/log.h"
#include "core/status.h"

namespace boxoffice {

Sweeper::Sweeper(Store* store, Millis interval, int batch_limit, Metrics* metrics,
                 Listener on_freed)
    : store_(store),
      on_freed_(std::move(on_freed)),
      interval_(interval),
      batch_limit_(batch_limit),
      released_(metrics->GetCounter("boxoffice_sweeper_released_seats_total",
                                    "Expired held seats freed by the sweeper.")),
      keys_purged_(metrics->GetCounter("boxoffice_idempotency_keys_purged_total",
                                       "Checkout idempotency keys deleted after 24 hours.")),
      errors_(metrics->GetCounter("boxoffice_sweeper_errors_total", "Sweeper runs that failed.")) {
  // --sweep-interval is checked positive (ServeFlagsError); the batch is a constant.
  BOX_ASSERT(store_ != nullptr && batch_limit_ >= 1 && interval_ > Millis(0));
}

Sweeper::~Sweeper() { Stop(); }

Result<int> Sweeper::RunOnce() {
  int total = 0;
  for (int batch = 0; batch < kMaxBatchesPerRun; ++batch) {
    std::vector<SeatRef> seats;
    auto freed = store_->SweepExpired(batch_limit_, on_freed_ ? &seats : nullptr);
    if (!freed.ok()) {
      errors_.Inc();
      return freed.status();
    }
    if (on_freed_ && !seats.empty()) {
      std::map<int64_t, std::vector<std::string>> by_showtime;
      for (auto& seat : seats) by_showtime[seat.showtime_id].push_back(std::move(seat.code));
      for (auto& [showtime_id, codes] : by_showtime) {
        std::sort(codes.begin(), codes.end());
        on_freed_(showtime_id, std::move(codes));
      }
    }
    BOX_ASSERT(freed.value() >= 0);  // a count of rows
    total += freed.value();
    released_.Inc(static_cast<uint64_t>(freed.value()));
    if (freed.value() < batch_limit_) break;
  }
  for (int batch = 0; batch < kMaxBatchesPerRun; ++batch) {
    auto purged = store_->PurgeCheckoutKeys(kKeyRetention, batch_limit_);
    if (!purged.ok()) {
      errors_.Inc();
      return purged.status();
    }
    keys_purged_.Inc(static_cast<uint64_t>(purged.value()));
    if (purged.value() < batch_limit_) break;
  }
  return total;
}

void Sweeper::Start() {
  periodic_.Start(interval_, [this] {
    auto freed = RunOnce();
    if (!freed.ok()) {
      LogWarn("sweep failed", {{"error", freed.status().message()}});
    } else if (freed.value() > 0) {
      LogInfo("expired holds swept", {{"seats", freed.value()}});
    }
    return false;  // RunOnce already drains up to kMaxBatchesPerRun batches
  });
}

void Sweeper::Stop() { periodic_.Stop(); }

}  // namespace boxoffice
