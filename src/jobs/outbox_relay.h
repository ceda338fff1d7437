// OutboxRelay: delivers outbox rows to an EventSink, in id order, at least once.
//
// Each round reads up to batch_limit unpublished rows, delivers them, then marks them
// published. A failure anywhere leaves the rows unpublished for the next round, so events
// may be delivered twice (consumers dedupe on the event id) but never lost. A round that
// found a full batch runs again at once; otherwise the relay sleeps `interval`.
//
// Several instances may run a relay: each round first takes or renews the store lease
// "outbox" (kLease), so one relay at a time drains it, in order; when its instance dies,
// another takes over once the lease runs out. The lease must outlast the sink's longest
// delivery (EventSink::MaxDeliveryTime, asserted), so a live relay delivers only within its
// lease; and the mark is fenced by the lease (OutboxStore::MarkEventsPublished): a relay that
// lost its lease anyway (paused, its clock behind) marks nothing and stops, leaving the
// rows to the new holder. The cost of such a loss is duplicates, never loss.
#pragma once

#include <atomic>
#include <memory>

#include "core/metrics.h"
#include "events/event_sink.h"
#include "jobs/periodic.h"
#include "store/outbox_store.h"

namespace boxoffice {

class OutboxRelay {
 public:
  static constexpr Millis kLease{15'000};
  static constexpr const char* kLeaseName = "outbox";

  // clock: what the lag gauge measures against (the system clock when null).
  // lease: how long a round's claim on the outbox lasts (kLease by default).
  // metric_labels: the lag gauge's labels (`shard="1"` when each shard has a relay).
  OutboxRelay(OutboxStore* store, EventSink* sink, Millis interval, int batch_limit, Metrics* metrics,
              const Clock* clock = nullptr, Millis lease = kLease,
              const std::string& metric_labels = "");
  ~OutboxRelay();  // stops and joins

  // One round now: how many events were delivered and marked, or the first error.
  Result<int> RunOnce();
  void Start();
  void Stop();

 private:
  OutboxStore* store_;
  EventSink* sink_;
  Millis interval_;
  int batch_limit_;
  Counter& published_;
  Counter& errors_;
  const std::string owner_;  // this relay's name in the lease
  const Millis lease_;
  // created_at (epoch ms) of the oldest event not delivered as of the last round; 0: none.
  // Shared with the lag gauge, which may be read after the relay is gone.
  std::shared_ptr<std::atomic<int64_t>> oldest_pending_ms_;
  Periodic periodic_;
};

}  // namespace boxoffice
