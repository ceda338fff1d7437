#include "jobs/outbox_relay.h"

#include "core/log.h"

namespace boxoffice {

OutboxRelay::OutboxRelay(Store* store, EventSink* sink, Millis interval, int batch_limit,
                         Metrics* metrics)
    : store_(store),
      sink_(sink),
      interval_(interval),
      batch_limit_(batch_limit),
      published_(metrics->GetCounter("boxoffice_outbox_published_total",
                                     "Outbox events delivered to the sink.")),
      errors_(metrics->GetCounter("boxoffice_outbox_errors_total",
                                  "Outbox relay rounds that failed.")) {}

OutboxRelay::~OutboxRelay() { Stop(); }

Result<int> OutboxRelay::RunOnce() {
  auto events = store_->PendingEvents(0, batch_limit_);
  if (!events.ok()) return events.status();
  if (events->empty()) return 0;
  if (Status s = sink_->Deliver(events.value()); !s.ok()) return s;
  std::vector<int64_t> ids;
  for (const auto& e : events.value()) ids.push_back(e.id);
  if (Status s = store_->MarkEventsPublished(ids); !s.ok()) return s;
  published_.Inc(ids.size());
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
