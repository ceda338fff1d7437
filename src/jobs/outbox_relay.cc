#include "jobs/outbox_relay.h"

#include <algorithm>

#include "core/crypto.h"
#include "core/log.h"
#include "core/status.h"

namespace boxoffice {

OutboxRelay::OutboxRelay(OutboxStore* store, EventSink* sink, Millis interval, int batch_limit,
                         Metrics* metrics, const Clock* clock, Millis lease,
                         const std::string& metric_labels)
    : store_(store),
      sink_(sink),
      interval_(interval),
      batch_limit_(batch_limit),
      published_(metrics->GetCounter("boxoffice_outbox_published_total",
                                     "Outbox events delivered to the sink.")),
      errors_(
          metrics->GetCounter("boxoffice_outbox_errors_total", "Outbox relay rounds that failed.")),
      owner_(NewUuid()),
      lease_(lease),
      oldest_pending_ms_(std::make_shared<std::atomic<int64_t>>(0)) {
  // A delivery must end while its lease runs (fenced marks catch what slips through).
  BOX_ASSERT(lease_ > sink_->MaxDeliveryTime());
  // kRelayBatchLimit, or `relay --batch` (1..10,000, its flag check); a constant interval.
  BOX_ASSERT(batch_limit_ >= 1 && interval_ > Millis(0));
  metrics->AddGauge(
      "boxoffice_outbox_lag_seconds",
      "Age of the oldest outbox event not yet delivered as of the relay's last round (0: none).",
      [oldest = oldest_pending_ms_, clock] {
        const int64_t ms = oldest->load();
        if (ms == 0) return 0.0;
        const Instant now = clock ? clock->Now() : SystemClock().Now();
        return std::max(0.0, static_cast<double>(ToEpochMs(now) - ms) / 1000.0);
      },
      metric_labels);
}

OutboxRelay::~OutboxRelay() {
  Stop();
  // A relay that stops cleanly hands the outbox over at once rather than after kLease.
  (void)store_->AcquireLease(kLeaseName, owner_, Millis(-1));
}

Result<int> OutboxRelay::RunOnce() {
  auto leased = store_->AcquireLease(kLeaseName, owner_, lease_);
  if (!leased.ok()) return leased.status();
  if (!leased.value()) return 0;  // another instance's relay drains the outbox
  auto events = store_->PendingEvents(0, batch_limit_);
  if (!events.ok()) return events.status();
  if (events->empty()) {
    oldest_pending_ms_->store(0);
    return 0;
  }
  // The statement's LIMIT: a delivery is never larger than the batch the lease was sized for.
  BOX_ASSERT(events->size() <= static_cast<size_t>(batch_limit_));
  oldest_pending_ms_->store(ToEpochMs(events->front().created_at));
  if (Status s = sink_->Deliver(events.value()); !s.ok()) return s;
  std::vector<int64_t> ids;
  for (const auto& e : events.value()) ids.push_back(e.id);
  if (Status s = store_->MarkEventsPublished(ids, kLeaseName, owner_); !s.ok()) {
    if (s.code() == Code::kNotActive) {
      LogWarn("outbox lease lost during delivery: the rows are left to its new holder",
              {{"events", ids.size()}});
    }
    return s;
  }
  published_.Inc(ids.size());
  if (ids.size() < static_cast<size_t>(batch_limit_)) oldest_pending_ms_->store(0);
  return static_cast<int>(ids.size());
}

void OutboxRelay::Start() {
  periodic_.Start(interval_, [this] {
    auto done = RunOnce();
    if (!done.ok()) {
      errors_.Inc();
      LogWarn("outbox relay round failed", {{"error", done.status().message()}});
      return false;
    }
    return done.value() == batch_limit_;
  });
}

void OutboxRelay::Stop() { periodic_.Stop(); }

}  // namespace boxoffice
