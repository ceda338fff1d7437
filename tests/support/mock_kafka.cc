#include "support/mock_kafka.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <stdexcept>

#include "core/crypto.h"

namespace boxoffice::testing {

MockKafka::MockKafka() {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "log_level", "3", err, sizeof(err));
  rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
  if (!rk_) throw std::runtime_error(err);
  cluster_ = rd_kafka_mock_cluster_new(rk_, kBrokers);
  if (!cluster_) throw std::runtime_error("mock cluster");
  rd_kafka_mock_topic_create(cluster_, "booking-events", kPartitions, kBrokers);
}

MockKafka::~MockKafka() {
  if (cluster_) rd_kafka_mock_cluster_destroy(cluster_);
  if (rk_) rd_kafka_destroy(rk_);
}

std::string MockKafka::bootstraps() const { return rd_kafka_mock_cluster_bootstraps(cluster_); }

void MockKafka::SetBrokersUp(bool up) {
  for (int id = 1; id <= kBrokers; ++id) {
    if (up) {
      rd_kafka_mock_broker_set_up(cluster_, id);
    } else {
      rd_kafka_mock_broker_set_down(cluster_, id);
    }
  }
}

std::vector<KafkaMessage> MockKafka::ReadAll(size_t want, std::chrono::milliseconds timeout) const {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", bootstraps().c_str(), err, sizeof(err));
  rd_kafka_conf_set(conf, "group.id", ("test-" + NewUuid()).c_str(), err, sizeof(err));
  rd_kafka_conf_set(conf, "enable.auto.commit", "false", err, sizeof(err));
  rd_kafka_conf_set(conf, "log_level", "3", err, sizeof(err));
  rd_kafka_t* consumer = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err));
  if (!consumer) throw std::runtime_error(err);
  rd_kafka_poll_set_consumer(consumer);
  rd_kafka_topic_partition_list_t* parts = rd_kafka_topic_partition_list_new(kPartitions);
  for (int p = 0; p < kPartitions; ++p) {
    rd_kafka_topic_partition_list_add(parts, "booking-events", p)->offset =
        RD_KAFKA_OFFSET_BEGINNING;
  }
  rd_kafka_assign(consumer, parts);
  rd_kafka_topic_partition_list_destroy(parts);
  std::vector<KafkaMessage> out;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto last = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() < deadline) {
    // Once `want` arrived, read on until the topic has been quiet for a second.
    if (out.size() >= want && std::chrono::steady_clock::now() - last > std::chrono::seconds(1))
      break;
    rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer, 100);
    if (!m) continue;
    last = std::chrono::steady_clock::now();
    if (!m->err) {
      KafkaMessage msg;
      msg.key.assign(static_cast<const char*>(m->key), m->key_len);
      msg.value.assign(static_cast<const char*>(m->payload), m->len);
      msg.partition = m->partition;
      msg.offset = m->offset;
      rd_kafka_headers_t* headers = nullptr;
      if (rd_kafka_message_headers(m, &headers) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        const void* v = nullptr;
        size_t n = 0;
        if (rd_kafka_header_get_last(headers, "id", &v, &n) == RD_KAFKA_RESP_ERR_NO_ERROR)
          msg.id.assign(static_cast<const char*>(v), n);
        if (rd_kafka_header_get_last(headers, "type", &v, &n) == RD_KAFKA_RESP_ERR_NO_ERROR)
          msg.type.assign(static_cast<const char*>(v), n);
      }
      out.push_back(std::move(msg));
    }
    rd_kafka_message_destroy(m);
  }
  rd_kafka_consumer_close(consumer);
  rd_kafka_destroy(consumer);
  return out;
}

}  // namespace boxoffice::testing
