// EventSink: where the outbox relay delivers booking events (API.md "Events").
//
// Deliver returns OK only once every event of the batch is durable at the sink; the relay
// marks rows published only after that, so delivery is at least once: a crash between the
// two delivers the batch again, and consumers dedupe on the event id. Implementations:
// FileSink (embedded profile, JSON lines); Kafka comes with the production profile.
#pragma once

#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "domain/booking.h"

namespace boxoffice {

class EventSink {
 public:
  virtual ~EventSink() = default;
  // Delivers events in the given order. Each shard's relay may call it: implementations
  // take one call at a time (each relay's events stay in its outbox's order). Returns within
  // MaxDeliveryTime(), whatever the sink does.
  virtual Status Deliver(const std::vector<OutboxEvent>& events) = 0;
  // The longest one Deliver call may take. The relay's lease must outlast it, so a relay
  // never delivers after another has taken the outbox over.
  virtual Millis MaxDeliveryTime() const = 0;
};

}  // namespace boxoffice
