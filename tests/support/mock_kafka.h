// librdkafka's mock cluster (it speaks the Kafka protocol on real sockets) with topic
// booking-events, and a consumer that reads the topic back from the beginning.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

struct rd_kafka_s;
struct rd_kafka_mock_cluster_s;

namespace boxoffice::testing {

struct KafkaMessage {
  std::string key;
  std::string value;
  std::string id;    // header
  std::string type;  // header
  int32_t partition = 0;
  int64_t offset = 0;
};

class MockKafka {
 public:
  static constexpr int kBrokers = 3;
  static constexpr int kPartitions = 4;

  MockKafka();
  ~MockKafka();
  MockKafka(const MockKafka&) = delete;
  MockKafka& operator=(const MockKafka&) = delete;

  std::string bootstraps() const;
  void SetBrokersUp(bool up);
  // Every message of booking-events, read from the start until at least `want` arrived and
  // then a second passed without more, or `timeout` passed; in offset order per partition.
  std::vector<KafkaMessage> ReadAll(size_t want, std::chrono::milliseconds timeout) const;

 private:
  rd_kafka_s* rk_ = nullptr;
  rd_kafka_mock_cluster_s* cluster_ = nullptr;
};

}  // namespace boxoffice::testing
