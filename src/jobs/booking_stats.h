// BookingStats: the gauge boxoffice_bookings{status} of /metrics (API.md Operations:
// "bookings by status"), the bookings made in the last 24 hours in each status.
//
// Counting runs every `interval` on its own thread, never on a scrape, so /metrics costs
// nothing however often it is read; the 24-hour window (by an index on created_at) keeps
// each count bounded however large the booking table grows.
#pragma once

#include <array>
#include <atomic>
#include <memory>

#include "core/metrics.h"
#include "jobs/periodic.h"
#include "store/payment_store.h"

namespace boxoffice {

class BookingStats {
 public:
  static constexpr Millis kWindow{24 * 3'600'000};

  BookingStats(PaymentStore* store, Millis interval, Metrics* metrics);
  ~BookingStats();

  // One count now.
  Status RunOnce();
  void Start();
  void Stop();

 private:
  PaymentStore* store_;
  Millis interval_;
  // By BookingStatus; shared with the gauges, which may be read after this is gone.
  std::shared_ptr<std::array<std::atomic<int64_t>, 4>> counts_;
  Periodic periodic_;
};

}  // namespace boxoffice
