#include "events/kafka_sink.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <atomic>
#include <chrono>

#include "core/log.h"

namespace boxoffice {

struct KafkaSink::Batch {
  std::atomic<int> pending{0};
  std::atomic<int> failed{0};
  std::mutex mu;
  std::string first_error;
};

namespace {

// Called from rd_kafka_poll/flush on the delivering thread, once per message.
void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* m, void*) {
  auto* batch = static_cast<KafkaSink::Batch*>(m->_private);
  if (!batch) return;
  if (m->err) {
    std::lock_guard lock(batch->mu);
    if (batch->failed.fetch_add(1) == 0) batch->first_error = rd_kafka_err2str(m->err);
  }
  batch->pending.fetch_sub(1);
}

// librdkafka's own log lines, as JSON lines like every other log of the service.
void OnLog(const rd_kafka_t*, int level, const char* facility, const char* message) {
  const nlohmann::json fields = {{"facility", facility}, {"detail", message}};
  if (level <= 3) {
    LogError("kafka", fields);
  } else if (level <= 5) {
    LogWarn("kafka", fields);
  } else {
    LogInfo("kafka", fields);
  }
}

bool Set(rd_kafka_conf_t* conf, const char* name, const std::string& value, std::string* error) {
  char err[512];
  if (rd_kafka_conf_set(conf, name, value.c_str(), err, sizeof(err)) != RD_KAFKA_CONF_OK) {
    *error = std::string(name) + ": " + err;
    return false;
  }
  return true;
}

}  // namespace

Result<std::unique_ptr<KafkaSink>> KafkaSink::Create(KafkaOptions options) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  std::string error;
  const bool ok =
      Set(conf, "bootstrap.servers", options.brokers, &error) &&
      Set(conf, "enable.idempotence", "true", &error) &&
      Set(conf, "message.timeout.ms", std::to_string(options.delivery_timeout.count()), &error) &&
      Set(conf, "linger.ms", "5", &error) &&
      Set(conf, "queue.buffering.max.messages", "100000", &error);
  if (!ok) {
    rd_kafka_conf_destroy(conf);
    return Status(Code::kInvalid, "kafka: " + error);
  }
  rd_kafka_conf_set_dr_msg_cb(conf, OnDelivery);
  rd_kafka_conf_set_log_cb(conf, OnLog);
  char err[512];
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
  if (!rk) {
    rd_kafka_conf_destroy(conf);
    return Status(Code::kInvalid, std::string("kafka: ") + err);
  }
  return std::unique_ptr<KafkaSink>(new KafkaSink(std::move(options), rk));
}

KafkaSink::KafkaSink(KafkaOptions options, rd_kafka_s* rk)
    : options_(std::move(options)), rk_(rk) {}

KafkaSink::~KafkaSink() {
  rd_kafka_flush(rk_, 2'000);
  rd_kafka_destroy(rk_);  // no report comes after this: overdue_ may go
}

size_t KafkaSink::OverdueBatches() {
  MutexLock lock(mu_);
  std::erase_if(overdue_, [](const auto& b) { return b->pending.load() == 0; });
  return overdue_.size();
}

Status KafkaSink::Deliver(const std::vector<OutboxEvent>& events) {
  MutexLock lock(mu_);
  rd_kafka_poll(rk_, 0);  // serve reports owed to overdue batches
  std::erase_if(overdue_, [](const auto& b) { return b->pending.load() == 0; });
  if (overdue_.size() >= kMaxOverdueBatches) {
    return Status(Code::kUnavailable, "kafka: too many batches with overdue delivery reports");
  }
  // Owned here until every report arrived: flush waits for all of them (each message
  // times out after delivery_timeout at the latest).
  auto batch = std::make_unique<Batch>();
  // Producing and flushing together stay within MaxDeliveryTime (the relay's lease).
  const auto deadline = std::chrono::steady_clock::now() + MaxDeliveryTime();
  auto left_ms = [&deadline] {
    return static_cast<int>(std::max<int64_t>(
        0, std::chrono::duration_cast<Millis>(deadline - std::chrono::steady_clock::now())
               .count()));
  };
  for (const OutboxEvent& e : events) {
    batch->pending.fetch_add(1);
    rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR__TIMED_OUT;
    for (int attempt = 0; attempt < 100 && left_ms() > 0; ++attempt) {
      err = rd_kafka_producev(
          rk_, RD_KAFKA_V_TOPIC(options_.topic.c_str()), RD_KAFKA_V_KEY(e.key.data(), e.key.size()),
          RD_KAFKA_V_VALUE(const_cast<char*>(e.payload.data()), e.payload.size()),
          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
          RD_KAFKA_V_HEADER("id", e.event_id.data(), static_cast<ssize_t>(e.event_id.size())),
          RD_KAFKA_V_HEADER("type", e.type.data(), static_cast<ssize_t>(e.type.size())),
          RD_KAFKA_V_OPAQUE(batch.get()), RD_KAFKA_V_END);
      if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) break;
      rd_kafka_poll(rk_, std::min(10, left_ms()));  // the local queue is full: let reports drain it
    }
    if (err) {
      batch->pending.fetch_sub(1);
      batch->failed.fetch_add(1);
      batch->first_error = rd_kafka_err2str(err);
      break;
    }
  }
  // One flush, bounded by MaxDeliveryTime(): the relay's lease must outlast this call.
  rd_kafka_flush(rk_, left_ms());
  if (batch->pending.load() > 0) {
    // librdkafka still owes reports past message.timeout.ms; they will point at this batch,
    // so it is kept aside rather than freed under them, until they came.
    LogError("kafka delivery reports overdue", {{"pending", batch->pending.load()}});
    overdue_.push_back(std::move(batch));
    return Status(Code::kUnavailable, "kafka: delivery reports overdue");
  }
  if (batch->failed.load() > 0) {
    return Status(Code::kUnavailable, "kafka: " + std::to_string(batch->failed.load()) + " of " +
                                          std::to_string(events.size()) +
                                          " events not delivered: " + batch->first_error);
  }
  return Status::Ok();
}

}  // namespace boxoffice
