// librdkafka's mock Kafka cluster (the real protocol on loopback sockets, in memory) as a
// development stand-in for brokers, like fake-gateway is for the payment gateway: the
// production-profile script and tests use it when no real broker URL is given.
#pragma once

#include <memory>
#include <string>

#include "core/status.h"

namespace boxoffice {

class KafkaMockCluster {
 public:
  // `brokers` in-process brokers with topic booking-events (`partitions` partitions).
  static Result<std::unique_ptr<KafkaMockCluster>> Start(int brokers, int partitions);
  ~KafkaMockCluster();
  std::string bootstraps() const;

  struct Handles;

 private:
  explicit KafkaMockCluster(std::unique_ptr<Handles> h);
  std::unique_ptr<Handles> h_;
};

}  // namespace boxoffice
