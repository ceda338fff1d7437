// Proves the outbox relay on both stores: events reach the sink in id order, are marked
// published only after the sink reports them durable, and a failing sink loses nothing.
#include "jobs/outbox_relay.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "events/file_sink.h"
#include "jobs/booking_stats.h"
#include "store/store_fixture.h"

namespace boxoffice {
namespace {

class FailingSink final : public EventSink {
 public:
  Status Deliver(const std::vector<OutboxEvent>&) override {
    ++calls;
    return Status(Code::kUnavailable, "sink down");
  }
  Millis MaxDeliveryTime() const override { return Millis(1'000); }
  int calls = 0;
};

// Delivers, but while it does, `during` runs (the clock moves, another relay takes over).
class SlowSink final : public EventSink {
 public:
  Status Deliver(const std::vector<OutboxEvent>& events) override {
    delivered += static_cast<int>(events.size());
    if (during) during();
    return Status::Ok();
  }
  Millis MaxDeliveryTime() const override { return Millis(1'000); }
  std::function<void()> during;
  int delivered = 0;
};

class Relay : public StoreContract {
 protected:
  // Two events: a failed payment, then a confirmation after a second checkout.
  void MakeEvents(const std::string& tag = "") {
    const int64_t st = MakeShowtime({{"A", 4}});
    auto hold = TryHold(st, 1, {"A1"});
    auto first = store_->StartCheckout(hold->hold_id, 1, kTtl, kMaxLifetime).value();
    ASSERT_EQ(
        store_->SettlePayment({"pay_1" + tag, "", std::to_string(first.id), false, 1250, "EUR"})
            .value(),
        Settlement::kPaymentFailed);
    auto second = store_->StartCheckout(hold->hold_id, 1, kTtl, kMaxLifetime).value();
    ASSERT_EQ(
        store_->SettlePayment({"pay_2" + tag, "", std::to_string(second.id), true, 1250, "EUR"})
            .value(),
        Settlement::kConfirmed);
  }
  std::vector<nlohmann::json> Lines(const std::string& path) {
    std::ifstream in(path);
    std::vector<nlohmann::json> out;
    for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
    return out;
  }
  Metrics metrics_;
};

TEST_P(Relay, DeliversInOrderThenMarksPublished) {
  MakeEvents();
  const std::string path = testing::TempDir() + "/out/events.jsonl";
  FileSink sink(path);
  OutboxRelay relay(Outbox(), &sink, Millis(10), 1, &metrics_);
  EXPECT_EQ(relay.RunOnce().value(), 1);  // batch of one: order across rounds counts too
  EXPECT_EQ(relay.RunOnce().value(), 1);
  EXPECT_EQ(relay.RunOnce().value(), 0);
  auto lines = Lines(path);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["type"], "BookingFailed");
  EXPECT_EQ(lines[1]["type"], "BookingConfirmed");
  for (const auto& l : lines) {
    for (const char* field :
         {"id", "type", "bookingId", "showtimeId", "seats", "amount", "occurredAt"}) {
      EXPECT_TRUE(l.contains(field)) << field;
    }
  }
  EXPECT_TRUE(Outbox()->PendingEvents(0, 10)->empty());
}

TEST_P(Relay, AFailingSinkLosesNothing) {
  MakeEvents();
  FailingSink broken;
  OutboxRelay failing(Outbox(), &broken, Millis(10), 100, &metrics_, &clock_);
  EXPECT_FALSE(failing.RunOnce().ok());
  EXPECT_EQ(Outbox()->PendingEvents(0, 10)->size(), 2u);
  // The lag gauge shows how long the oldest undelivered event has waited.
  clock_.Advance(Millis(5'000));
  EXPECT_NE(metrics_.Render().find("\nboxoffice_outbox_lag_seconds 5"), std::string::npos)
      << metrics_.Render();
  // The failing relay stops; once its lease runs out a relay with a working sink takes over.
  clock_.Advance(OutboxRelay::kLease);
  const std::string path = testing::TempDir() + "/events.jsonl";
  FileSink sink(path);
  OutboxRelay relay(Outbox(), &sink, Millis(10), 100, &metrics_, &clock_);
  relay.Start();
  for (int i = 0; i < 500 && !Outbox()->PendingEvents(0, 10)->empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  relay.Stop();
  EXPECT_EQ(Lines(path).size(), 2u);
  EXPECT_NE(metrics_.Render().find("\nboxoffice_outbox_lag_seconds 0\n"), std::string::npos);
}

TEST_P(Relay, OneRelayAtATimeDrainsTheOutbox) {
  MakeEvents();
  const std::string path = testing::TempDir() + "/events.jsonl";
  FileSink sink(path);
  OutboxRelay first(Outbox(), &sink, Millis(10), 1, &metrics_, &clock_);
  OutboxRelay second(Outbox(), &sink, Millis(10), 1, &metrics_, &clock_);
  EXPECT_EQ(first.RunOnce().value(), 1);
  EXPECT_EQ(second.RunOnce().value(), 0) << "the first relay holds the lease";
  EXPECT_EQ(Outbox()->PendingEvents(0, 10)->size(), 1u);
  // The first relay's instance died: once its lease runs out, the second carries on.
  clock_.Advance(OutboxRelay::kLease + Millis(1));
  EXPECT_EQ(second.RunOnce().value(), 1);
  EXPECT_EQ(first.RunOnce().value(), 0);
  EXPECT_EQ(Lines(path).size(), 2u);
}

// A relay that lost its lease during a delivery (its process paused past the lease) marks
// nothing: the mark is fenced by the lease, and the relay that took over carries on. The
// rows are delivered twice (at least once is the contract), never marked by a relay that
// no longer owns the outbox.
TEST_P(Relay, AMarkAfterTheLeaseWasLostIsFencedOut) {
  MakeEvents();
  SlowSink paused;
  OutboxRelay stale(Outbox(), &paused, Millis(10), 100, &metrics_, &clock_);
  const std::string path = testing::TempDir() + "/events.jsonl";
  FileSink sink(path);
  OutboxRelay successor(Outbox(), &sink, Millis(10), 100, &metrics_, &clock_);
  Result<int> taken_over = 0;
  paused.during = [&] {
    clock_.Advance(OutboxRelay::kLease + Millis(1));
    // The successor takes the lease, but the rows are not marked yet: it delivers them too.
    taken_over = successor.RunOnce();
  };
  auto stale_round = stale.RunOnce();
  ASSERT_TRUE(taken_over.ok());
  EXPECT_EQ(taken_over.value(), 2);
  EXPECT_EQ(stale_round.status().code(), Code::kNotActive) << "the stale relay's mark was fenced";
  EXPECT_TRUE(Outbox()->PendingEvents(0, 10)->empty()) << "the successor marked them";
  // The stale relay stays out while the successor holds the lease.
  EXPECT_EQ(stale.RunOnce().value(), 0);
  MakeEvents("b");
  EXPECT_EQ(successor.RunOnce().value(), 2);
  EXPECT_EQ(paused.delivered, 2);
  EXPECT_EQ(Lines(path).size(), 4u);
}

// The fence itself: only the lease's owner, while it runs, marks rows.
TEST_P(Relay, OnlyTheLeaseOwnerMarksRows) {
  MakeEvents();
  auto pending = Outbox()->PendingEvents(0, 10).value();
  std::vector<int64_t> ids;
  for (const auto& e : pending) ids.push_back(e.id);
  EXPECT_EQ(Outbox()->MarkEventsPublished(ids, "outbox", "nobody").code(), Code::kNotActive);
  ASSERT_TRUE(Outbox()->AcquireLease("outbox", "me", Millis(1'000)).value());
  EXPECT_EQ(Outbox()->MarkEventsPublished(ids, "outbox", "someone-else").code(), Code::kNotActive);
  clock_.Advance(Millis(1'001));
  EXPECT_EQ(Outbox()->MarkEventsPublished(ids, "outbox", "me").code(), Code::kNotActive)
      << "a lease that ran out fences its owner too";
  EXPECT_EQ(Outbox()->PendingEvents(0, 10)->size(), 2u);
  ASSERT_TRUE(Outbox()->AcquireLease("outbox", "me", Millis(1'000)).value());
  EXPECT_TRUE(Outbox()->MarkEventsPublished(ids, "outbox", "me").ok());
  EXPECT_TRUE(Outbox()->PendingEvents(0, 10)->empty());
}

TEST_P(Relay, BookingStatsShowTheLastDaysBookingsByStatus) {
  MakeEvents();  // one FAILED booking and one CONFIRMED
  BookingStats stats(store_.get(), Millis(10), &metrics_);
  ASSERT_TRUE(stats.RunOnce().ok());
  const std::string text = metrics_.Render();
  EXPECT_NE(text.find("boxoffice_bookings{status=\"CONFIRMED\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("boxoffice_bookings{status=\"FAILED\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("boxoffice_bookings{status=\"PENDING\"} 0\n"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Engines, Relay, ::testing::Values(Engine::kSqlite, Engine::kPostgres),
                         EngineName);

}  // namespace
}  // namespace boxoffice
