// KafkaSink: the production profile's event sink (API.md "Events"; design article §8).
//
// Each event goes to topic `booking-events` with key = bookingId (so one booking's events
// share a partition and stay in order), headers `id` and `type`, and the event JSON as
// value. The producer is idempotent (enable.idempotence=true, hence acks=all and ordered
// retries), and Deliver returns OK only once the broker acknowledged every message of the
// batch: the relay marks rows published only then. A broker that is down makes Deliver
// fail after `delivery_timeout`; the rows wait and go out when it is back.
//
// A batch whose delivery reports are overdue (librdkafka still owes some past its own
// timeout) cannot be freed while reports may still point at it: it is kept aside and freed
// by a later Deliver once its last report came. At most kMaxOverdueBatches are kept; past
// that Deliver refuses to produce more until they drain, so memory stays bounded.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/sync.h"
#include "events/event_sink.h"

struct rd_kafka_s;

namespace boxoffice {

struct KafkaOptions {
  std::string brokers;  // HOST:PORT,…
  std::string topic = "booking-events";
  Millis delivery_timeout{10'000};  // per batch: message.timeout.ms
};

class KafkaSink final : public EventSink {
 public:
  // kInvalid for a configuration librdkafka refuses.
  static Result<std::unique_ptr<KafkaSink>> Create(KafkaOptions options);
  ~KafkaSink() override;

  Status Deliver(const std::vector<OutboxEvent>& events) override;
  // delivery_timeout (librdkafka's message.timeout.ms) and a fifth more: the reports of
  // messages that timed out may come that long after.
  Millis MaxDeliveryTime() const override {
    return options_.delivery_timeout + options_.delivery_timeout / 5;
  }

  static constexpr size_t kMaxOverdueBatches = 16;

  struct Batch;  // the delivery reports of one Deliver call
  // Batches whose reports are still owed (for tests).
  size_t OverdueBatches();

 private:
  KafkaSink(KafkaOptions options, rd_kafka_s* rk);
  KafkaOptions options_;
  rd_kafka_s* rk_;
  Mutex mu_;  // one Deliver at a time
  std::vector<std::unique_ptr<Batch>> overdue_ BOX_GUARDED_BY(mu_);
};

}  // namespace boxoffice
