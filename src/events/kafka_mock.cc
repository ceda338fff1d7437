#include "events/kafka_mock.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

namespace boxoffice {

struct KafkaMockCluster::Handles {
  rd_kafka_t* rk = nullptr;
  rd_kafka_mock_cluster_t* cluster = nullptr;
  ~Handles() {
    if (cluster) rd_kafka_mock_cluster_destroy(cluster);
    if (rk) rd_kafka_destroy(rk);
  }
};

Result<std::unique_ptr<KafkaMockCluster>> KafkaMockCluster::Start(int brokers, int partitions) {
  auto h = std::make_unique<Handles>();
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "log_level", "4", err, sizeof(err));  // no notice about bootstraps
  h->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
  if (!h->rk) {
    rd_kafka_conf_destroy(conf);
    return Status(Code::kInternal, std::string("kafka mock: ") + err);
  }
  h->cluster = rd_kafka_mock_cluster_new(h->rk, brokers);
  if (!h->cluster) return Status(Code::kInternal, "kafka mock: cannot start the cluster");
  if (rd_kafka_mock_topic_create(h->cluster, "booking-events", partitions, brokers) !=
      RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status(Code::kInternal, "kafka mock: cannot create booking-events");
  }
  return std::unique_ptr<KafkaMockCluster>(new KafkaMockCluster(std::move(h)));
}

KafkaMockCluster::KafkaMockCluster(std::unique_ptr<Handles> h) : h_(std::move(h)) {}
KafkaMockCluster::~KafkaMockCluster() = default;

std::string KafkaMockCluster::bootstraps() const {
  return rd_kafka_mock_cluster_bootstraps(h_->cluster);
}

}  // namespace boxoffice
