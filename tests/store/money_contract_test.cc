// The money rules, run on SQLite and PostgreSQL: whatever the gateway does, no seat is sold
// twice and no money is kept without a seat.
//  * checkout prices the seats by category, re-arms the hold, and allows one pending
//    checkout per hold;
//  * a payment settles exactly once per payment id: confirmed, or failed with a refund
//    intent and an event written in the same transaction;
//  * a late payment never takes seats back from a newer holder.
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "store/store_fixture.h"

namespace boxoffice {
namespace {

class MoneyContract : public StoreContract {
 protected:
  PaymentReport Paid(const Booking& b, const std::string& payment_id, bool succeeded = true) {
    return PaymentReport{payment_id, "ses_" + payment_id, std::to_string(b.id),
                         succeeded,  b.amount.amount,     b.amount.currency};
  }

  std::vector<OutboxEvent> Events() { return PendingEventsOfAll(1000).value(); }
  std::vector<Refund> Refunds() { return store_->PendingRefunds(1000).value(); }
};

TEST_P(MoneyContract, CheckoutPricesTheSeatsAndRearmsTheHold) {
  st_ = MakePricedShowtime();
  auto hold = TryHold(st_, 1, {"E1", "F1"});
  ASSERT_TRUE(hold.ok());
  clock_.Advance(Millis(5 * 60'000));
  auto b = store_->StartCheckout(hold->hold_id, 1, kTtl, kMaxLifetime);
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->status, BookingStatus::kPending);
  EXPECT_EQ(b->amount.amount, 1250 + 1650);
  EXPECT_EQ(b->amount.currency, "EUR");
  EXPECT_EQ(b->seats, (std::vector<std::string>{"E1", "F1"}));
  EXPECT_EQ(store_->GetHold(hold->hold_id, 1)->expires_at, kStart + Millis(15 * 60'000));

  auto again = store_->StartCheckout(hold->hold_id, 1, kTtl, kMaxLifetime);
  EXPECT_EQ(again.status().code(), Code::kCheckoutExists);
  EXPECT_EQ(again.status().id(), b->id);
  EXPECT_EQ(store_->StartCheckout(hold->hold_id, 2, kTtl, kMaxLifetime).status().code(),
            Code::kNotFound);
  EXPECT_EQ(store_->GetBooking(b->id, 1)->hold_id, hold->hold_id);
  EXPECT_EQ(store_->GetBooking(b->id, 2).status().code(), Code::kNotFound);
  EXPECT_EQ(store_->GetBooking(b->id + 1000, 1).status().code(), Code::kNotFound);

  ASSERT_TRUE(
      store_
          ->AttachPaymentSession(b->id, "ses_1", "https://pay/ses_1", kStart + Millis(13 * 60'000))
          .ok());
  EXPECT_TRUE(
      store_
          ->AttachPaymentSession(b->id, "ses_1", "https://pay/ses_1", kStart + Millis(13 * 60'000))
          .ok());
  EXPECT_EQ(store_->AttachPaymentSession(b->id, "ses_2", "https://pay/ses_2", kStart).code(),
            Code::kNotActive);
  EXPECT_EQ(store_->GetBooking(b->id, 1)->session_id, "ses_1");
}

TEST_P(MoneyContract, CheckoutNeedsAnActiveHold) {
  st_ = MakePricedShowtime();
  auto expired = TryHold(st_, 1, {"E1"});
  auto released = TryHold(st_, 1, {"E2"});
  ASSERT_TRUE(store_->ReleaseHold(released->hold_id, 1).ok());
  clock_.Advance(kTtl + Millis(1));
  EXPECT_EQ(store_->StartCheckout(expired->hold_id, 1, kTtl, kMaxLifetime).status().code(),
            Code::kNotActive);
  EXPECT_EQ(store_->StartCheckout(released->hold_id, 1, kTtl, kMaxLifetime).status().code(),
            Code::kNotActive);
}

TEST_P(MoneyContract, PaymentConfirmsOnceHoweverOftenItIsReported) {
  const Booking b = CheckedOut();
  EXPECT_EQ(store_->SettlePayment(Paid(b, "pay_1")).value(), Settlement::kConfirmed);
  EXPECT_EQ(store_->SettlePayment(Paid(b, "pay_1")).value(), Settlement::kDuplicate);
  auto booking = store_->GetBooking(b.id, 1);
  EXPECT_EQ(booking->status, BookingStatus::kConfirmed);
  EXPECT_EQ(booking->payment_id, "pay_1");
  auto owners = Owners(st_);
  EXPECT_EQ(owners["E1"].status, SeatStatus::kBooked);
  EXPECT_EQ(owners["F1"].status, SeatStatus::kBooked);
  EXPECT_EQ(store_->GetHold(hold_id_, 1)->state, HoldState::kBooked);
  EXPECT_EQ(store_->ReleaseHold(hold_id_, 1).status().code(), Code::kNotActive);
  // Booked seats stay booked long after the hold would have expired.
  clock_.Advance(Millis(3'600'000));
  EXPECT_EQ(TryHold(st_, 2, {"E1"}).status().code(), Code::kConflict);
  EXPECT_EQ(store_->SweepExpired(100).value(), 0);

  auto events = Events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, "BookingConfirmed");
  EXPECT_EQ(events[0].key, std::to_string(b.id));
  auto payload = nlohmann::json::parse(events[0].payload);
  EXPECT_EQ(payload["id"], events[0].event_id);
  EXPECT_EQ(payload["bookingId"], b.id);
  EXPECT_EQ(payload["showtimeId"], st_);
  EXPECT_EQ(payload["seats"], nlohmann::json::array({"E1", "F1"}));
  EXPECT_EQ(payload["amount"]["amount"], 2900);
  EXPECT_TRUE(Refunds().empty());

  // Another payment for the same booking is money without a seat: refunded.
  EXPECT_EQ(store_->SettlePayment(Paid(b, "pay_2")).value(), Settlement::kNotPendingRefunded);
  ASSERT_EQ(Refunds().size(), 1u);
  EXPECT_EQ(Refunds()[0].payment_id, "pay_2");
}

TEST_P(MoneyContract, ConcurrentDuplicateCallbacksSettleOnce) {
  const Booking b = CheckedOut();
  constexpr int kThreads = 8;
  std::barrier start(kThreads);
  std::atomic<int> confirmed{0}, duplicates{0}, errors{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&] {
      start.arrive_and_wait();
      auto r = store_->SettlePayment(Paid(b, "pay_same"));
      if (!r.ok()) {
        ++errors;
      } else if (r.value() == Settlement::kConfirmed) {
        ++confirmed;
      } else if (r.value() == Settlement::kDuplicate) {
        ++duplicates;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(confirmed.load(), 1);
  EXPECT_EQ(duplicates.load(), kThreads - 1);
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(Events().size(), 1u);
}

TEST_P(MoneyContract, LatePaymentNeverTakesSeatsFromANewerHolder) {
  const Booking b = CheckedOut();
  clock_.Advance(kTtl + Millis(1));
  auto newer = TryHold(st_, 2, {"E1"});
  ASSERT_TRUE(newer.ok());
  EXPECT_EQ(store_->SettlePayment(Paid(b, "pay_late")).value(), Settlement::kLateRefunded);
  EXPECT_EQ(store_->SettlePayment(Paid(b, "pay_late")).value(), Settlement::kDuplicate);
  EXPECT_EQ(store_->GetBooking(b.id, 1)->status, BookingStatus::kFailed);
  auto owners = Owners(st_);
  EXPECT_EQ(owners["E1"].hold_id, newer->hold_id);
  EXPECT_EQ(owners["F1"].status, SeatStatus::kAvailable);
  auto refunds = Refunds();
  ASSERT_EQ(refunds.size(), 1u);
  EXPECT_EQ(refunds[0].payment_id, "pay_late");
  EXPECT_EQ(refunds[0].booking_id, b.id);
  EXPECT_EQ(refunds[0].amount.amount, 2900);
  auto events = Events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, "BookingFailed");
}

// The audit of `boxoffice audit` (and of every benchmark run): clean after real purchases
// of every kind, and it sees each invariant broken behind the store's back.
TEST_P(MoneyContract, TheAuditCountsWhatWouldBreakTheInvariants) {
  const Booking b = CheckedOut();
  ASSERT_EQ(store_->SettlePayment(Paid(b, "pay_ok")).value(), Settlement::kConfirmed);
  auto late_hold = TryHold(st_, 2, {"E2"});
  ASSERT_TRUE(late_hold.ok());
  auto late = store_->StartCheckout(late_hold->hold_id, 2, kTtl, kMaxLifetime);
  ASSERT_TRUE(late.ok());
  clock_.Advance(kTtl + Millis(1));
  ASSERT_EQ(store_->SettlePayment(Paid(late.value(), "pay_late")).value(),
            Settlement::kLateRefunded);
  auto clean = store_->Audit();
  ASSERT_TRUE(clean.ok()) << clean.status().message();
  EXPECT_EQ(clean->violations(), 0);
  EXPECT_EQ(clean->seats_booked, 2);
  EXPECT_EQ(clean->bookings_confirmed, 1);
  EXPECT_EQ(clean->payments_succeeded, 2);
  EXPECT_EQ(clean->refunds_pending, 1);
  // A seat marked booked for nobody, a confirmed booking that lost a seat, a kept payment.
  RawSql("UPDATE show_seat SET status = 'BOOKED', hold_id = '" + late_hold->hold_id +
         "', booking_id = " + std::to_string(late->id) + " WHERE seat_code = 'E3'");
  RawSql(
      "UPDATE show_seat SET status = 'AVAILABLE', hold_id = NULL, customer_id = NULL,"
      " booking_id = NULL WHERE seat_code = 'F1'");
  RawSql("DELETE FROM refund");
  auto broken = store_->Audit().value();
  EXPECT_EQ(broken.booked_seats_without_confirmed_booking, 1);
  EXPECT_EQ(broken.confirmed_bookings_missing_seats, 1);
  EXPECT_EQ(broken.payments_unaccounted, 1);
  EXPECT_EQ(broken.violations(), 3);
}

TEST_P(MoneyContract, ACompletedRefundMarksTheBookingRefundedOnce) {
  const Booking b = CheckedOut();
  clock_.Advance(kTtl + Millis(1));
  ASSERT_EQ(store_->SettlePayment(Paid(b, "pay_late")).value(), Settlement::kLateRefunded);
  const std::string refund_id = Refunds()[0].refund_id;
  ASSERT_TRUE(store_->CompleteRefund(refund_id, "ref_gw_1").ok());
  ASSERT_TRUE(store_->CompleteRefund(refund_id, "ref_gw_1").ok());
  EXPECT_EQ(store_->GetBooking(b.id, 1)->status, BookingStatus::kRefunded);
  EXPECT_TRUE(Refunds().empty());
  auto events = Events();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].type, "BookingFailed");
  EXPECT_EQ(events[1].type, "BookingRefunded");
  EXPECT_EQ(store_->CompleteRefund(NewUuid(), "x").code(), Code::kNotFound);
  // A refund of a payment that matched no booking completes without touching bookings.
  ASSERT_EQ(
      store_->SettlePayment(PaymentReport{"pay_x", "", NoSuchBooking(), true, 5, "EUR"}).value(),
      Settlement::kUnknownRecorded);
  ASSERT_TRUE(store_->CompleteRefund(Refunds()[0].refund_id, "ref_gw_2").ok());
  EXPECT_EQ(Events().size(), 2u);
}

TEST_P(MoneyContract, LatePaymentAfterPlainExpiryIsRefundedToo) {
  const Booking b = CheckedOut();
  clock_.Advance(kTtl + Millis(1));
  EXPECT_EQ(store_->SettlePayment(Paid(b, "pay_late")).value(), Settlement::kLateRefunded);
  EXPECT_EQ(Owners(st_)["E1"].status, SeatStatus::kAvailable);
  EXPECT_EQ(Refunds().size(), 1u);
}

TEST_P(MoneyContract, PaymentAtTheLastMillisecondStillConfirms) {
  const Booking b = CheckedOut();
  clock_.Advance(kTtl);  // hold_expires_at >= now: exactly at expiry the hold stands
  EXPECT_EQ(store_->SettlePayment(Paid(b, "pay_edge")).value(), Settlement::kConfirmed);
}

TEST_P(MoneyContract, FailedPaymentKeepsTheHoldForAnotherTry) {
  const Booking b = CheckedOut();
  EXPECT_EQ(store_->SettlePayment(Paid(b, "pay_no", false)).value(), Settlement::kPaymentFailed);
  EXPECT_EQ(store_->GetBooking(b.id, 1)->status, BookingStatus::kFailed);
  EXPECT_EQ(store_->GetHold(hold_id_, 1)->state, HoldState::kHeld);
  EXPECT_TRUE(Refunds().empty());
  auto retry = store_->StartCheckout(hold_id_, 1, kTtl, kMaxLifetime);
  ASSERT_TRUE(retry.ok()) << retry.status().message();
  EXPECT_NE(retry->id, b.id);
  EXPECT_EQ(store_->SettlePayment(Paid(retry.value(), "pay_yes")).value(), Settlement::kConfirmed);
}

TEST_P(MoneyContract, PaymentsForNothingWeSoldAreRecordedAndRefunded) {
  st_ = MakePricedShowtime();
  EXPECT_EQ(
      store_->SettlePayment(PaymentReport{"pay_x", "ses_x", NoSuchBooking(), true, 500, "EUR"})
          .value(),
      Settlement::kUnknownRecorded);
  EXPECT_EQ(store_->SettlePayment(PaymentReport{"pay_y", "ses_y", "not-a-number", true, 700, "EUR"})
                .value(),
            Settlement::kUnknownRecorded);
  EXPECT_EQ(
      store_->SettlePayment(PaymentReport{"pay_z", "ses_z", NoSuchBooking(), false, 700, "EUR"})
          .value(),
      Settlement::kUnknownRecorded);
  EXPECT_EQ(
      store_->SettlePayment(PaymentReport{"pay_x", "ses_x", NoSuchBooking(), true, 500, "EUR"})
          .value(),
      Settlement::kDuplicate);
  auto refunds = Refunds();
  ASSERT_EQ(refunds.size(), 2u);
  EXPECT_EQ(refunds[0].booking_id, 0);
}

// API.md, payment callback: a report that names the booking but another session, amount or
// currency is not the booking's payment. It is recorded once (the same report again is a
// duplicate), refunded for its own amount if it succeeded, tied to no booking, and it
// changes nothing else: the booking stays PENDING with its seats held, no event is written,
// the booking's own payment confirms it afterwards, and the odd refund, once issued, leaves
// the confirmed booking alone.
TEST_P(MoneyContract, AnOddPaymentIsRefundedAloneAndTheBookingStaysPayable) {
  struct Case {
    const char* name;
    void (*skew)(PaymentReport&);
    bool succeeded;
    Settlement outcome;
  };
  const Case cases[] = {
      {"another session", [](PaymentReport& r) { r.session_id = "ses_other"; }, true,
       Settlement::kOtherSession},
      {"less money", [](PaymentReport& r) { r.amount -= 1; }, true,
       Settlement::kMismatchRefunded},
      {"more money", [](PaymentReport& r) { r.amount = 200'000; }, true,
       Settlement::kMismatchRefunded},
      {"another currency", [](PaymentReport& r) { r.currency = "USD"; }, true,
       Settlement::kMismatchRefunded},
      {"another amount, failed", [](PaymentReport& r) { r.amount = 100; }, false,
       Settlement::kMismatchRefunded},
  };
  int n = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string tag = std::to_string(++n);
    const std::string own_session = "ses_own_" + tag;
    const Booking b = CheckedOut(own_session);
    const size_t refunds_before = Refunds().size();
    const size_t events_before = Events().size();

    PaymentReport odd = Paid(b, "pay_odd_" + tag, c.succeeded);
    odd.session_id = own_session;
    c.skew(odd);
    EXPECT_EQ(store_->SettlePayment(odd).value(), c.outcome);
    EXPECT_EQ(store_->SettlePayment(odd).value(), Settlement::kDuplicate);
    auto booking = store_->GetBooking(b.id, 1);
    ASSERT_TRUE(booking.ok());
    EXPECT_EQ(booking->status, BookingStatus::kPending);
    EXPECT_EQ(booking->payment_id, "");
    EXPECT_EQ(Owners(st_)["E1"].status, SeatStatus::kHeld);
    EXPECT_EQ(Events().size(), events_before) << "no BookingFailed";
    std::vector<Refund> of_odd;
    for (const Refund& r : Refunds()) {
      if (r.payment_id == odd.payment_id) of_odd.push_back(r);
    }
    ASSERT_EQ(of_odd.size(), c.succeeded ? 1u : 0u);
    EXPECT_EQ(Refunds().size(), refunds_before + of_odd.size());
    if (c.succeeded) {
      EXPECT_EQ(of_odd[0].amount.amount, odd.amount);
      EXPECT_EQ(of_odd[0].amount.currency, odd.currency);
      EXPECT_EQ(of_odd[0].booking_id, 0) << "the odd refund is not the booking's";
    }

    // The customer pays through the booking's own session: confirmed, nothing more refunded.
    PaymentReport own = Paid(b, "pay_own_" + tag);
    own.session_id = own_session;
    EXPECT_EQ(store_->SettlePayment(own).value(), Settlement::kConfirmed);
    EXPECT_EQ(Owners(st_)["E1"].status, SeatStatus::kBooked);
    EXPECT_EQ(Refunds().size(), refunds_before + of_odd.size());
    auto events = Events();
    ASSERT_EQ(events.size(), events_before + 1);
    EXPECT_EQ(events.back().type, "BookingConfirmed");
    if (c.succeeded) {
      ASSERT_TRUE(store_->CompleteRefund(of_odd[0].refund_id, "ref_gw_" + tag).ok());
      EXPECT_EQ(store_->GetBooking(b.id, 1)->status, BookingStatus::kConfirmed);
      EXPECT_EQ(Events().size(), events_before + 1) << "no BookingRefunded";
    }
  }
}

// A signed report that names the right booking but another session is not this booking's
// payment: recorded and refunded, it confirms nothing and leaves the booking as it was, so
// its own session can still be paid.
TEST_P(MoneyContract, AReportForAnotherSessionNeverConfirms) {
  const Booking b = CheckedOut();
  ASSERT_TRUE(
      store_->AttachPaymentSession(b.id, "ses_own", "https://pay/own", clock_.Now() + kTtl).ok());
  PaymentReport stray = Paid(b, "pay_stray");
  stray.session_id = "ses_other";
  EXPECT_EQ(store_->SettlePayment(stray).value(), Settlement::kOtherSession);
  EXPECT_EQ(store_->GetBooking(b.id, 1)->status, BookingStatus::kPending);
  EXPECT_EQ(Owners(st_)["E1"].status, SeatStatus::kHeld);
  ASSERT_EQ(Refunds().size(), 1u);
  EXPECT_EQ(Refunds()[0].payment_id, "pay_stray");
  PaymentReport failed_stray = Paid(b, "pay_stray_failed", false);
  failed_stray.session_id = "ses_other";
  EXPECT_EQ(store_->SettlePayment(failed_stray).value(), Settlement::kOtherSession);
  EXPECT_EQ(store_->GetBooking(b.id, 1)->status, BookingStatus::kPending);
  // The booking's own session still settles it.
  PaymentReport own = Paid(b, "pay_own");
  own.session_id = "ses_own";
  EXPECT_EQ(store_->SettlePayment(own).value(), Settlement::kConfirmed);
  EXPECT_EQ(Owners(st_)["E1"].status, SeatStatus::kBooked);
  EXPECT_EQ(Refunds().size(), 1u);
}

// Prices are bounded and share one currency, asserted by the database as well as the API,
// and a hold's price is summed with checked arithmetic: a price row written around both
// makes checkout fail, never wrap or saturate.
TEST_P(MoneyContract, PricesAreBoundedAndSumExactly) {
  NewShowtime s;
  s.title = "t";
  s.cinema = "c";
  s.hall = "h";
  s.starts_at = kStart + Millis(86'400'000);
  s.rows = {{"A", 2, "standard"}, {"B", 2, "premium"}};
  s.prices = {{"standard", {10'000'001, "EUR"}}, {"premium", {1, "EUR"}}};
  EXPECT_FALSE(store_->CreateShowtime(s).ok()) << "over 10,000,000 minor units";
  s.prices = {{"standard", {100, "EUR"}}, {"premium", {100, "USD"}}};
  EXPECT_FALSE(store_->CreateShowtime(s).ok()) << "two currencies";
  s.prices = {{"standard", {10'000'000, "EUR"}}, {"premium", {0, "EUR"}}};
  auto id = store_->CreateShowtime(s);
  ASSERT_TRUE(id.ok()) << id.status().message();
  // Behind the API's and the database's back: a price near 2^62.
  if (GetParam() == Engine::kSqlite) {
    RawSql("DROP TRIGGER price_amount_range");
    RawSql("DROP TRIGGER price_amount_range_update");
  } else {
    RawSql("ALTER TABLE price DROP CONSTRAINT price_amount_range");
  }
  RawSql("UPDATE price SET amount = 4611686018427387904 WHERE showtime_id = " +
         std::to_string(id.value()) + " AND category = 'standard'");
  auto hold = TryHold(id.value(), 1, {"A1", "A2"});
  ASSERT_TRUE(hold.ok());
  auto b = store_->StartCheckout(hold->hold_id, 1, kTtl, kMaxLifetime);
  EXPECT_FALSE(b.ok()) << "summed to " << (b.ok() ? b->amount.amount : 0);
  EXPECT_EQ(store_->GetHold(hold->hold_id, 1)->state, HoldState::kHeld) << "nothing half-done";
}

TEST_P(MoneyContract, StaleCheckoutsAreClaimedByOneReconcilerAtATime) {
  st_ = MakePricedShowtime();
  std::vector<int64_t> ids;
  for (int i = 1; i <= 10; ++i) {
    auto hold = TryHold(st_, i, {"E" + std::to_string(i)});
    ids.push_back(store_->StartCheckout(hold->hold_id, i, kTtl, kMaxLifetime)->id);
  }
  const Millis after(15 * 60'000), lease(60'000);
  EXPECT_TRUE(store_->ClaimStaleCheckouts(after, lease, 100)->empty());  // too young
  clock_.Advance(after + Millis(1));
  std::atomic<int> claimed{0};
  std::mutex mu;
  std::set<int64_t> seen;
  std::vector<std::thread> threads;
  std::barrier start(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      start.arrive_and_wait();
      auto got = store_->ClaimStaleCheckouts(after, lease, 3);
      ASSERT_TRUE(got.ok());
      std::lock_guard lock(mu);
      for (const auto& b : got.value()) {
        EXPECT_TRUE(seen.insert(b.id).second) << "claimed twice: " << b.id;
        ++claimed;
      }
    });
  }
  for (auto& t : threads) t.join();
  auto rest = store_->ClaimStaleCheckouts(after, lease, 100);
  EXPECT_EQ(claimed.load() + static_cast<int>(rest->size()), 10);
  EXPECT_TRUE(store_->ClaimStaleCheckouts(after, lease, 100)->empty());  // all leased
  clock_.Advance(lease + Millis(1));
  EXPECT_EQ(store_->ClaimStaleCheckouts(after, lease, 100)->size(), 10u);  // leases ran out

  EXPECT_TRUE(store_->AbandonCheckout(ids[0]).value());
  EXPECT_FALSE(store_->AbandonCheckout(ids[0]).value());
  EXPECT_EQ(store_->GetBooking(ids[0], 1)->status, BookingStatus::kFailed);
  ASSERT_EQ(Events().size(), 1u);
  EXPECT_EQ(Events()[0].type, "BookingFailed");
}

TEST_P(MoneyContract, RecentBookingsAreCountedByStatus) {
  const Booking b = CheckedOut();
  auto hold = TryHold(st_, 2, {"E2"});
  ASSERT_TRUE(hold.ok());
  ASSERT_TRUE(store_->StartCheckout(hold->hold_id, 2, kTtl, kMaxLifetime).ok());
  ASSERT_EQ(store_->SettlePayment(Paid(b, "pay_1")).value(), Settlement::kConfirmed);
  auto counts = store_->CountRecentBookings(Millis(3'600'000));
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(counts.value(), (std::map<BookingStatus, int64_t>{{BookingStatus::kPending, 1},
                                                              {BookingStatus::kConfirmed, 1}}));
  clock_.Advance(Millis(3'600'001));
  EXPECT_TRUE(store_->CountRecentBookings(Millis(3'600'000))->empty());
}

// The installation id (Store::InstallationId, migration 0026) makes the service's key at
// the payment gateway unique per deployment: a UUID, the same on every call and after the
// database is opened again, and another one in every database (each shard has its own; a
// booking's id routes to its shard's).
TEST_P(MoneyContract, EachDatabaseKeepsItsOwnInstallationId) {
  const Booking b = CheckedOut();
  auto id = store_->InstallationId(b.id);
  ASSERT_TRUE(id.ok()) << id.status().message();
  EXPECT_TRUE(IsUuid(id.value())) << id.value();
  EXPECT_EQ(store_->InstallationId(b.id).value(), id.value());
  EXPECT_EQ(store_->InstallationId(b.id + 1).value(), id.value()) << "no such booking yet";

  std::set<std::string> ids;
  for (Store* db : Databases()) {
    auto own = db->InstallationId(b.id);
    ASSERT_TRUE(own.ok()) << own.status().message();
    EXPECT_TRUE(IsUuid(own.value())) << own.value();
    ids.insert(own.value());
  }
  EXPECT_EQ(ids.size(), Databases().size()) << "every shard its own";
  EXPECT_EQ(ids.count(id.value()), 1u) << "the booking's shard's";

  // The same databases opened again (a restart, another instance): the same ids. Another
  // database (a second deployment): another id.
  std::set<std::string> reopened;
  if (GetParam() == Engine::kSqlite) {
    SqliteOptions same;
    same.path = sqlite_path_;
    SqliteStore again(same, &clock_);
    reopened.insert(again.InstallationId(b.id).value());
  } else {
    for (const std::string& url : pg_urls_) {
      PgOptions same;
      same.url = url;
      PgStore again(same);
      reopened.insert(again.InstallationId(b.id).value());
    }
  }
  EXPECT_EQ(reopened, ids);
  const std::unique_ptr<Store> other = NewStore();  // a fresh file, or fresh schemas
  auto other_id = other->InstallationId(b.id);
  ASSERT_TRUE(other_id.ok()) << other_id.status().message();
  EXPECT_TRUE(IsUuid(other_id.value())) << other_id.value();
  EXPECT_EQ(ids.count(other_id.value()), 0u) << "another database, another id";
}

INSTANTIATE_TEST_SUITE_P(Engines, MoneyContract, AllEngines(), EngineName);

}  // namespace
}  // namespace boxoffice
