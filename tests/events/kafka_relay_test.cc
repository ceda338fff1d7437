// The outbox relay into Kafka (librdkafka's mock cluster, the real protocol), on SQLite and
// PostgreSQL: every event arrives keyed by its booking with its id and type as headers, in
// order per booking; a broker outage loses nothing; a relay that dies between producing
// and marking rows published causes duplicates, never loss.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "events/kafka_sink.h"
#include "jobs/outbox_relay.h"
#include "store/store_fixture.h"
#include "support/mock_kafka.h"

namespace boxoffice {
namespace {

class KafkaRelay : public StoreContract {
 protected:
  // Ten bookings: even ones confirmed (BookingConfirmed), odd ones paid late and refunded
  // (BookingFailed then BookingRefunded, an order that must survive). Returns the events.
  std::vector<OutboxEvent> MakeEvents() {
    const int64_t st = MakeShowtime({{"A", 10}});
    std::vector<Booking> late;
    for (int i = 0; i < 10; ++i) {
      auto hold = TryHold(st, 1 + i, {"A" + std::to_string(1 + i)});
      EXPECT_TRUE(hold.ok());
      auto b = store_->StartCheckout(hold->hold_id, 1 + i, kTtl, kMaxLifetime);
      EXPECT_TRUE(b.ok());
      if (i % 2 == 0) {
        EXPECT_EQ(store_
                      ->SettlePayment({"pay_" + std::to_string(i), "", std::to_string(b->id), true,
                                       1250, "EUR"})
                      .value(),
                  Settlement::kConfirmed);
      } else {
        late.push_back(b.value());
      }
    }
    clock_.Advance(kMaxLifetime);
    for (const Booking& b : late) {
      EXPECT_EQ(store_
                    ->SettlePayment({"pay_late_" + std::to_string(b.id), "", std::to_string(b.id),
                                     true, 1250, "EUR"})
                    .value(),
                Settlement::kLateRefunded);
    }
    for (const Refund& r : store_->PendingRefunds(100).value())
      EXPECT_TRUE(store_->CompleteRefund(r.refund_id, "gw").ok());
    return Outbox()->PendingEvents(0, 1000).value();
  }

  std::unique_ptr<KafkaSink> Sink(const testing::MockKafka& kafka, Millis timeout = Millis(5'000)) {
    auto sink = KafkaSink::Create(KafkaOptions{kafka.bootstraps(), "booking-events", timeout});
    EXPECT_TRUE(sink.ok()) << sink.status().message();
    return std::move(sink.value());
  }

  // Drains the outbox through the relay, a bounded number of rounds.
  void Drain(OutboxRelay& relay) {
    for (int i = 0; i < 20 && !Outbox()->PendingEvents(0, 1)->empty(); ++i) (void)relay.RunOnce();
    EXPECT_TRUE(Outbox()->PendingEvents(0, 1)->empty());
  }

  Metrics metrics_;
};

TEST_P(KafkaRelay, EveryEventArrivesKeyedByItsBookingInOrder) {
  testing::MockKafka kafka;
  const auto events = MakeEvents();
  ASSERT_EQ(events.size(), 15u);
  auto sink = Sink(kafka);
  OutboxRelay relay(Outbox(), sink.get(), Millis(10), 4, &metrics_, &clock_);
  Drain(relay);
  auto messages = kafka.ReadAll(events.size(), std::chrono::seconds(10));
  ASSERT_EQ(messages.size(), events.size());
  std::map<std::string, std::vector<std::string>> types_by_key;  // in offset order
  std::map<int32_t, int64_t> last_offset;
  for (const auto& m : messages) {
    auto value = nlohmann::json::parse(m.value);
    EXPECT_EQ(m.key, std::to_string(value["bookingId"].get<int64_t>()));
    EXPECT_EQ(m.id, value["id"]);
    EXPECT_EQ(m.type, value["type"]);
    EXPECT_GT(m.offset, last_offset.count(m.partition) ? last_offset[m.partition] : -1);
    last_offset[m.partition] = m.offset;
    types_by_key[m.key].push_back(m.type);
  }
  std::set<std::string> ids;
  for (const auto& m : messages) ids.insert(m.id);
  EXPECT_EQ(ids.size(), events.size());
  for (const auto& [key, types] : types_by_key) {
    if (types.size() == 2) {
      EXPECT_EQ(types, (std::vector<std::string>{"BookingFailed", "BookingRefunded"})) << key;
    } else {
      EXPECT_EQ(types, (std::vector<std::string>{"BookingConfirmed"})) << key;
    }
  }
}

TEST_P(KafkaRelay, ABrokerOutageLosesNothing) {
  testing::MockKafka kafka;
  const auto events = MakeEvents();
  auto sink = Sink(kafka, Millis(1'000));
  OutboxRelay relay(Outbox(), sink.get(), Millis(10), 100, &metrics_, &clock_);
  kafka.SetBrokersUp(false);
  EXPECT_FALSE(relay.RunOnce().ok());
  EXPECT_EQ(Outbox()->PendingEvents(0, 100)->size(), events.size()) << "nothing marked published";
  kafka.SetBrokersUp(true);
  Drain(relay);
  std::set<std::string> ids;
  for (const auto& m : kafka.ReadAll(events.size(), std::chrono::seconds(10))) ids.insert(m.id);
  for (const auto& e : events) EXPECT_TRUE(ids.count(e.event_id)) << e.event_id;
}

// The relay dies after Kafka acknowledged a batch and before the rows were marked: the
// next relay sends them again. Consumers see duplicates (they dedupe on id), never a gap.
TEST_P(KafkaRelay, ARelayDyingBetweenProduceAndMarkDuplicatesButLosesNothing) {
  testing::MockKafka kafka;
  const auto events = MakeEvents();
  auto sink = Sink(kafka);
  const std::vector<OutboxEvent> first_batch(events.begin(), events.begin() + 6);
  ASSERT_TRUE(sink->Deliver(first_batch).ok());  // produced; the process dies here
  OutboxRelay relay(Outbox(), sink.get(), Millis(10), 100, &metrics_, &clock_);
  Drain(relay);
  std::map<std::string, int> seen;
  for (const auto& m : kafka.ReadAll(events.size() + first_batch.size(), std::chrono::seconds(10)))
    ++seen[m.id];
  for (const auto& e : events) EXPECT_GE(seen[e.event_id], 1) << e.event_id;
  EXPECT_EQ(seen[first_batch[0].event_id], 2);
}

INSTANTIATE_TEST_SUITE_P(Engines, KafkaRelay, ::testing::Values(Engine::kSqlite, Engine::kPostgres),
                         EngineName);

}  // namespace
}  // namespace boxoffice
