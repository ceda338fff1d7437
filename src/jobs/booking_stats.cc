#include "jobs/booking_stats.h"

#include "core/log.h"
#include "core/status.h"

namespace boxoffice {

BookingStats::BookingStats(PaymentStore* store, Millis interval, Metrics* metrics)
    : store_(store),
      interval_(interval),
      counts_(std::make_shared<std::array<std::atomic<int64_t>, 4>>()) {
  BOX_ASSERT(store_ != nullptr && interval_ > Millis(0));  // the service's constant
  for (auto status : {BookingStatus::kPending, BookingStatus::kConfirmed, BookingStatus::kFailed,
                      BookingStatus::kRefunded}) {
    const size_t i = static_cast<size_t>(status);
    (*counts_)[i] = 0;
    metrics->AddGauge(
        "boxoffice_bookings", "Bookings made in the last 24 hours, by status.",
        [counts = counts_, i] { return static_cast<double>((*counts)[i].load()); },
        std::string("status=\"") + BookingStatusName(status) + "\"");
  }
}

BookingStats::~BookingStats() { Stop(); }

Status BookingStats::RunOnce() {
  auto counts = store_->CountRecentBookings(kWindow);
  if (!counts.ok()) return counts.status();
  for (size_t i = 0; i < counts_->size(); ++i) {
    auto it = counts->find(static_cast<BookingStatus>(i));
    (*counts_)[i] = it == counts->end() ? 0 : it->second;
  }
  return Status::Ok();
}

void BookingStats::Start() {
  periodic_.Start(interval_, [this] {
    if (Status s = RunOnce(); !s.ok()) LogWarn("booking count failed", {{"error", s.message()}});
    return false;
  });
}

void BookingStats::Stop() { periodic_.Stop(); }

}  // namespace boxoffice
