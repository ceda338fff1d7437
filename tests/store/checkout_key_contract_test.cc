// Checkout's idempotency keys, run on SQLite and PostgreSQL: a key is claimed by one request
// at a time, carries the request through its recovery points, replays the finished
// response, refuses reuse for another hold, and can be undone without leaving anything
// half-done. Keys are per customer.
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <thread>

#include "store/store_fixture.h"

namespace boxoffice {
namespace {

class CheckoutKeyContract : public StoreContract {
 protected:
  void SetUp() override {
    StoreContract::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    st_ = MakePricedShowtime();
    auto hold = TryHold(st_, 1, {"E1", "F1"});
    ASSERT_TRUE(hold.ok());
    hold_ = hold.value();
  }

  Result<IdempotencyRecord> Claim(const std::string& key, const std::string& hold_id,
                                  int64_t customer = 1) {
    return store_->ClaimCheckoutKey(IdempotencyKey{customer, key, hold_id}, kLease);
  }

  Hold hold_;
};

TEST_P(CheckoutKeyContract, AKeyIsClaimedOnceAndRefusedForAnotherHold) {
  auto first = Claim("k1", hold_.hold_id);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(first->phase, KeyPhase::kStarted);
  EXPECT_FALSE(first->token.empty());
  EXPECT_EQ(Claim("k1", hold_.hold_id).status().code(), Code::kInProgress);
  EXPECT_EQ(Claim("k1", NewHoldId(st_)).status().code(), Code::kKeyReused);
  // Another customer's key of the same spelling is another key.
  auto other = Claim("k1", hold_.hold_id, 2);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->token, first->token);
}

TEST_P(CheckoutKeyContract, TheFinishedResponseIsReplayed) {
  auto claim = Claim("k1", hold_.hold_id);
  ASSERT_TRUE(claim.ok());
  auto booking = store_->StartCheckout(claim->lock(), hold_.hold_id, kTtl, kMaxLifetime);
  ASSERT_TRUE(booking.ok()) << booking.status().message();
  auto done = store_->FinishCheckout(claim->lock(), "ses_1", "https://pay/ses_1",
                                     kStart + Millis(480'000), 201, R"({"bookingId":1})", "");
  ASSERT_TRUE(done.ok()) << done.status().message();
  EXPECT_TRUE(done.value());
  EXPECT_EQ(store_->GetBooking(booking->id, 1)->session_id, "ses_1");

  auto replay = Claim("k1", hold_.hold_id);
  ASSERT_TRUE(replay.ok());
  EXPECT_EQ(replay->phase, KeyPhase::kFinished);
  EXPECT_EQ(replay->response_status, 201);
  EXPECT_EQ(replay->response_body, R"({"bookingId":1})");
  EXPECT_EQ(Claim("k1", NewHoldId(st_)).status().code(), Code::kKeyReused);
  // A second key for the same hold meets the pending booking.
  auto second = Claim("k2", hold_.hold_id);
  ASSERT_TRUE(second.ok());
  auto again = store_->StartCheckout(second->lock(), hold_.hold_id, kTtl, kMaxLifetime);
  EXPECT_EQ(again.status().code(), Code::kCheckoutExists);
  EXPECT_EQ(again.status().id(), booking->id);
}

TEST_P(CheckoutKeyContract, ARetryCarriesOnFromTheRecoveryPointOnceTheLeaseRunsOut) {
  auto dead = Claim("k1", hold_.hold_id);
  ASSERT_TRUE(dead.ok());
  auto booking = store_->StartCheckout(dead->lock(), hold_.hold_id, kTtl, kMaxLifetime);
  ASSERT_TRUE(booking.ok());
  // The request dies here. Until its lease ends nobody else may carry the key.
  EXPECT_EQ(Claim("k1", hold_.hold_id).status().code(), Code::kInProgress);
  clock_.Advance(kLease + Millis(1));
  auto retry = Claim("k1", hold_.hold_id);
  ASSERT_TRUE(retry.ok()) << retry.status().message();
  EXPECT_EQ(retry->phase, KeyPhase::kBookingCreated);
  EXPECT_EQ(retry->booking_id, booking->id);
  EXPECT_NE(retry->token, dead->token);
  // The dead request's claim is worthless now; the retry's finishes.
  EXPECT_EQ(
      store_->FinishCheckout(dead->lock(), "ses_1", "u", kStart, 201, "{}", "").status().code(),
      Code::kInProgress);
  EXPECT_EQ(store_->StartCheckout(dead->lock(), hold_.hold_id, kTtl, kMaxLifetime).status().code(),
            Code::kInProgress);
  EXPECT_TRUE(store_->FinishCheckout(retry->lock(), "ses_1", "u", kStart, 201, "{}", "").value());
  EXPECT_EQ(Claim("k1", hold_.hold_id)->phase, KeyPhase::kFinished);
}

// A claim whose answer was lost: its token was chosen by the caller, so its lease can be
// ended by it (EndCheckoutLease) and the customer's retry carries on at once instead of
// hearing IDEMPOTENCY_IN_PROGRESS until the lease runs out. A stale token ends nothing.
TEST_P(CheckoutKeyContract, ALostClaimsLeaseIsEndedByTheTokenItsCallerChose) {
  const std::string token = NewUuidOnShard(ShardOfUuid(hold_.hold_id));
  auto lost = store_->ClaimCheckoutKey(IdempotencyKey{1, "k1", hold_.hold_id, token}, kLease);
  ASSERT_TRUE(lost.ok()) << lost.status().message();
  EXPECT_EQ(lost->token, token);
  auto booking = store_->StartCheckout(lost->lock(), hold_.hold_id, kTtl, kMaxLifetime);
  ASSERT_TRUE(booking.ok());
  EXPECT_EQ(Claim("k1", hold_.hold_id).status().code(), Code::kInProgress);
  EXPECT_TRUE(store_->EndCheckoutLease(KeyLock{1, "k1", NewUuid()}).ok()) << "not its claim";
  EXPECT_EQ(store_->EndCheckoutLease(KeyLock{1, "k2", token}).code(), Code::kNotFound)
      << "no such key (yet): its caller tries again";
  EXPECT_EQ(Claim("k1", hold_.hold_id).status().code(), Code::kInProgress);
  ASSERT_TRUE(store_->EndCheckoutLease(KeyLock{1, "k1", token}).ok());
  auto retry = Claim("k1", hold_.hold_id);
  ASSERT_TRUE(retry.ok()) << retry.status().message();
  EXPECT_EQ(retry->phase, KeyPhase::kBookingCreated);
  EXPECT_EQ(retry->booking_id, booking->id);
  // A finished key keeps its response whatever ends later.
  ASSERT_TRUE(store_->FinishCheckout(retry->lock(), "ses_1", "u", kStart, 201, "{}", "").value());
  EXPECT_TRUE(store_->EndCheckoutLease(retry->lock()).ok());
  EXPECT_EQ(Claim("k1", hold_.hold_id)->phase, KeyPhase::kFinished);
}

TEST_P(CheckoutKeyContract, AbortUndoesTheBookingAndTheHoldsNewExpiry) {
  clock_.Advance(Millis(4 * 60'000));
  auto claim = Claim("k1", hold_.hold_id);
  ASSERT_TRUE(claim.ok());
  auto booking = store_->StartCheckout(claim->lock(), hold_.hold_id, kTtl, kMaxLifetime);
  ASSERT_TRUE(booking.ok());
  EXPECT_EQ(store_->GetHold(hold_.hold_id, 1)->expires_at, kStart + Millis(14 * 60'000));
  ASSERT_TRUE(store_->AbortCheckout(claim->lock()).ok());

  EXPECT_EQ(store_->GetBooking(booking->id, 1)->status, BookingStatus::kFailed);
  EXPECT_EQ(store_->GetHold(hold_.hold_id, 1)->expires_at, hold_.expires_at);
  EXPECT_TRUE(PendingEventsOfAll(10)->empty()) << "nothing was offered or paid";
  // The seats end when they would have: just after the original ten minutes.
  clock_.Advance(Millis(6 * 60'000 + 1));
  EXPECT_EQ(Owners(st_)["E1"].status, SeatStatus::kAvailable);
  clock_.Advance(Millis(-6 * 60'000 - 1));
  // The key is gone: a retry with it starts afresh and checks out again.
  auto retry = Claim("k1", hold_.hold_id);
  ASSERT_TRUE(retry.ok());
  EXPECT_EQ(retry->phase, KeyPhase::kStarted);
  auto again = store_->StartCheckout(retry->lock(), hold_.hold_id, kTtl, kMaxLifetime);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_NE(again->id, booking->id);
}

TEST_P(CheckoutKeyContract, AbortLeavesAHoldExtendedMeanwhileAlone) {
  auto claim = Claim("k1", hold_.hold_id);
  ASSERT_TRUE(claim.ok());
  ASSERT_TRUE(store_->StartCheckout(claim->lock(), hold_.hold_id, kTtl, kMaxLifetime).ok());
  clock_.Advance(Millis(60'000));
  auto extended = store_->ExtendHold(hold_.hold_id, 1, kTtl, kMaxLifetime);
  ASSERT_TRUE(extended.ok());
  ASSERT_TRUE(store_->AbortCheckout(claim->lock()).ok());
  EXPECT_EQ(store_->GetHold(hold_.hold_id, 1)->expires_at, extended->expires_at);
}

TEST_P(CheckoutKeyContract, AStaleClaimCannotAbortAnotherRequestsWork) {
  auto dead = Claim("k1", hold_.hold_id);
  ASSERT_TRUE(dead.ok());
  auto booking = store_->StartCheckout(dead->lock(), hold_.hold_id, kTtl, kMaxLifetime);
  ASSERT_TRUE(booking.ok());
  clock_.Advance(kLease + Millis(1));
  auto retry = Claim("k1", hold_.hold_id);
  ASSERT_TRUE(retry.ok());
  ASSERT_TRUE(store_->AbortCheckout(dead->lock()).ok());
  EXPECT_EQ(store_->GetBooking(booking->id, 1)->status, BookingStatus::kPending);
  EXPECT_TRUE(store_->FinishCheckout(retry->lock(), "ses_1", "u", kStart, 201, "{}", "").value());
}

TEST_P(CheckoutKeyContract, FinishingAnAbandonedCheckoutDropsTheKey) {
  auto claim = Claim("k1", hold_.hold_id);
  ASSERT_TRUE(claim.ok());
  auto booking = store_->StartCheckout(claim->lock(), hold_.hold_id, kTtl, kMaxLifetime);
  ASSERT_TRUE(booking.ok());
  ASSERT_TRUE(store_->AbandonCheckout(booking->id).value());
  auto done = store_->FinishCheckout(claim->lock(), "ses_1", "u", kStart, 201, "{}", "");
  ASSERT_TRUE(done.ok());
  EXPECT_FALSE(done.value());
  EXPECT_EQ(Claim("k1", hold_.hold_id)->phase, KeyPhase::kStarted);
}

TEST_P(CheckoutKeyContract, ManyRequestsWithOneKeyMakeOneClaim) {
  constexpr int kThreads = 16;
  std::barrier start(kThreads);
  std::atomic<int> claimed{0}, in_progress{0}, other{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&] {
      start.arrive_and_wait();
      auto r = Claim("same", hold_.hold_id);
      if (r.ok()) {
        ++claimed;
      } else if (r.status().code() == Code::kInProgress) {
        ++in_progress;
      } else {
        ++other;
        ADD_FAILURE() << r.status().message();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(claimed.load(), 1);
  EXPECT_EQ(in_progress.load(), kThreads - 1);
  EXPECT_EQ(other.load(), 0);
}

TEST_P(CheckoutKeyContract, KeysArePurgedAfterTheirRetention) {
  ASSERT_TRUE(Claim("old", hold_.hold_id).ok());
  clock_.Advance(Millis(3'600'000));
  ASSERT_TRUE(Claim("new", hold_.hold_id).ok());
  EXPECT_EQ(store_->PurgeCheckoutKeys(Millis(3'600'000), 100).value(), 0);
  clock_.Advance(Millis(1));
  EXPECT_EQ(store_->PurgeCheckoutKeys(Millis(3'600'000), 100).value(), 1);
  EXPECT_EQ(Claim("new", hold_.hold_id).status().code(), Code::kInProgress);
  EXPECT_EQ(Claim("old", hold_.hold_id)->phase, KeyPhase::kStarted);
}

INSTANTIATE_TEST_SUITE_P(Engines, CheckoutKeyContract, AllEngines(), EngineName);

}  // namespace
}  // namespace boxoffice
