// A purchase's phases in one step each (Store::TryBeginCheckoutAsync, FinishCheckoutAsync,
// TryConfirmPaymentAsync; one statement each on PostgreSQL, migration 0013), awaited on an
// I/O loop: for the case all goes well they decide exactly what the general methods would;
// for every other case they change nothing and leave it to the general methods. SQLite has
// no one-step forms (nullopt always), so there the same checks show the general path.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/crypto.h"
#include "core/time_format.h"
#include "store/pg_store.h"
#include "store/store_fixture.h"
#include "support/loop_thread.h"

namespace boxoffice {
namespace {

using testing::LoopThread;

class PurchasePhases : public StoreContract {
 protected:
  bool OneStep() const { return GetParam() != Engine::kSqlite; }

  // The checkout begun in one step, nullopt when the general path must run, or the error.
  Result<std::optional<Store::CheckoutBegun>> Begin(int64_t customer, const std::string& key,
                                                    const std::string& hold_id) {
    Store::CheckoutBegun begun;
    auto r = loop_->Run(store_->TryBeginCheckoutAsync(IdempotencyKey{customer, key, hold_id},
                                                      hold_id, kLease, kTtl, kMaxLifetime, &begun));
    if (!r.ok()) return r.status();
    if (!r.value()) return std::optional<Store::CheckoutBegun>();
    return std::optional<Store::CheckoutBegun>(std::move(begun));
  }
  Result<std::optional<Settlement>> Confirm(const PaymentReport& report, Booking* confirmed) {
    return loop_->Run(store_->TryConfirmPaymentAsync(report, confirmed));
  }
  Result<bool> Finish(const KeyLock& lock, const std::string& session) {
    return loop_->Run(store_->FinishCheckoutAsync(lock, session, "https://pay/" + session,
                                                  clock_.Now() + Millis(5 * 60'000), 201,
                                                  "{\"body\":1}", ""));
  }
  // The key is not recorded: claiming it finds a fresh one (then drops it again).
  void ExpectNoKey(int64_t customer, const std::string& key, const std::string& hold_id) {
    auto fresh = store_->ClaimCheckoutKey(IdempotencyKey{customer, key, hold_id}, kLease);
    if (GetParam() == Engine::kShards && !IsUuid(hold_id)) {
      // Keys live on their hold's shard, and this names none (the API sends only UUIDs).
      EXPECT_EQ(fresh.status().code(), Code::kNotFound);
      return;
    }
    ASSERT_TRUE(fresh.ok()) << fresh.status().message();
    EXPECT_EQ(fresh->phase, KeyPhase::kStarted);
    EXPECT_TRUE(store_->AbortCheckout(fresh->lock()).ok());
  }
  PaymentReport Paid(const Booking& b, const std::string& payment_id, const std::string& session) {
    return PaymentReport{payment_id, session,         std::to_string(b.id),
                         true,       b.amount.amount, b.amount.currency};
  }
  void TearDown() override { loop_.reset(); }  // its connections close before the store

  std::unique_ptr<LoopThread> loop_ = std::make_unique<LoopThread>();
};

TEST_P(PurchasePhases, ANewKeyIsClaimedAndBookedInOneStep) {
  st_ = MakePricedShowtime();
  auto hold = TryHold(st_, 1, {"E1", "F1"});
  ASSERT_TRUE(hold.ok());
  clock_.Advance(Millis(5 * 60'000));
  auto begun = Begin(1, "k1", hold->hold_id);
  ASSERT_TRUE(begun.ok()) << begun.status().message();
  if (!OneStep()) {
    EXPECT_FALSE(begun.value());
    ExpectNoKey(1, "k1", hold->hold_id);
    return;
  }
  ASSERT_TRUE(begun.value());
  const Booking& b = begun.value()->booking;
  const IdempotencyRecord& record = begun.value()->record;
  // As StartCheckout: priced by category, PENDING, the hold re-armed to now + ttl.
  EXPECT_EQ(b.status, BookingStatus::kPending);
  EXPECT_EQ(b.amount.amount, 1250 + 1650);
  EXPECT_EQ(b.amount.currency, "EUR");
  EXPECT_EQ(b.seats, (std::vector<std::string>{"E1", "F1"}));
  EXPECT_EQ(b.created_at, clock_.Now());
  EXPECT_EQ(b.hold_expires_at, kStart + Millis(15 * 60'000));
  EXPECT_EQ(store_->GetHold(hold->hold_id, 1)->expires_at, kStart + Millis(15 * 60'000));
  EXPECT_EQ(Owners(st_)["E1"].status, SeatStatus::kHeld);
  auto stored = store_->GetBooking(b.id, 1);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->hold_id, hold->hold_id);
  EXPECT_EQ(stored->amount.amount, 2900);
  // As ClaimCheckoutKey then StartCheckout(lock): the key at its second recovery point.
  EXPECT_EQ(record.phase, KeyPhase::kBookingCreated);
  EXPECT_EQ(record.booking_id, b.id);
  EXPECT_EQ(record.hold_expiry_before, kStart + Millis(10 * 60'000));
  EXPECT_EQ(record.hold_expiry_after, kStart + Millis(15 * 60'000));
  EXPECT_EQ(record.locked_until, clock_.Now() + kLease);
  EXPECT_EQ(
      store_->ClaimCheckoutKey(IdempotencyKey{1, "k1", hold->hold_id}, kLease).status().code(),
      Code::kInProgress);
  EXPECT_EQ(store_->StartCheckout(hold->hold_id, 1, kTtl, kMaxLifetime).status().code(),
            Code::kCheckoutExists);

  // The last phase, one step too; then the response is replayed.
  auto finished = Finish(record.lock(), "ses_k1");
  ASSERT_TRUE(finished.ok()) << finished.status().message();
  EXPECT_TRUE(finished.value());
  EXPECT_EQ(store_->GetBooking(b.id, 1)->session_id, "ses_k1");
  auto replay = store_->ClaimCheckoutKey(IdempotencyKey{1, "k1", hold->hold_id}, kLease);
  ASSERT_TRUE(replay.ok());
  EXPECT_EQ(replay->phase, KeyPhase::kFinished);
  EXPECT_EQ(replay->response_status, 201);
  EXPECT_EQ(replay->response_body, "{\"body\":1}");
  EXPECT_EQ(
      store_->ClaimCheckoutKey(IdempotencyKey{1, "k1", NewHoldId(st_)}, kLease).status().code(),
      Code::kKeyReused);
}

TEST_P(PurchasePhases, EveryOtherCheckoutCaseChangesNothing) {
  st_ = MakePricedShowtime();
  // A key used before: the general path carries it on or replays it.
  auto first = TryHold(st_, 1, {"E1"});
  ASSERT_TRUE(first.ok());
  auto claimed = store_->ClaimCheckoutKey(IdempotencyKey{1, "used", first->hold_id}, kLease);
  ASSERT_TRUE(claimed.ok());
  auto begun = Begin(1, "used", first->hold_id);
  ASSERT_TRUE(begun.ok());
  EXPECT_FALSE(begun.value());
  EXPECT_EQ(store_->GetHold(first->hold_id, 1)->expires_at, kStart + kTtl);
  EXPECT_EQ(PendingEventsOfAll(10)->size(), 0u);

  // Another customer's hold, a released hold, a pending checkout, an expired hold, a hold
  // id that is no hold.
  auto released = TryHold(st_, 1, {"E2"});
  ASSERT_TRUE(released.ok());
  ASSERT_TRUE(store_->ReleaseHold(released->hold_id, 1).ok());
  auto pending = TryHold(st_, 1, {"E3"});
  ASSERT_TRUE(pending.ok());
  auto checkout = store_->StartCheckout(pending->hold_id, 1, kTtl, kMaxLifetime);
  ASSERT_TRUE(checkout.ok());
  auto expiring = TryHold(st_, 1, {"E4"}, Millis(1'000));
  ASSERT_TRUE(expiring.ok());
  clock_.Advance(Millis(2'000));
  const std::vector<std::pair<int64_t, std::string>> cases = {
      {2, first->hold_id},    {1, released->hold_id}, {1, pending->hold_id},
      {1, expiring->hold_id}, {1, NewHoldId(st_)},    {1, "not-a-uuid"}};
  for (const auto& [customer, hold_id] : cases) {
    SCOPED_TRACE(hold_id);
    auto none = Begin(customer, "fresh", hold_id);
    ASSERT_TRUE(none.ok()) << none.status().message();
    EXPECT_FALSE(none.value());
    ExpectNoKey(customer, "fresh", hold_id);
  }
  EXPECT_EQ(store_->GetHold(pending->hold_id, 1)->expires_at, *checkout->hold_expires_at);
  EXPECT_EQ(Owners(st_)["E4"].status, SeatStatus::kAvailable);
}

TEST_P(PurchasePhases, FinishingIsRefusedToALostClaimAndDropsTheKeyOfAnAbandonedBooking) {
  st_ = MakePricedShowtime();
  auto hold = TryHold(st_, 1, {"E1"});
  ASSERT_TRUE(hold.ok());
  auto record = store_->ClaimCheckoutKey(IdempotencyKey{1, "k", hold->hold_id}, kLease);
  ASSERT_TRUE(record.ok());
  auto b = store_->StartCheckout(record->lock(), hold->hold_id, kTtl, kMaxLifetime);
  ASSERT_TRUE(b.ok());
  KeyLock stolen = record->lock();
  stolen.token = NewUuidOnShard(ShardOfUuid(record->token));  // the claim's shard refuses it
  EXPECT_EQ(Finish(stolen, "ses_x").status().code(), Code::kInProgress);
  EXPECT_EQ(store_->GetBooking(b->id, 1)->session_id, "");

  ASSERT_TRUE(store_->AbandonCheckout(b->id).value());
  auto finished = Finish(record->lock(), "ses_k");
  ASSERT_TRUE(finished.ok());
  EXPECT_FALSE(finished.value());
  EXPECT_EQ(store_->GetBooking(b->id, 1)->status, BookingStatus::kFailed);
  EXPECT_EQ(store_->GetBooking(b->id, 1)->session_id, "");
  ExpectNoKey(1, "k", hold->hold_id);
}

TEST_P(PurchasePhases, APaymentConfirmsInOneStepWithItsEventOnce) {
  const Booking b = CheckedOut("ses_1");
  clock_.Advance(Millis(60'000));
  Booking confirmed;
  auto outcome = Confirm(Paid(b, "pay_1", "ses_1"), &confirmed);
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  if (!OneStep()) {
    EXPECT_FALSE(outcome.value());
    EXPECT_EQ(store_->SettlePayment(Paid(b, "pay_1", "ses_1")).value(), Settlement::kConfirmed);
  } else {
    ASSERT_TRUE(outcome.value());
    EXPECT_EQ(*outcome.value(), Settlement::kConfirmed);
    // The booking as it now is, as a read of it would give.
    auto read = store_->GetBooking(b.id, 1);
    ASSERT_TRUE(read.ok());
    EXPECT_EQ(confirmed.id, b.id);
    EXPECT_EQ(confirmed.status, BookingStatus::kConfirmed);
    EXPECT_EQ(confirmed.payment_id, "pay_1");
    EXPECT_EQ(confirmed.hold_id, read->hold_id);
    EXPECT_EQ(confirmed.customer_id, 1);
    EXPECT_EQ(confirmed.seats, read->seats);
    EXPECT_EQ(confirmed.amount.amount, read->amount.amount);
    EXPECT_EQ(confirmed.amount.currency, read->amount.currency);
    EXPECT_EQ(confirmed.session_id, "ses_1");
    EXPECT_EQ(confirmed.payment_url, read->payment_url);
    EXPECT_EQ(confirmed.payment_expires_at, read->payment_expires_at);
    EXPECT_EQ(confirmed.created_at, read->created_at);
    auto again = Confirm(Paid(b, "pay_1", "ses_1"), nullptr);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again.value(), std::optional<Settlement>(Settlement::kDuplicate));
  }
  EXPECT_EQ(store_->SettlePayment(Paid(b, "pay_1", "ses_1")).value(), Settlement::kDuplicate);
  auto booking = store_->GetBooking(b.id, 1);
  EXPECT_EQ(booking->status, BookingStatus::kConfirmed);
  EXPECT_EQ(booking->payment_id, "pay_1");
  EXPECT_EQ(Owners(st_)["E1"].status, SeatStatus::kBooked);
  EXPECT_EQ(Owners(st_)["F1"].status, SeatStatus::kBooked);
  EXPECT_EQ(store_->GetHold(hold_id_, 1)->state, HoldState::kBooked);
  auto events = PendingEventsOfAll(10).value();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, "BookingConfirmed");
  EXPECT_EQ(events[0].key, std::to_string(b.id));
  auto payload = nlohmann::json::parse(events[0].payload);
  EXPECT_EQ(payload["id"], events[0].event_id);
  EXPECT_EQ(payload["type"], "BookingConfirmed");
  EXPECT_EQ(payload["bookingId"], b.id);
  EXPECT_EQ(payload["showtimeId"], st_);
  EXPECT_EQ(payload["seats"], nlohmann::json::array({"E1", "F1"}));
  EXPECT_EQ(payload["amount"]["amount"], 2900);
  EXPECT_EQ(payload["amount"]["currency"], "EUR");
  EXPECT_EQ(payload["occurredAt"], FormatRfc3339(clock_.Now()));
  // Byte for byte what the general path writes: which path ran never shows downstream.
  EXPECT_EQ(events[0].payload,
            BookingEventJson(events[0].event_id, "BookingConfirmed", *booking, clock_.Now()));
  auto audit = store_->Audit();
  ASSERT_TRUE(audit.ok());
  EXPECT_EQ(audit->violations(), 0);
}

// Callbacks that arrive together on a loop are decided by one statement on PostgreSQL
// (migration 0016), each as it would be alone, one after the other: every booking is
// confirmed by exactly one of its payments, a payment reported twice is a duplicate, and
// every report the batch could not confirm changed nothing (its payment row is gone) and is
// left to the general path, which then refunds it.
TEST_P(PurchasePhases, CallbacksThatArriveTogetherAreDecidedOneAfterTheOther) {
  st_ = MakePricedShowtime();
  constexpr int kBookings = 8;
  std::vector<Booking> bookings;
  for (int i = 1; i <= kBookings; ++i) {
    bookings.push_back(CheckedOutOn(st_, i, {"E" + std::to_string(i)}, "ses_" + std::to_string(i)));
    ASSERT_GT(bookings.back().id, 0);
  }
  std::vector<PaymentReport> reports;
  for (int i = 0; i < kBookings; ++i) {
    reports.push_back(
        Paid(bookings[i], "pay_" + std::to_string(i + 1), "ses_" + std::to_string(i + 1)));
  }
  reports.push_back(reports[0]);                                    // 8: delivered twice
  reports.push_back(Paid(bookings[1], "pay_2b", "ses_2"));          // 9: a second payment
  PaymentReport short_paid = Paid(bookings[2], "pay_3c", "ses_3");  // 10: a wrong amount
  short_paid.amount -= 1;
  reports.push_back(short_paid);
  PaymentReport unknown = Paid(bookings[3], "pay_x", "ses_4");  // 11: no such booking
  unknown.reference = std::to_string(bookings.back().id + 1000);
  reports.push_back(unknown);
  std::vector<Booking> confirmed(reports.size());
  std::vector<io::asio::awaitable<Result<std::optional<Settlement>>>> works;
  for (size_t i = 0; i < reports.size(); ++i) {
    works.push_back(store_->TryConfirmPaymentAsync(reports[i], &confirmed[i]));
  }
  auto outcomes = loop_->RunAll(std::move(works));
  for (size_t i = 0; i < outcomes.size(); ++i) {
    ASSERT_TRUE(outcomes[i].ok()) << i << ": " << outcomes[i].status().message();
  }
  auto outcome = [&](size_t i) { return outcomes[i].value(); };
  const std::optional<Settlement> kConfirmed(Settlement::kConfirmed),
      kDuplicate(Settlement::kDuplicate), kGeneral;
  if (!OneStep()) {
    for (size_t i = 0; i < outcomes.size(); ++i) EXPECT_EQ(outcome(i), kGeneral) << i;
    return;
  }
  for (int i = 0; i < kBookings; ++i) {
    EXPECT_EQ(outcome(i), kConfirmed) << i;
    EXPECT_EQ(confirmed[i].id, bookings[i].id);
    EXPECT_EQ(confirmed[i].payment_id, "pay_" + std::to_string(i + 1));
    EXPECT_EQ(confirmed[i].status, BookingStatus::kConfirmed);
  }
  EXPECT_EQ(outcome(8), kDuplicate);
  EXPECT_EQ(outcome(9), kGeneral);
  EXPECT_EQ(outcome(10), kGeneral);
  EXPECT_EQ(outcome(11), kGeneral);
  if (auto* pg = dynamic_cast<PgStore*>(store_.get())) {  // (shards count each their own)
    EXPECT_EQ(pg->batched_confirms(), reports.size());
    EXPECT_LT(pg->confirm_statements(), reports.size()) << "reports that arrived together shared";
  }
  // Only the confirming payments were recorded; the others are the general path's to
  // decide, and it refunds them.
  for (size_t i = 9; i < reports.size(); ++i) {
    const Settlement s = store_->SettlePayment(reports[i]).value();
    EXPECT_NE(s, Settlement::kConfirmed) << i;
    EXPECT_NE(s, Settlement::kDuplicate) << i;
  }
  EXPECT_EQ(store_->PendingRefunds(100)->size(), 3u);
  EXPECT_EQ(PendingEventsOfAll(100)->size(), static_cast<size_t>(kBookings));
  for (int i = 1; i <= kBookings; ++i) {
    EXPECT_EQ(Owners(st_)["E" + std::to_string(i)].status, SeatStatus::kBooked);
  }
  auto audit = store_->Audit();
  ASSERT_TRUE(audit.ok());
  EXPECT_EQ(audit->violations(), 0);
}

// One batch of callbacks for bookings of three showtimes, several seats each, and one whose
// hold expired: every seat is booked for its own booking, the expired one changes nothing,
// and each event names its booking's seats (the audit checks each seat names its booking).
TEST_P(PurchasePhases, ABatchAcrossShowtimesBooksEverySeatForItsOwnBooking) {
  std::vector<int64_t> showtimes = {MakePricedShowtime(), MakePricedShowtime(),
                                    MakePricedShowtime()};
  struct Bought {
    Booking booking;
    std::string session;
  };
  std::vector<Bought> bought;
  int customer = 1;
  for (int64_t st : showtimes) {
    for (const std::vector<std::string>& seats :
         {std::vector<std::string>{"E1", "E2", "F3"}, std::vector<std::string>{"E5"}}) {
      const std::string session = "ses_" + std::to_string(customer);
      bought.push_back({CheckedOutOn(st, customer, seats, session), session});
      ASSERT_GT(bought.back().booking.id, 0);
      ++customer;
    }
  }
  // The last booking's hold runs out: a 1 ms hold, checked out (its TTL kept short).
  auto short_hold = TryHold(showtimes[1], 99, {"F9"}, Millis(1));
  ASSERT_TRUE(short_hold.ok());
  auto late = store_->StartCheckout(short_hold->hold_id, 99, Millis(1), Millis(1));
  ASSERT_TRUE(late.ok()) << late.status().message();
  ASSERT_TRUE(store_
                  ->AttachPaymentSession(late->id, "ses_late", "https://pay/late",
                                         clock_.Now() + Millis(5 * 60'000))
                  .ok());
  clock_.Advance(Millis(2));
  std::vector<PaymentReport> reports;
  // Given in reverse, so neither payment-id nor booking-id order is the order given.
  for (auto it = bought.rbegin(); it != bought.rend(); ++it) {
    reports.push_back(Paid(it->booking, "pay_" + it->session, it->session));
  }
  reports.push_back(Paid(late.value(), "pay_late", "ses_late"));
  std::vector<Booking> confirmed(reports.size());
  std::vector<io::asio::awaitable<Result<std::optional<Settlement>>>> works;
  for (size_t i = 0; i < reports.size(); ++i) {
    works.push_back(store_->TryConfirmPaymentAsync(reports[i], &confirmed[i]));
  }
  auto outcomes = loop_->RunAll(std::move(works));
  for (const auto& o : outcomes) ASSERT_TRUE(o.ok()) << o.status().message();
  if (!OneStep()) {
    for (const auto& o : outcomes) EXPECT_EQ(o.value(), std::nullopt);
    return;
  }
  for (size_t i = 0; i + 1 < reports.size(); ++i) {
    const Booking& b = bought[bought.size() - 1 - i].booking;
    EXPECT_EQ(outcomes[i].value(), std::optional<Settlement>(Settlement::kConfirmed)) << i;
    EXPECT_EQ(confirmed[i].id, b.id) << i;
    EXPECT_EQ(confirmed[i].seats, b.seats) << i;
    EXPECT_EQ(confirmed[i].payment_id, reports[i].payment_id) << i;
    auto owners = Owners(b.showtime_id);
    for (const auto& seat : b.seats) {
      EXPECT_EQ(owners[seat].status, SeatStatus::kBooked) << b.showtime_id << seat;
      EXPECT_EQ(owners[seat].hold_id, b.hold_id) << b.showtime_id << seat;
    }
    auto read = store_->GetBooking(b.id, b.customer_id);
    EXPECT_EQ(read->status, BookingStatus::kConfirmed);
    EXPECT_EQ(read->payment_id, reports[i].payment_id);
  }
  EXPECT_EQ(outcomes.back().value(), std::nullopt)
      << "the expired hold's payment goes the general way";
  EXPECT_EQ(store_->GetBooking(late->id, 99)->status, BookingStatus::kPending);
  EXPECT_EQ(Owners(showtimes[1])["F9"].status, SeatStatus::kAvailable);
  auto events = PendingEventsOfAll(100).value();
  ASSERT_EQ(events.size(), bought.size());
  for (const auto& e : events) {
    auto payload = nlohmann::json::parse(e.payload);
    const auto it = std::find_if(bought.begin(), bought.end(), [&](const Bought& x) {
      return x.booking.id == payload["bookingId"].get<int64_t>();
    });
    ASSERT_NE(it, bought.end());
    EXPECT_EQ(payload["seats"], nlohmann::json(it->booking.seats));
    EXPECT_EQ(payload["showtimeId"], it->booking.showtime_id);
  }
  EXPECT_EQ(store_->SettlePayment(reports.back()).value(), Settlement::kLateRefunded);
  auto audit = store_->Audit();
  ASSERT_TRUE(audit.ok());
  EXPECT_EQ(audit->violations(), 0);
}

// A booking row that names a seat twice (never written by boxoffice; a hand-edited or
// damaged row) does not own all it names: its payment goes the general way, and the other
// reports of its batch are decided as usual.
TEST_P(PurchasePhases, ABookingThatNamesASeatTwiceIsLeftToTheGeneralPath) {
  if (!OneStep()) return;  // SQLite has no one-step confirmation to ask
  const Booking b = CheckedOut("ses_1");
  const Booking other = CheckedOutOn(st_, 2, {"E5"}, "ses_2");
  ASSERT_GT(other.id, 0);
  RawSql("UPDATE booking SET seats = ARRAY['E1', 'E1'] WHERE booking_id = " + std::to_string(b.id));
  std::vector<io::asio::awaitable<Result<std::optional<Settlement>>>> works;
  works.push_back(store_->TryConfirmPaymentAsync(Paid(other, "pay_2", "ses_2"), nullptr));
  works.push_back(store_->TryConfirmPaymentAsync(Paid(b, "pay_1", "ses_1"), nullptr));
  works.push_back(store_->TryConfirmPaymentAsync(Paid(other, "pay_2", "ses_2"), nullptr));
  auto outcomes = loop_->RunAll(std::move(works));
  for (const auto& o : outcomes) ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(outcomes[0].value(), std::optional<Settlement>(Settlement::kConfirmed));
  EXPECT_EQ(outcomes[1].value(), std::nullopt);
  EXPECT_EQ(outcomes[2].value(), std::optional<Settlement>(Settlement::kDuplicate));
  EXPECT_EQ(store_->GetBooking(b.id, 1)->status, BookingStatus::kPending);
  EXPECT_EQ(Owners(st_)["E1"].status, SeatStatus::kHeld);
}

// A late payment delivered twice, both copies in one batch: the first copy's row is taken
// back (the hold expired), so the second is never answered as its duplicate; the general
// path then records and refunds the payment once.
TEST_P(PurchasePhases, ALatePaymentDeliveredTwiceTogetherIsNeverADuplicateOfNothing) {
  const Booking b = CheckedOut("ses_1");
  clock_.Advance(kMaxLifetime + Millis(1));  // the hold is over
  std::vector<io::asio::awaitable<Result<std::optional<Settlement>>>> works;
  works.push_back(store_->TryConfirmPaymentAsync(Paid(b, "pay_1", "ses_1"), nullptr));
  works.push_back(store_->TryConfirmPaymentAsync(Paid(b, "pay_1", "ses_1"), nullptr));
  auto outcomes = loop_->RunAll(std::move(works));
  for (const auto& outcome : outcomes) {
    ASSERT_TRUE(outcome.ok()) << outcome.status().message();
    EXPECT_EQ(outcome.value(), std::nullopt) << "left to the general path";
  }
  if (auto* pg = dynamic_cast<PgStore*>(store_.get()); pg && OneStep()) {
    EXPECT_EQ(pg->confirm_statements(), 1u) << "both copies went in one statement";
  }
  EXPECT_EQ(store_->SettlePayment(Paid(b, "pay_1", "ses_1")).value(), Settlement::kLateRefunded);
  EXPECT_EQ(store_->SettlePayment(Paid(b, "pay_1", "ses_1")).value(), Settlement::kDuplicate);
  EXPECT_EQ(store_->PendingRefunds(100)->size(), 1u);
  auto audit = store_->Audit();
  ASSERT_TRUE(audit.ok());
  EXPECT_EQ(audit->violations(), 0);
}

// A wrong amount, another session, a failed payment, a hold that expired, an unknown
// reference: no one-step decision, nothing recorded; the general path then decides.
TEST_P(PurchasePhases, EveryOtherPaymentGoesTheGeneralWay) {
  const Booking b = CheckedOut("ses_1");
  PaymentReport cheap = Paid(b, "pay_cheap", "ses_1");
  cheap.amount -= 1;
  PaymentReport other = Paid(b, "pay_other", "ses_2");
  PaymentReport failed = Paid(b, "pay_failed", "ses_1");
  failed.succeeded = false;
  PaymentReport unknown = Paid(b, "pay_unknown", "ses_1");
  unknown.reference = std::to_string(b.id + 1000);
  for (const PaymentReport& report : {cheap, other, failed, unknown}) {
    SCOPED_TRACE(report.payment_id);
    auto none = Confirm(report, nullptr);
    ASSERT_TRUE(none.ok()) << none.status().message();
    EXPECT_FALSE(none.value());
    EXPECT_EQ(store_->GetBooking(b.id, 1)->status, BookingStatus::kPending);
  }
  clock_.Advance(kTtl + Millis(1));
  auto late = Confirm(Paid(b, "pay_late", "ses_1"), nullptr);
  ASSERT_TRUE(late.ok());
  EXPECT_FALSE(late.value());
  // Nothing was recorded: the general path sees each payment for the first time.
  EXPECT_EQ(store_->SettlePayment(other).value(), Settlement::kOtherSession);
  EXPECT_EQ(store_->SettlePayment(Paid(b, "pay_late", "ses_1")).value(), Settlement::kLateRefunded);
  EXPECT_EQ(store_->PendingRefunds(10)->size(), 2u);
}

// Checkouts that arrive together on a loop are decided by one statement on PostgreSQL
// (migration 0033), each as it would be alone, one after the other: fifty customers each
// get their booking; a key sent twice is the first request's, a hold checked out twice is
// the first key's, and another customer's hold, a released or expired hold and a key used
// before change nothing and go the general way. Their last phases, together again: each
// finishes once, a claim taken over is refused, an abandoned booking's key is dropped.
TEST_P(PurchasePhases, CheckoutsThatArriveTogetherAreDecidedOneAfterTheOther) {
  st_ = MakeShowtime({{"A", 25}, {"B", 25}, {"C", 25}});
  auto seat = [](int i) {
    return std::string(1, static_cast<char>('A' + i / 25)) + std::to_string(i % 25 + 1);
  };
  constexpr int kCustomers = 50;
  struct Ask {
    int64_t customer;
    std::string key;
    std::string hold_id;
  };
  std::vector<Ask> asks;
  for (int i = 0; i < kCustomers; ++i) {
    auto hold = TryHold(st_, 100 + i, {seat(i)});
    ASSERT_TRUE(hold.ok()) << hold.status().message();
    asks.push_back({100 + i, "k" + std::to_string(i), hold->hold_id});
  }
  auto released = TryHold(st_, 200, {seat(60)});
  ASSERT_TRUE(released.ok());
  ASSERT_TRUE(store_->ReleaseHold(released->hold_id, 200).ok());
  auto expiring = TryHold(st_, 201, {seat(61)}, Millis(1'000));
  ASSERT_TRUE(expiring.ok());
  auto used = TryHold(st_, 202, {seat(62)});
  ASSERT_TRUE(used.ok());
  ASSERT_TRUE(store_->ClaimCheckoutKey(IdempotencyKey{202, "used", used->hold_id}, kLease).ok());
  clock_.Advance(Millis(2'000));
  asks.push_back({100, "k0", asks[0].hold_id});          // 50: a key sent twice
  asks.push_back({101, "again", asks[1].hold_id});       // 51: a hold checked out twice
  asks.push_back({102, "theirs", asks[3].hold_id});      // 52: another customer's hold
  asks.push_back({200, "released", released->hold_id});  // 53
  asks.push_back({201, "expired", expiring->hold_id});   // 54
  asks.push_back({202, "used", used->hold_id});          // 55: a key recorded before
  std::vector<Store::CheckoutBegun> begun(asks.size());
  std::vector<io::asio::awaitable<Result<bool>>> works;
  for (size_t i = 0; i < asks.size(); ++i) {
    const Ask& a = asks[i];
    works.push_back(store_->TryBeginCheckoutAsync(IdempotencyKey{a.customer, a.key, a.hold_id},
                                                  a.hold_id, kLease, kTtl, kMaxLifetime,
                                                  &begun[i]));
  }
  auto outcomes = loop_->RunAll(std::move(works));
  for (size_t i = 0; i < outcomes.size(); ++i) {
    ASSERT_TRUE(outcomes[i].ok()) << i << ": " << outcomes[i].status().message();
    if (!OneStep() || i >= kCustomers) {
      EXPECT_FALSE(outcomes[i].value()) << i;
    }
  }
  if (!OneStep()) return;
  for (int i = 0; i < kCustomers; ++i) {
    SCOPED_TRACE(i);
    ASSERT_TRUE(outcomes[i].value());
    const Booking& b = begun[i].booking;
    EXPECT_EQ(b.customer_id, 100 + i);
    EXPECT_EQ(b.hold_id, asks[i].hold_id);
    EXPECT_EQ(b.seats, std::vector<std::string>{seat(i)});
    EXPECT_EQ(b.amount.amount, 1250);
    EXPECT_EQ(b.hold_expires_at, clock_.Now() + kTtl);
    EXPECT_EQ(begun[i].record.hold_expiry_before, kStart + kTtl);
    EXPECT_EQ(store_->GetBooking(b.id, 100 + i)->status, BookingStatus::kPending);
    EXPECT_EQ(store_->GetHold(asks[i].hold_id, 100 + i)->expires_at, clock_.Now() + kTtl);
    EXPECT_EQ(store_->ClaimCheckoutKey(IdempotencyKey{100 + i, asks[i].key, asks[i].hold_id},
                                       kLease)
                  .status()
                  .code(),
              Code::kInProgress)
        << "the key is at its second recovery point, the claim the batch's";
  }
  for (size_t i = 51; i <= 54; ++i) ExpectNoKey(asks[i].customer, asks[i].key, asks[i].hold_id);
  EXPECT_EQ(store_->ClaimCheckoutKey(IdempotencyKey{202, "used", used->hold_id}, kLease)
                .status()
                .code(),
            Code::kInProgress);
  // One after the other, the general path now gives each the answer it would have had.
  EXPECT_EQ(store_->StartCheckout(asks[51].hold_id, 101, kTtl, kMaxLifetime).status().code(),
            Code::kCheckoutExists);
  EXPECT_EQ(store_->GetBooking(begun[51].booking.id, 101).status().code(), Code::kNotFound);
  if (auto* pg = dynamic_cast<PgStore*>(store_.get())) {  // (shards count each their own)
    EXPECT_EQ(pg->batched_checkouts(), asks.size());
    EXPECT_LT(pg->checkout_statements(), asks.size()) << "checkouts that arrived together shared";
  }

  // The last phases, together: a claim taken over and a second copy of a finish are
  // refused; the booking the reconciler abandoned drops its key.
  ASSERT_TRUE(store_->AbandonCheckout(begun[7].booking.id).value());
  std::vector<KeyLock> locks;
  for (int i = 0; i < kCustomers; ++i) locks.push_back(begun[i].record.lock());
  KeyLock stolen = locks[3];
  stolen.token = NewUuidOnShard(ShardOfUuid(locks[3].token));
  locks.push_back(stolen);    // 50
  locks.push_back(locks[4]);  // 51: the same finish twice
  std::vector<io::asio::awaitable<Result<bool>>> finishes;
  for (size_t i = 0; i < locks.size(); ++i) {
    const std::string session = "ses_" + std::to_string(i);
    finishes.push_back(store_->FinishCheckoutAsync(locks[i], session, "https://pay/" + session,
                                                   clock_.Now() + Millis(5 * 60'000), 201,
                                                   "{\"n\":\"" + std::to_string(i) + "\"}",
                                                   "c" + std::to_string(i) + "@example.org"));
  }
  auto finished = loop_->RunAll(std::move(finishes));
  for (int i = 0; i < kCustomers; ++i) {
    SCOPED_TRACE(i);
    const Booking b = store_->GetBooking(begun[i].booking.id, 100 + i).value();
    if (i == 7) {
      ASSERT_TRUE(finished[i].ok());
      EXPECT_FALSE(finished[i].value());
      EXPECT_EQ(b.status, BookingStatus::kFailed);
      EXPECT_EQ(b.session_id, "");
      ExpectNoKey(100 + i, asks[i].key, asks[i].hold_id);
      continue;
    }
    ASSERT_TRUE(finished[i].ok()) << finished[i].status().message();
    EXPECT_TRUE(finished[i].value());
    EXPECT_EQ(b.session_id, "ses_" + std::to_string(i));
    EXPECT_EQ(b.payment_url, "https://pay/ses_" + std::to_string(i));
    auto mail = store_->BookingForMail(b.id);
    ASSERT_TRUE(mail.ok() && mail->has_value());
    EXPECT_EQ(mail->value().email, "c" + std::to_string(i) + "@example.org");
    auto replay = store_->ClaimCheckoutKey(
        IdempotencyKey{100 + i, asks[i].key, asks[i].hold_id}, kLease);
    ASSERT_TRUE(replay.ok());
    EXPECT_EQ(replay->phase, KeyPhase::kFinished);
    EXPECT_EQ(replay->response_status, 201);
    EXPECT_EQ(replay->response_body, "{\"n\":\"" + std::to_string(i) + "\"}");
  }
  EXPECT_EQ(finished[50].status().code(), Code::kInProgress);
  EXPECT_EQ(finished[51].status().code(), Code::kInProgress);
  if (auto* pg = dynamic_cast<PgStore*>(store_.get())) {
    EXPECT_EQ(pg->batched_finishes(), locks.size());
    EXPECT_LT(pg->finish_statements(), locks.size()) << "last phases that arrived together shared";
  }
  // Each booking pays as it would have.
  for (int i = 10; i < 12; ++i) {
    const Booking b = begun[i].booking;
    EXPECT_EQ(store_->SettlePayment(PaymentReport{"pay_" + std::to_string(i),
                                                  "ses_" + std::to_string(i), std::to_string(b.id),
                                                  true, b.amount.amount, b.amount.currency})
                  .value(),
              Settlement::kConfirmed);
  }
  auto audit = store_->Audit();
  ASSERT_TRUE(audit.ok());
  EXPECT_EQ(audit->violations(), 0);
}

// Another customer naming a hold before its owner in one batch changes nothing for the
// owner: the owner's checkout is booked as it would be alone, and the other customer's
// request leaves no key behind.
TEST_P(PurchasePhases, AnotherCustomerNamingAHoldFirstInABatchLeavesTheOwnersCheckoutBooked) {
  st_ = MakePricedShowtime();
  auto hold = TryHold(st_, 1, {"E1"});
  ASSERT_TRUE(hold.ok());
  std::vector<Store::CheckoutBegun> begun(3);
  std::vector<io::asio::awaitable<Result<bool>>> works;
  works.push_back(store_->TryBeginCheckoutAsync(IdempotencyKey{2, "theirs", hold->hold_id},
                                                hold->hold_id, kLease, kTtl, kMaxLifetime,
                                                &begun[0]));
  works.push_back(store_->TryBeginCheckoutAsync(IdempotencyKey{3, "also", hold->hold_id},
                                                hold->hold_id, kLease, kTtl, kMaxLifetime,
                                                &begun[1]));
  works.push_back(store_->TryBeginCheckoutAsync(IdempotencyKey{1, "mine", hold->hold_id},
                                                hold->hold_id, kLease, kTtl, kMaxLifetime,
                                                &begun[2]));
  auto outcomes = loop_->RunAll(std::move(works));
  for (const auto& o : outcomes) ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_FALSE(outcomes[0].value());
  EXPECT_FALSE(outcomes[1].value());
  EXPECT_EQ(outcomes[2].value(), OneStep());
  ExpectNoKey(2, "theirs", hold->hold_id);
  ExpectNoKey(3, "also", hold->hold_id);
  if (OneStep()) {
    EXPECT_EQ(begun[2].booking.hold_id, hold->hold_id);
    EXPECT_EQ(store_->GetBooking(begun[2].booking.id, 1)->status, BookingStatus::kPending);
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, PurchasePhases, AllEngines(), EngineName);

}  // namespace
}  // namespace boxoffice
