// The reconciler on both stores, with a scripted gateway (a stand-in for the external
// service, not for a database) on the store's clock: it asks as soon as a payment session
// has ended, so a payment whose callback was lost confirms its seats while the hold's
// margin still keeps them; and a gateway answer without a payment id is never taken for a
// duplicate (nor recorded), so no booking stays PENDING for ever.
#include "jobs/reconciler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <mutex>

#include "store/store_fixture.h"

namespace boxoffice {
namespace {

class ScriptedGateway final : public Gateway {
 public:
  Result<GatewaySession> CreateSession(int64_t, const std::string&, const std::string&,
                                       const std::string&, const std::string&, Instant,
                                       const std::string&) override {
    return Status(Code::kUnavailable, "not used");
  }
  Result<GatewaySessionStatus> GetSession(const std::string& session_id) override {
    std::lock_guard lock(mu_);
    ++asked_;
    if (down || session_id == failing) return Status(Code::kUnavailable, "gateway timed out");
    auto it = answers_.find(session_id);
    if (it == answers_.end()) return Status(Code::kNotFound, "no such session");
    return it->second;
  }
  Result<std::string> Refund(const std::string&, int64_t, const std::string&) override {
    return Status(Code::kUnavailable, "not used");
  }
  void Answer(const std::string& session_id, GatewaySessionStatus status) {
    std::lock_guard lock(mu_);
    answers_[session_id] = std::move(status);
  }
  bool down = false;
  std::string failing;  // this session's answers always time out
  int asked() {
    std::lock_guard lock(mu_);
    return asked_;
  }

 private:
  std::mutex mu_;
  std::map<std::string, GatewaySessionStatus> answers_;
  int asked_ = 0;
};

class ReconcilerTest : public StoreContract {
 protected:
  void SetUp() override {
    StoreContract::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    showtime_ = MakePricedShowtime();
    ReconcilerOptions o;
    o.older_than = Millis(15 * 60'000);
    o.lease = Millis(1'000);
    payments_ = std::make_unique<PaymentService>(store_.get(), &metrics_, nullptr);
    reconciler_ =
        std::make_unique<Reconciler>(store_.get(), &gateway_, payments_.get(), o, &metrics_);
  }
  // A checkout of `seats` whose payment session ends 8 minutes from now (the hold 10).
  Booking CheckedOut(int64_t customer, const std::string& seat, const std::string& session) {
    auto hold = TryHold(showtime_, customer, {seat});
    EXPECT_TRUE(hold.ok());
    auto booking = store_->StartCheckout(hold->hold_id, customer, kTtl, kMaxLifetime);
    EXPECT_TRUE(booking.ok()) << booking.status().message();
    EXPECT_TRUE(store_->AttachPaymentSession(booking->id, session, "https://pay/" + session,
                                             clock_.Now() + Millis(8 * 60'000))
                    .ok());
    return booking.value();
  }
  BookingStatus StatusOf(const Booking& b) {
    return store_->GetBooking(b.id, Store::kAnyCustomer)->status;
  }

  int64_t showtime_ = 0;
  ScriptedGateway gateway_;
  Metrics metrics_;
  std::unique_ptr<PaymentService> payments_;
  std::unique_ptr<Reconciler> reconciler_;
};

TEST_P(ReconcilerTest, ALostCallbackConfirmsOnceTheSessionHasEnded) {
  const Booking b = CheckedOut(5, "E1", "ses_a");
  gateway_.Answer("ses_a", {"PAID", "pay_a"});
  // While the session runs, nobody asks: the customer may be paying right now.
  clock_.Advance(Millis(7 * 60'000));
  ASSERT_TRUE(reconciler_->RunOnce().ok());
  EXPECT_EQ(gateway_.asked(), 0);
  // The session ended at 8 minutes; the hold lasts until 10: the payment confirms the seats.
  clock_.Advance(Millis(61'000));
  auto round = reconciler_->RunOnce();
  ASSERT_TRUE(round.ok());
  EXPECT_EQ(round.value(), 1);
  EXPECT_EQ(StatusOf(b), BookingStatus::kConfirmed);
  EXPECT_EQ(Owners(showtime_)["E1"].status, SeatStatus::kBooked);
  EXPECT_TRUE(store_->PendingRefunds(10)->empty()) << "nothing to refund";
  // The round's gauges (alerts ReconcilerBehind and ReconcilerStalled): one claimed of a
  // batch of 100, and a round that read the database just now.
  const std::string text = metrics_.Render();
  EXPECT_NE(text.find("boxoffice_reconciler_claimed 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("boxoffice_reconciler_batch_limit 100\n"), std::string::npos) << text;
  const std::string series = "\nboxoffice_reconciler_last_round_timestamp_seconds ";
  const size_t at = text.find(series);
  ASSERT_NE(at, std::string::npos) << text;
  const double last = std::stod(text.substr(at + series.size()));
  const double now = std::chrono::duration<double>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  EXPECT_GT(last, now - 3'600) << "a wall-clock time, in seconds";
  EXPECT_LE(last, now + 1);
}

TEST_P(ReconcilerTest, APaidAnswerWithoutAPaymentIdIsAskedAgainNeverADuplicate) {
  const Booking first = CheckedOut(5, "E1", "ses_a");
  const Booking second = CheckedOut(6, "E2", "ses_b");
  gateway_.Answer("ses_a", {"PAID", ""});
  gateway_.Answer("ses_b", {"PAID", ""});
  clock_.Advance(Millis(8 * 60'000 + 1'000));
  ASSERT_TRUE(reconciler_->RunOnce().ok());
  // Nothing recorded, nothing confirmed without a payment to name.
  EXPECT_EQ(StatusOf(first), BookingStatus::kPending);
  EXPECT_EQ(StatusOf(second), BookingStatus::kPending);
  EXPECT_NE(metrics_.Render().find("boxoffice_reconciled_total{outcome=\"malformed_answer\"} 2"),
            std::string::npos)
      << metrics_.Render();
  // The gateway names the payments later: both confirm, neither is a duplicate.
  gateway_.Answer("ses_a", {"PAID", "pay_a"});
  gateway_.Answer("ses_b", {"PAID", "pay_b"});
  clock_.Advance(Millis(2'000));  // the claims' lease ran out
  auto round = reconciler_->RunOnce();
  ASSERT_TRUE(round.ok());
  EXPECT_EQ(round.value(), 2);
  EXPECT_EQ(StatusOf(first), BookingStatus::kConfirmed);
  EXPECT_EQ(StatusOf(second), BookingStatus::kConfirmed);
  // A failed session without a payment id simply ends the checkout.
  const Booking third = CheckedOut(7, "E3", "ses_c");
  gateway_.Answer("ses_c", {"FAILED", ""});
  clock_.Advance(Millis(8 * 60'000 + 1'000));
  ASSERT_TRUE(reconciler_->RunOnce().ok());
  EXPECT_EQ(StatusOf(third), BookingStatus::kFailed);
}

// Bookings the gateway cannot settle yet are asked again, but never take every turn: with
// a batch of two, two such bookings do not keep a third, whose callback was lost, from
// being asked while its hold still lives.
TEST_P(ReconcilerTest, BookingsThatCannotSettleNeverStarveTheOthers) {
  ReconcilerOptions o;
  o.older_than = Millis(15 * 60'000);
  o.lease = Millis(1'000);
  o.batch_limit = 2;
  Reconciler small(store_.get(), &gateway_, payments_.get(), o, &metrics_);
  const Booking stuck1 = CheckedOut(5, "E1", "ses_a");
  const Booking stuck2 = CheckedOut(6, "E2", "ses_b");
  clock_.Advance(Millis(1));
  const Booking lost = CheckedOut(7, "E3", "ses_c");
  gateway_.Answer("ses_a", {"PAID", ""});
  gateway_.Answer("ses_b", {"PAID", ""});
  gateway_.Answer("ses_c", {"PAID", "pay_c"});
  clock_.Advance(Millis(8 * 60'000 + 1'000));
  ASSERT_TRUE(small.RunOnce().ok());  // the two oldest: nothing to settle
  clock_.Advance(Millis(1'001));      // their claims ran out
  ASSERT_TRUE(small.RunOnce().ok());
  EXPECT_EQ(StatusOf(lost), BookingStatus::kConfirmed);
  EXPECT_EQ(StatusOf(stuck1), BookingStatus::kPending);
  EXPECT_EQ(StatusOf(stuck2), BookingStatus::kPending);
}

// A gateway that does not answer ends the round at the first booking: a hundred bookings
// would otherwise each wait out the client's timeouts.
TEST_P(ReconcilerTest, AGatewayOutageEndsTheRoundAtOnce) {
  for (int i = 0; i < 5; ++i) CheckedOut(10 + i, "E" + std::to_string(i + 1), "ses_down");
  gateway_.down = true;
  clock_.Advance(Millis(8 * 60'000 + 1'000));
  ASSERT_TRUE(reconciler_->RunOnce().ok());
  EXPECT_EQ(gateway_.asked(), 1);
}

// A gateway that fails on one booking (its session's answer always times out) ends the
// round there, but the bookings after it are given back: the next round asks them at once.
TEST_P(ReconcilerTest, ABookingTheGatewayFailsOnNeverHoldsTheOthersBack) {
  const Booking bad = CheckedOut(5, "E1", "ses_bad");
  clock_.Advance(Millis(1));
  const Booking good = CheckedOut(6, "E2", "ses_good");
  gateway_.failing = "ses_bad";
  gateway_.Answer("ses_good", {"PAID", "pay_good"});
  clock_.Advance(Millis(8 * 60'000 + 1'000));
  ASSERT_TRUE(reconciler_->RunOnce().ok());  // asks bad first, which fails
  EXPECT_EQ(StatusOf(good), BookingStatus::kPending);
  ASSERT_TRUE(reconciler_->RunOnce().ok());  // at the same instant: good is asked now
  EXPECT_EQ(StatusOf(good), BookingStatus::kConfirmed);
  EXPECT_EQ(StatusOf(bad), BookingStatus::kPending);
}

TEST_P(ReconcilerTest, TheStoreRefusesAPaymentWithoutAnId) {
  const Booking b = CheckedOut(5, "E1", "ses_a");
  auto settled =
      store_->SettlePayment(PaymentReport{"", "ses_a", std::to_string(b.id), true, 1250, "EUR"});
  EXPECT_EQ(settled.status().code(), Code::kInvalid);
  EXPECT_EQ(StatusOf(b), BookingStatus::kPending);
}

INSTANTIATE_TEST_SUITE_P(Engines, ReconcilerTest,
                         ::testing::Values(Engine::kSqlite, Engine::kPostgres), EngineName);

}  // namespace
}  // namespace boxoffice
