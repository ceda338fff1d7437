// The refund worker on both stores, with a scripted gateway (a stand-in for the external
// service, not for a database) on the store's clock: each refund waits its own exponential
// backoff (capped at 10 minutes), so refunds the gateway keeps refusing never stall a later
// one and are asked once per backoff step; refusals show in /metrics and still go through
// once the gateway accepts them.
#include "jobs/refund_worker.h"

#include <gtest/gtest.h>

#include <map>
#include <mutex>

#include "store/store_fixture.h"

namespace boxoffice {
namespace {

class RefundingGateway final : public Gateway {
 public:
  Result<GatewaySession> CreateSession(int64_t, const std::string&, const std::string&,
                                       const std::string&, const std::string&, Instant,
                                       const std::string&) override {
    return Status(Code::kUnavailable, "not used");
  }
  Result<GatewaySessionStatus> GetSession(const std::string&) override {
    return Status(Code::kUnavailable, "not used");
  }
  Result<std::string> Refund(const std::string& payment_id, int64_t, const std::string& key) override {
    std::lock_guard lock(mu_);
    ++asked_[payment_id];
    if (payment_id.rfind("pay_latin1", 0) == 0 && !accept_all_) {
      // A refusal whose text is not UTF-8 (a Latin-1 page), longer than what is kept.
      return Status(Code::kInvalid, "gateway answered 403: refus\xe9 " + std::string(600, '\xe9'));
    }
    if (payment_id.rfind("pay_bad", 0) == 0 && !accept_all_) {
      return Status(Code::kNotFound, "gateway answered 404: no such payment");
    }
    return "re_" + key;
  }
  int Asked(const std::string& payment_id) {
    std::lock_guard lock(mu_);
    return asked_[payment_id];
  }
  void AcceptAll() {
    std::lock_guard lock(mu_);
    accept_all_ = true;
  }

 private:
  std::mutex mu_;
  std::map<std::string, int> asked_;
  bool accept_all_ = false;
};

class RefundWorkerTest : public StoreContract {
 protected:
  // A succeeded payment for nothing we sold: recorded, and a refund intent written.
  void PaymentForNothing(const std::string& payment_id) {
    auto s = store_->SettlePayment(PaymentReport{payment_id, "ses_" + payment_id, "999999999",
                                                 true, 1250, "EUR"});
    ASSERT_TRUE(s.ok()) << s.status().message();
    ASSERT_EQ(s.value(), Settlement::kUnknownRecorded);
  }
  double Backlog(const std::string& state) {
    const std::string text = metrics_.Render();
    const std::string series = "boxoffice_refunds_backlog{state=\"" + state + "\"} ";
    const size_t at = text.find(series);
    return at == std::string::npos ? -1 : std::stod(text.substr(at + series.size()));
  }
  RefundingGateway gateway_;
  Metrics metrics_;
};

TEST_P(RefundWorkerTest, RefusedRefundsBackOffAndNeverStallTheOthers) {
  for (int i = 0; i < 150; ++i) PaymentForNothing("pay_bad_" + std::to_string(i));
  clock_.Advance(Millis(1));
  PaymentForNothing("pay_good");
  RefundWorker worker(store_.get(), &gateway_, Millis(1'000), 100, &metrics_);

  // Two rounds at the same instant: the first takes the 100 longest due (all refused), the
  // second the rest, and the good one goes through at once.
  ASSERT_TRUE(worker.RunOnce().ok());
  auto second = worker.RunOnce();
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second.value(), 1);
  EXPECT_EQ(gateway_.Asked("pay_good"), 1);
  EXPECT_EQ(Backlog("refused"), 150);
  EXPECT_EQ(Backlog("retrying"), 0);

  // A minute of one-second rounds: each refused refund is asked once per backoff step
  // (1, 2, 4, 8, 16, 32 s), not once a round.
  for (int round = 0; round < 60; ++round) {
    clock_.Advance(Millis(1'000));
    ASSERT_TRUE(worker.RunOnce().ok());
  }
  EXPECT_LE(gateway_.Asked("pay_bad_0"), 7);
  EXPECT_GE(gateway_.Asked("pay_bad_0"), 5);
  EXPECT_EQ(gateway_.Asked("pay_bad_149"), gateway_.Asked("pay_bad_0"));

  // The backoff is capped at ten minutes: refusals are still asked, and once the gateway
  // accepts, every refund is issued.
  EXPECT_EQ(RefundWorker::Backoff(1), Millis(1'000));
  EXPECT_EQ(RefundWorker::Backoff(3), Millis(4'000));
  EXPECT_EQ(RefundWorker::Backoff(40), Millis(600'000));
  gateway_.AcceptAll();
  clock_.Advance(RefundWorker::kMaxRetry);
  ASSERT_TRUE(worker.RunOnce().ok());
  ASSERT_TRUE(worker.RunOnce().ok());
  EXPECT_EQ(Backlog("refused"), 0);
  EXPECT_EQ(store_->CountRefundBacklog()->refused, 0);
  EXPECT_TRUE(store_->PendingRefunds(1000)->empty());
  EXPECT_EQ(gateway_.Asked("pay_good"), 1) << "never refunded twice";
}

// The refusal's text is stored with the refund; text that is not UTF-8 (PostgreSQL refuses
// it) must not keep the attempt from being recorded, or the refund is asked every round.
TEST_P(RefundWorkerTest, ARefusalInAnyEncodingIsRecordedAndBacksOff) {
  PaymentForNothing("pay_latin1_1");
  RefundWorker worker(store_.get(), &gateway_, Millis(1'000), 100, &metrics_);
  ASSERT_TRUE(worker.RunOnce().ok());
  ASSERT_TRUE(worker.RunOnce().ok());
  EXPECT_EQ(gateway_.Asked("pay_latin1_1"), 1);
  EXPECT_EQ(store_->CountRefundBacklog()->refused, 1);
}

INSTANTIATE_TEST_SUITE_P(Engines, RefundWorkerTest,
                         ::testing::Values(Engine::kSqlite, Engine::kPostgres), EngineName);

}  // namespace
}  // namespace boxoffice
