// Cancelling a showtime (store/admin_store.h), on SQLite, PostgreSQL and two shards:
//  * every CONFIRMED booking is REFUNDED with one refund intent and a BookingRefunded event
//    (reason SHOWTIME_CANCELLED), every seat freed, in one go; a PENDING one is left to its
//    payment, refused and refunded when it comes;
//  * nothing more is held, checked out or confirmed; a payment that comes later is refunded;
//  * the race that matters: a cancel against fifty confirmations at once ends every payment
//    "confirmed, then refunded by the cancel" or "refused and refunded", one refund each;
//  * tickets of a cancelled showtime are void; the change is in the admin trail;
//  * a customer cancels their own booking while the terms allow: refunded once however
//    many clicks, the seats for sale again at once, the tickets void.
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <future>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "store/store_fixture.h"
#include "support/loop_thread.h"

namespace boxoffice {
namespace {

using testing::LoopThread;

class CancelContract : public StoreContract {
 protected:
  void TearDown() override { loop_.reset(); }  // its connections close before the store

  PaymentReport Paid(const Booking& b, const std::string& payment_id) {
    return PaymentReport{payment_id, "ses_" + payment_id, std::to_string(b.id),
                         true,       b.amount.amount,     b.amount.currency};
  }
  Booking Confirmed(int64_t showtime, int64_t customer, const std::vector<std::string>& seats,
                    const std::string& payment_id) {
    Booking b = CheckedOutOn(showtime, customer, seats, "ses_" + payment_id);
    EXPECT_EQ(store_->SettlePayment(Paid(b, payment_id)).value(), Settlement::kConfirmed);
    return store_->GetBooking(b.id, customer).value();
  }
  BookingStatus StatusOf(const Booking& b) {
    return store_->GetBooking(b.id, b.customer_id).value().status;
  }
  // Unpublished events of `type` about booking_id, as JSON.
  std::vector<nlohmann::json> Events(const std::string& type, int64_t booking_id) {
    std::vector<nlohmann::json> out;
    for (const OutboxEvent& e : PendingEventsOfAll(10'000).value()) {
      if (e.type == type && e.key == std::to_string(booking_id)) {
        out.push_back(nlohmann::json::parse(e.payload));
      }
    }
    return out;
  }
  // Every pending refund accepted by the gateway, as the refund worker would.
  void IssueAllRefunds() {
    auto pending = store_->PendingRefunds(10'000);
    ASSERT_TRUE(pending.ok());
    for (const Refund& r : pending.value()) {
      ASSERT_TRUE(store_->CompleteRefund(r.refund_id, "gw_" + r.refund_id).ok());
    }
  }

  std::unique_ptr<LoopThread> loop_ = std::make_unique<LoopThread>();
};

TEST_P(CancelContract, RefundsEveryConfirmedBookingFailsThePendingAndFreesTheSeats) {
  st_ = MakePricedShowtime();
  const Booking paid = Confirmed(st_, 1, {"E1", "E2"}, "pay_c1");
  const Booking paying = CheckedOutOn(st_, 2, {"F1"}, "ses_pay_c2");
  ASSERT_TRUE(TryHold(st_, 3, {"F5", "F6"}).ok());

  auto cancel = store_->CancelShowtime(st_, "projector broken", 77);
  ASSERT_TRUE(cancel.ok()) << cancel.status().message();
  EXPECT_FALSE(cancel->already);
  EXPECT_EQ(cancel->bookings_refunded, 1);
  EXPECT_EQ(cancel->bookings_pending, 1);
  EXPECT_EQ(cancel->seats_freed.size(), 5u);

  EXPECT_EQ(StatusOf(paid), BookingStatus::kRefunded);
  EXPECT_EQ(StatusOf(paying), BookingStatus::kPending);  // its payment decides, when it comes
  auto refunds = store_->PendingRefunds(100).value();
  ASSERT_EQ(refunds.size(), 1u);
  EXPECT_EQ(refunds[0].booking_id, paid.id);
  EXPECT_EQ(refunds[0].payment_id, "pay_c1");
  EXPECT_EQ(refunds[0].amount.amount, paid.amount.amount);
  auto refunded = Events("BookingRefunded", paid.id);
  ASSERT_EQ(refunded.size(), 1u);
  EXPECT_EQ(refunded[0]["reason"], "SHOWTIME_CANCELLED");
  EXPECT_TRUE(Events("BookingFailed", paying.id).empty());

  // The showtime says so; its map shows no seat AVAILABLE; no seat row names a booking.
  auto showtime = store_->GetShowtime(st_);
  ASSERT_TRUE(showtime.ok());
  EXPECT_TRUE(showtime->cancelled);
  EXPECT_EQ(showtime->cancel_reason, "projector broken");
  auto map = store_->GetSeatMap(st_);
  ASSERT_TRUE(map.ok());
  EXPECT_TRUE(map->cancelled);
  for (const SeatView& seat : map->seats) EXPECT_EQ(seat.status, SeatStatus::kBooked) << seat.code;
  for (const auto& [code, owner] : Owners(st_)) {
    EXPECT_EQ(owner.status, SeatStatus::kAvailable) << code;
  }
  auto audit = store_->Audit();
  ASSERT_TRUE(audit.ok());
  EXPECT_EQ(audit->violations(), 0);
  EXPECT_EQ(audit->refunds_pending, 1);

  // Again: nothing more happens.
  auto again = store_->CancelShowtime(st_, "twice", 78);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->already);
  EXPECT_EQ(store_->PendingRefunds(100).value().size(), 1u);

  // The trail has the one change, who and what.
  auto changes = store_->ListAdminChanges(st_, 10);
  ASSERT_TRUE(changes.ok());
  ASSERT_EQ(changes->size(), 1u);
  EXPECT_EQ(changes->at(0).actor, 77);
  EXPECT_EQ(changes->at(0).action, "CANCEL");
  EXPECT_EQ(nlohmann::json::parse(changes->at(0).after)["reason"], "projector broken");
  EXPECT_EQ(nlohmann::json::parse(changes->at(0).before)["status"], "SCHEDULED");

  // The refunds' progress: on the showtime's sales and, for /metrics, in the backlog.
  auto progress = [&]() -> std::optional<RefundProgress> {
    auto backlog = store_->CountRefundBacklog();
    EXPECT_TRUE(backlog.ok());
    for (const CancelledShowtimeRefunds& c : backlog->cancelled) {
      if (c.showtime_id == st_) return c.refunds;
    }
    return std::nullopt;
  };
  auto sales = store_->GetShowtimeSales(st_);
  ASSERT_TRUE(sales.ok());
  EXPECT_EQ(sales->refunds.issued, 0);
  EXPECT_EQ(sales->refunds.pending, 1);
  ASSERT_TRUE(progress().has_value());
  EXPECT_EQ(progress()->pending, 1);
  // The gateway refuses it once: kept aside, and retried.
  ASSERT_TRUE(
      store_->RefundAttemptFailed(refunds[0].refund_id, true, "card closed", Millis(1'000)).ok());
  sales = store_->GetShowtimeSales(st_);
  EXPECT_EQ(sales->refunds.pending, 0);
  EXPECT_EQ(sales->refunds.refused, 1);
  EXPECT_EQ(progress()->refused, 1);
  clock_.Advance(Millis(1'001));

  // Once the gateway took the refund back, the booking stays REFUNDED, with one event.
  IssueAllRefunds();
  EXPECT_EQ(StatusOf(paid), BookingStatus::kRefunded);
  EXPECT_EQ(Events("BookingRefunded", paid.id).size(), 1u);
  EXPECT_EQ(store_->Audit()->violations(), 0);
  sales = store_->GetShowtimeSales(st_);
  EXPECT_EQ(sales->refunds.issued, 1);
  EXPECT_EQ(sales->refunds.pending + sales->refunds.refused, 0);
  EXPECT_EQ(progress()->issued, 1);
  EXPECT_EQ(progress()->pending, 0);
  // A day later the showtime is no longer followed.
  clock_.Advance(kCancelledRefundsWindow + Millis(1));
  EXPECT_FALSE(progress().has_value());
}

TEST_P(CancelContract, NothingIsSoldOnACancelledShowtime) {
  st_ = MakePricedShowtime();
  auto before = TryHold(st_, 1, {"E1"});
  ASSERT_TRUE(before.ok());
  ASSERT_TRUE(store_->CancelShowtime(st_, "", 1).ok());
  EXPECT_EQ(TryHold(st_, 2, {"E5"}).status().code(), Code::kShowtimeCancelled);
  EXPECT_EQ(store_->StartCheckout(before->hold_id, 1, kTtl, kMaxLifetime).status().code(),
            Code::kShowtimeCancelled);
  EXPECT_EQ(store_->CancelShowtime(st_ + 1000, "", 1).status().code(), Code::kNotFound);
}

// The hold decided across the cancel: a hold statement that read the showtime open and then
// waited before its seat locks (here for its customer's lock, kept by another session) while
// the cancel committed must refuse under those locks, not hold a seat of a cancelled showtime
// (boxoffice_hold_picks re-reads the status once it has the seats). SQLite's one writer
// decides a hold and a cancel one after the other.
TEST_P(CancelContract, AHoldThatWaitedThroughTheCancelHoldsNothing) {
  if (GetParam() == Engine::kSqlite)
    GTEST_SKIP() << "one writer: no hold waits inside its decision";
  st_ = MakePricedShowtime();
  // A customer of this test alone: advisory locks are the database's, and other tests'
  // shards may be schemas of the same database with showtimes of the same ids.
  constexpr int64_t kCustomer = 7'770'001;
  const std::string key =
      "hashtextextended('hold:" + std::to_string(st_) + ":" + std::to_string(kCustomer) + "', 0)";
  // The customer's hold lock of boxoffice_hold_picks, kept open on every database (once:
  // shards may be schemas of one).
  std::vector<PGconn*> keepers;
  std::set<std::string> databases;
  for (const std::string& url : pg_urls_) {
    PGconn* conn = PQconnectdb(url.c_str());
    ASSERT_EQ(PQstatus(conn), CONNECTION_OK) << PQerrorMessage(conn);
    if (!databases.insert(PQdb(conn)).second) {
      PQfinish(conn);
      continue;
    }
    keepers.push_back(conn);
    for (const std::string& sql :
         {std::string("BEGIN"), "SELECT pg_advisory_xact_lock(" + key + ")"}) {
      PGresult* r = PQexec(conn, sql.c_str());
      ASSERT_TRUE(PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK)
          << PQerrorMessage(conn);
      PQclear(r);
    }
  }
  std::future<Result<Hold>> hold = std::async(std::launch::async, [&] {
    return TryHold(st_, kCustomer, {"E1", "E2"});
  });
  // The hold statement has read the showtime open once it waits for that lock.
  const std::string waiting =
      "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
      "   AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
      "   AND ((classid::bigint << 32) | objid::bigint) = " +
      key;
  bool waited = false;
  for (int i = 0; i < 3'000 && !waited; ++i) {
    for (PGconn* conn : keepers) {
      PGresult* r = PQexec(conn, waiting.c_str());
      waited = waited ||
               (PQresultStatus(r) == PGRES_TUPLES_OK && std::string(PQgetvalue(r, 0, 0)) != "0");
      PQclear(r);
    }
    if (!waited) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(waited) << "the hold never waited for its customer's lock";

  auto cancel = store_->CancelShowtime(st_, "projector broken", 1);
  ASSERT_TRUE(cancel.ok()) << cancel.status().message();
  for (PGconn* conn : keepers) {
    PQclear(PQexec(conn, "COMMIT"));
    PQfinish(conn);
  }
  Result<Hold> decided = hold.get();
  EXPECT_EQ(decided.status().code(), Code::kShowtimeCancelled)
      << (decided.ok() ? "held " + decided->hold_id : decided.status().message());
  for (const auto& [code, owner] : Owners(st_)) {
    EXPECT_EQ(owner.status, SeatStatus::kAvailable) << code;
  }
  EXPECT_EQ(store_->Audit()->violations(), 0);
}

TEST_P(CancelContract, APaymentAfterTheCancelIsRefundedWithTheReason) {
  st_ = MakePricedShowtime();
  const Booking b = CheckedOutOn(st_, 1, {"E1"}, "ses_pay_late");
  ASSERT_TRUE(store_->CancelShowtime(st_, "", 1).ok());
  Booking confirmed;
  auto fast = loop_->Run(store_->TryConfirmPaymentAsync(Paid(b, "pay_late"), &confirmed));
  ASSERT_TRUE(fast.ok());
  EXPECT_FALSE(fast.value().has_value());  // never confirmed in one step: the general path's
  auto settled = store_->SettlePayment(Paid(b, "pay_late"));
  ASSERT_TRUE(settled.ok());
  EXPECT_EQ(settled.value(), Settlement::kLateRefunded);
  EXPECT_EQ(StatusOf(b), BookingStatus::kFailed);
  IssueAllRefunds();
  EXPECT_EQ(StatusOf(b), BookingStatus::kRefunded);
  auto refunded = Events("BookingRefunded", b.id);
  ASSERT_EQ(refunded.size(), 1u);
  EXPECT_EQ(refunded[0]["reason"], "SHOWTIME_CANCELLED");
  EXPECT_EQ(store_->Audit()->violations(), 0);
}

TEST_P(CancelContract, TicketsOfACancelledShowtimeAreVoid) {
  st_ = MakePricedShowtime();
  const Booking b = Confirmed(st_, 1, {"E1", "E2"}, "pay_door");
  auto first = store_->CheckIn(CheckInRequest{st_, b.id, "E1", ""});
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->outcome, CheckInOutcome::kAdmitted);
  ASSERT_TRUE(store_->CancelShowtime(st_, "", 1).ok());
  auto second = store_->CheckIn(CheckInRequest{st_, b.id, "E2", ""});
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->outcome, CheckInOutcome::kVoid);
}

// Fifty payments confirm while the cancel commits: each ends "confirmed, then refunded by the
// cancel" (REFUNDED) or "refused and refunded" (FAILED, then REFUNDED once the refund is
// issued); one refund per payment; never a CONFIRMED booking on the cancelled showtime. A
// quarter of the payments go through the one-step confirmation (PostgreSQL's batches on a
// loop), a quarter through the general path, and half are for checkouts made during the
// cancel (the booking the cancel's scan cannot see); a hundred bookings confirmed before
// keep the cancel busy refunding meanwhile.
TEST_P(CancelContract, ACancelAgainstFiftyConfirmationsLeavesNoMoneyAndNoSale) {
  st_ = MakeShowtime({{"A", 25}, {"B", 25}, {"C", 25}, {"D", 25}, {"E", 25}, {"F", 25}});
  auto seat = [](int i) {
    return std::string(1, static_cast<char>('A' + i / 25)) + std::to_string(i % 25 + 1);
  };
  auto pay_id = [](int i) { return "pay_r" + std::to_string(i); };
  for (int i = 50; i < 150; ++i) Confirmed(st_, 100 + i, {seat(i)}, pay_id(i));
  constexpr int kPayments = 50;
  std::vector<Booking> bookings(kPayments);  // 0–24 checked out before; 25–49 during
  std::vector<std::string> holds(kPayments);
  for (int i = 0; i < kPayments; ++i) {
    if (i < 25) {
      bookings[i] = CheckedOutOn(st_, 100 + i, {seat(i)}, "ses_" + pay_id(i));
      ASSERT_NE(bookings[i].id, 0);
    } else {
      auto hold = TryHold(st_, 100 + i, {seat(i)});
      ASSERT_TRUE(hold.ok());
      holds[i] = hold->hold_id;
    }
  }
  constexpr int kThreads = 12 + 1 + 25 + 1;  // general, the batch, checkouts, the cancel
  std::barrier warm(kThreads), start(kThreads);
  std::atomic<int> errors{0}, paid{0};
  std::vector<std::thread> threads;
  auto ready = [&] {
    warm.arrive_and_wait();
    EXPECT_TRUE(store_->GetShowtime(st_).ok());  // a connection open before the race
    start.arrive_and_wait();
  };
  for (int i = 0; i < 12; ++i) {
    threads.emplace_back([&, i] {
      ready();
      if (!store_->SettlePayment(Paid(bookings[i], pay_id(i))).ok()) ++errors;
      ++paid;
    });
  }
  threads.emplace_back([&] {
    ready();
    std::vector<io::asio::awaitable<Result<std::optional<Settlement>>>> works;
    std::vector<Booking> confirmed(kPayments);
    for (int i = 12; i < 25; ++i) {
      works.push_back(store_->TryConfirmPaymentAsync(Paid(bookings[i], pay_id(i)), &confirmed[i]));
    }
    auto outcomes = loop_->RunAll(std::move(works));
    for (size_t k = 0; k < outcomes.size(); ++k) {
      const int i = 12 + static_cast<int>(k);
      ++paid;
      if (!outcomes[k].ok()) {
        ++errors;
      } else if (!outcomes[k].value()) {  // left to the general path, as the service does
        if (!store_->SettlePayment(Paid(bookings[i], pay_id(i))).ok()) ++errors;
      }
    }
  });
  for (int i = 25; i < kPayments; ++i) {
    threads.emplace_back([&, i] {
      ready();
      auto b = store_->StartCheckout(holds[i], 100 + i, kTtl, kMaxLifetime);
      if (!b.ok()) {
        if (b.status().code() != Code::kShowtimeCancelled) ++errors;
        return;  // refused: nothing to pay
      }
      bookings[i] = b.value();
      if (!store_->SettlePayment(Paid(bookings[i], pay_id(i))).ok()) ++errors;
      ++paid;
    });
  }
  threads.emplace_back([&] {
    ready();
    auto cancel = store_->CancelShowtime(st_, "race", 1);
    if (!cancel.ok()) ++errors;
  });
  for (auto& t : threads) t.join();
  ASSERT_EQ(errors.load(), 0);

  auto audit = store_->Audit();
  ASSERT_TRUE(audit.ok());
  EXPECT_EQ(audit->violations(), 0);
  EXPECT_EQ(audit->confirmed_on_cancelled, 0);
  // One refund per payment (the hundred confirmed before, and each of the race's), none
  // issued yet.
  auto refunds = store_->PendingRefunds(1000).value();
  std::map<std::string, int> per_payment;
  for (const Refund& r : refunds) ++per_payment[r.payment_id];
  EXPECT_EQ(per_payment.size(), static_cast<size_t>(100 + paid.load()));
  for (const auto& [payment, n] : per_payment) EXPECT_EQ(n, 1) << payment;
  int refunded_by_cancel = 0, refused = 0, not_paid = 0;
  for (const Booking& b : bookings) {
    if (b.id == 0) {
      ++not_paid;  // its checkout was refused
      continue;
    }
    const BookingStatus s = StatusOf(b);
    EXPECT_TRUE(s == BookingStatus::kRefunded || s == BookingStatus::kFailed) << b.id;
    (s == BookingStatus::kRefunded ? refunded_by_cancel : refused)++;
  }
  std::cout << "confirmed then refunded by the cancel: " << refunded_by_cancel
            << ", refused and refunded: " << refused << ", checkout refused: " << not_paid << "\n";
  IssueAllRefunds();
  for (const Booking& b : bookings) {
    if (b.id != 0) {
      EXPECT_EQ(StatusOf(b), BookingStatus::kRefunded) << b.id;
    }
  }
  audit = store_->Audit();
  EXPECT_EQ(audit->violations(), 0);
  EXPECT_EQ(audit->refunds_pending, 0);
}

// Forty new-key checkouts decided together on a loop (one statement on PostgreSQL) against a
// cancel: each is booked before the cancel (then refused and refunded when it is paid) or
// refused; nothing stays held, nothing is sold, every payment is refunded once.
TEST_P(CancelContract, ACancelAgainstABatchOfCheckoutsLeavesNothingHeldOrSold) {
  st_ = MakeShowtime({{"A", 25}, {"B", 25}});
  auto seat = [](int i) {
    return std::string(1, static_cast<char>('A' + i / 25)) + std::to_string(i % 25 + 1);
  };
  constexpr int kCheckouts = 40;
  std::vector<std::string> holds;
  for (int i = 0; i < kCheckouts; ++i) {
    auto hold = TryHold(st_, 100 + i, {seat(i)});
    ASSERT_TRUE(hold.ok());
    holds.push_back(hold->hold_id);
  }
  std::barrier warm(2), start(2);
  std::atomic<int> errors{0};
  std::vector<Booking> bookings(kCheckouts);
  auto ready = [&] {
    warm.arrive_and_wait();
    EXPECT_TRUE(store_->GetShowtime(st_).ok());  // a connection open before the race
    start.arrive_and_wait();
  };
  std::thread checkouts([&] {
    // The loop's connections are opened before the race by a first checkout of nothing.
    Store::CheckoutBegun none;
    const std::string no_hold = NewHoldId(st_);
    EXPECT_TRUE(loop_->Run(store_->TryBeginCheckoutAsync(IdempotencyKey{1, "warm", no_hold},
                                                         no_hold, kLease, kTtl, kMaxLifetime,
                                                         &none))
                    .ok());
    ready();
    std::vector<Store::CheckoutBegun> begun(kCheckouts);
    std::vector<io::asio::awaitable<Result<bool>>> works;
    for (int i = 0; i < kCheckouts; ++i) {
      works.push_back(store_->TryBeginCheckoutAsync(
          IdempotencyKey{100 + i, "k" + std::to_string(i), holds[i]}, holds[i], kLease, kTtl,
          kMaxLifetime, &begun[i]));
    }
    auto outcomes = loop_->RunAll(std::move(works));
    for (int i = 0; i < kCheckouts; ++i) {
      if (!outcomes[i].ok()) {
        ++errors;
        ADD_FAILURE() << i << ": " << outcomes[i].status().message();
      } else if (outcomes[i].value()) {
        bookings[i] = begun[i].booking;
      } else {  // left to the general path, as the service does
        auto b = store_->StartCheckout(holds[i], 100 + i, kTtl, kMaxLifetime);
        if (b.ok()) {
          bookings[i] = b.value();
        } else if (b.status().code() != Code::kShowtimeCancelled) {
          ++errors;
          ADD_FAILURE() << i << ": " << b.status().message();
        }
      }
    }
  });
  std::thread cancel([&] {
    ready();
    if (!store_->CancelShowtime(st_, "race", 1).ok()) ++errors;
  });
  checkouts.join();
  cancel.join();
  ASSERT_EQ(errors.load(), 0);
  auto audit = store_->Audit();
  ASSERT_TRUE(audit.ok());
  EXPECT_EQ(audit->violations(), 0);
  for (int i = 0; i < 2 * 25; ++i) EXPECT_EQ(Owners(st_)[seat(i)].status, SeatStatus::kAvailable);
  int booked = 0;
  for (int i = 0; i < kCheckouts; ++i) {
    if (bookings[i].id == 0) continue;
    ++booked;
    // Its payment comes: refused (the showtime is cancelled) and refunded.
    const Settlement s = store_->SettlePayment(Paid(bookings[i], "pay_" + std::to_string(i))).value();
    EXPECT_NE(s, Settlement::kConfirmed) << i;
    EXPECT_NE(StatusOf(bookings[i]), BookingStatus::kConfirmed) << i;
  }
  std::cout << "checkouts booked before the cancel: " << booked << " of " << kCheckouts << "\n";
  EXPECT_EQ(store_->PendingRefunds(1000)->size(), static_cast<size_t>(booked));
  audit = store_->Audit();
  EXPECT_EQ(audit->violations(), 0);
  EXPECT_EQ(audit->confirmed_on_cancelled, 0);
}

TEST_P(CancelContract, SalesCountSeatsBookingsMoneyAndTheDoorAndListBookingsByStatus) {
  st_ = MakePricedShowtime();
  const Booking pair = Confirmed(st_, 1, {"E1", "E2"}, "pay_s1");  // 2 × 12.50
  const Booking vip = Confirmed(st_, 2, {"F1"}, "pay_s2");         // 16.50
  const Booking pending = CheckedOutOn(st_, 3, {"E3"}, "ses_s3");
  ASSERT_TRUE(TryHold(st_, 4, {"F5"}).ok());
  ASSERT_TRUE(TryHold(st_, 5, {"F6"}, Millis(1'000)).ok());  // about to expire
  ASSERT_EQ(store_->CheckIn(CheckInRequest{st_, pair.id, "E1", ""})->outcome,
            CheckInOutcome::kAdmitted);
  clock_.Advance(Millis(2'000));
  auto sales = store_->GetShowtimeSales(st_);
  ASSERT_TRUE(sales.ok()) << sales.status().message();
  EXPECT_FALSE(sales->cancelled);
  EXPECT_EQ(sales->seats_booked, 3);
  EXPECT_EQ(sales->seats_held, 2);  // E3 (in checkout) and F5; F6's hold expired
  EXPECT_EQ(sales->seats_available, 15);
  EXPECT_EQ(sales->bookings[BookingStatus::kConfirmed], 2);
  EXPECT_EQ(sales->bookings[BookingStatus::kPending], 1);
  EXPECT_EQ(sales->bookings[BookingStatus::kRefunded], 0);
  EXPECT_EQ(sales->revenue.amount, 2500 + 1650);
  EXPECT_EQ(sales->revenue.currency, "EUR");
  EXPECT_EQ(sales->checked_in, 1);
  EXPECT_EQ(store_->GetShowtimeSales(st_ + 1000).status().code(), Code::kNotFound);

  auto all = store_->ListShowtimeBookings(ShowtimeBookingsQuery{st_, std::nullopt, 0, 100});
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ(all->at(0).id, pair.id);
  EXPECT_EQ(all->at(0).customer_id, 1);
  EXPECT_EQ(all->at(2).id, pending.id);
  auto confirmed =
      store_->ListShowtimeBookings(ShowtimeBookingsQuery{st_, BookingStatus::kConfirmed, 0, 1});
  ASSERT_EQ(confirmed->size(), 1u);
  EXPECT_EQ(confirmed->at(0).id, pair.id);
  auto next = store_->ListShowtimeBookings(
      ShowtimeBookingsQuery{st_, BookingStatus::kConfirmed, pair.id, 1});
  ASSERT_EQ(next->size(), 1u);
  EXPECT_EQ(next->at(0).id, vip.id);

  // Cancelled: the money is owed back, no revenue is kept.
  ASSERT_TRUE(store_->CancelShowtime(st_, "", 1).ok());
  sales = store_->GetShowtimeSales(st_);
  EXPECT_TRUE(sales->cancelled);
  EXPECT_EQ(sales->revenue.amount, 0);
  EXPECT_EQ(sales->bookings[BookingStatus::kRefunded], 2);
  EXPECT_EQ(sales->bookings[BookingStatus::kPending], 1);
  EXPECT_EQ(sales->seats_booked, 0);
}

TEST_P(CancelContract, AnEditChangesTitleStartAndTermsAlwaysAndPricesOnlyBeforeSalesStart) {
  st_ = MakePricedShowtime();
  ShowtimeEdit edit;
  edit.title = "Dune: Part Three (70 mm)";
  edit.starts_at = kStart + Millis(2 * 86'400'000);
  edit.refund_until_minutes = std::optional<int>(120);
  edit.prices =
      std::map<std::string, Price>{{"standard", {1400, "EUR"}}, {"premium", {1800, "EUR"}}};
  auto edited = store_->EditShowtime(st_, edit, 9);
  ASSERT_TRUE(edited.ok()) << edited.status().message();
  auto read = store_->GetShowtime(st_).value();
  EXPECT_EQ(read.title, "Dune: Part Three (70 mm)");
  EXPECT_EQ(read.starts_at, kStart + Millis(2 * 86'400'000));
  EXPECT_EQ(read.refund_until_minutes, 120);
  EXPECT_EQ(read.prices["standard"].amount, 1400);
  // A checkout prices the seats as they now are.
  const Booking b = CheckedOutOn(st_, 1, {"E1"}, "");
  EXPECT_EQ(b.amount.amount, 1400);
  // Sales have started: the prices are fixed, the rest still changes.
  ShowtimeEdit later;
  later.prices =
      std::map<std::string, Price>{{"standard", {900, "EUR"}}, {"premium", {1800, "EUR"}}};
  EXPECT_EQ(store_->EditShowtime(st_, later, 9).status().code(), Code::kSalesStarted);
  later.prices.reset();
  later.refund_until_minutes = std::optional<int>();  // no cancelling any more
  ASSERT_TRUE(store_->EditShowtime(st_, later, 9).ok());
  EXPECT_FALSE(store_->GetShowtime(st_)->refund_until_minutes.has_value());
  // A checkout that failed, its hold released: no seat is held, in checkout or sold, so the
  // prices may change again.
  const int64_t fresh = MakePricedShowtime();
  std::string failed_hold;
  const Booking failed = CheckedOutOn(fresh, 2, {"F1"}, "ses_failed", &failed_hold);
  ASSERT_EQ(store_
                ->SettlePayment(PaymentReport{"pay_failed", "ses_failed", std::to_string(failed.id),
                                              false, failed.amount.amount, failed.amount.currency})
                .value(),
            Settlement::kPaymentFailed);
  ShowtimeEdit reprice;
  reprice.prices =
      std::map<std::string, Price>{{"standard", {1300, "EUR"}}, {"premium", {1700, "EUR"}}};
  EXPECT_EQ(store_->EditShowtime(fresh, reprice, 9).status().code(), Code::kSalesStarted);
  ASSERT_TRUE(store_->ReleaseHold(failed_hold, 2).ok());
  ASSERT_TRUE(store_->EditShowtime(fresh, reprice, 9).ok());
  // A category the layout lacks, or one left out, is refused; an unknown showtime is not found.
  ShowtimeEdit bad;
  bad.prices = std::map<std::string, Price>{{"standard", {1, "EUR"}}, {"balcony", {1, "EUR"}}};
  EXPECT_EQ(store_->EditShowtime(fresh, bad, 9).status().code(), Code::kInvalid);
  bad.prices = std::map<std::string, Price>{{"standard", {1, "EUR"}}};
  EXPECT_EQ(store_->EditShowtime(fresh, bad, 9).status().code(), Code::kInvalid);
  EXPECT_EQ(store_->EditShowtime(fresh + 1000, edit, 9).status().code(), Code::kNotFound);
  // The trail: what changed, before and after, newest first.
  auto changes = store_->ListAdminChanges(st_, 10).value();
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[1].action, "EDIT");
  auto before = nlohmann::json::parse(changes[1].before),
       after = nlohmann::json::parse(changes[1].after);
  EXPECT_EQ(before["title"], "Dune: Part Three");
  EXPECT_EQ(after["title"], "Dune: Part Three (70 mm)");
  EXPECT_EQ(before["prices"]["standard"]["amount"], 1250);
  EXPECT_EQ(after["prices"]["standard"]["amount"], 1400);
  EXPECT_TRUE(before["refundUntilMinutesBefore"].is_null());
  EXPECT_EQ(nlohmann::json::parse(changes[0].after)["refundUntilMinutesBefore"], nullptr);
  EXPECT_FALSE(nlohmann::json::parse(changes[0].after).contains("title"));  // unchanged
  // A cancelled showtime is not edited.
  ASSERT_TRUE(store_->CancelShowtime(st_, "", 9).ok());
  EXPECT_EQ(store_->EditShowtime(st_, later, 9).status().code(), Code::kShowtimeCancelled);
}

// A price edit against first holds at once: every request ends without an error; either
// the edit came first (then the checkouts pay the new price) or a hold did (SALES_STARTED,
// the old price stands).
TEST_P(CancelContract, APriceEditAgainstConcurrentFirstHoldsIsDecidedOneWayOrTheOther) {
  for (int round = 0; round < 3; ++round) {
    st_ = MakePricedShowtime();
    constexpr int kHolds = 8;
    std::barrier warm(kHolds + 1), start(kHolds + 1);
    std::vector<std::string> holds(kHolds);
    std::atomic<int> errors{0};
    Status edited;
    std::vector<std::thread> threads;
    for (int i = 0; i < kHolds; ++i) {
      threads.emplace_back([&, i] {
        warm.arrive_and_wait();
        EXPECT_TRUE(store_->GetShowtime(st_).ok());
        start.arrive_and_wait();
        auto h = TryHold(st_, 10 + i, {"E" + std::to_string(i + 1)});
        if (h.ok())
          holds[i] = h->hold_id;
        else
          ++errors;
      });
    }
    threads.emplace_back([&] {
      warm.arrive_and_wait();
      EXPECT_TRUE(store_->GetShowtime(st_).ok());
      start.arrive_and_wait();
      ShowtimeEdit edit;
      edit.prices =
          std::map<std::string, Price>{{"standard", {2000, "EUR"}}, {"premium", {2500, "EUR"}}};
      edited = store_->EditShowtime(st_, edit, 9).status();
    });
    for (auto& t : threads) t.join();
    ASSERT_EQ(errors.load(), 0);
    ASSERT_TRUE(edited.ok() || edited.code() == Code::kSalesStarted) << edited.message();
    const int64_t price = edited.ok() ? 2000 : 1250;
    EXPECT_EQ(store_->GetShowtime(st_)->prices["standard"].amount, price);
    for (int i = 0; i < kHolds; ++i) {
      auto b = store_->StartCheckout(holds[i], 10 + i, kTtl, kMaxLifetime);
      ASSERT_TRUE(b.ok()) << b.status().message();
      EXPECT_EQ(b->amount.amount, price);
    }
  }
}

// A showtime whose customers may cancel until an hour before its start (a day away).
int64_t Refundable(Store& store) {
  NewShowtime s = PricedHall();
  s.refund_until_minutes = 60;
  auto id = store.CreateShowtime(s);
  EXPECT_TRUE(id.ok()) << id.status().message();
  return id.ok() ? id.value() : 0;
}

TEST_P(CancelContract, ACustomerCancelsOnceHoweverManyClicksAndTheSeatsAreForSaleAgain) {
  st_ = Refundable(*store_);
  ASSERT_EQ(store_->GetShowtime(st_)->refund_until_minutes, 60);
  const Booking b = Confirmed(st_, 1, {"E1", "E2"}, "pay_cc");
  EXPECT_EQ(store_->CancelBooking(b.id, 2).status().code(), Code::kNotFound);  // not theirs
  constexpr int kClicks = 8;
  std::barrier warm(kClicks), start(kClicks);
  std::atomic<int> refunded{0}, other{0}, refunded_now{0};
  std::vector<std::thread> clicks;
  for (int i = 0; i < kClicks; ++i) {
    clicks.emplace_back([&] {
      warm.arrive_and_wait();
      EXPECT_TRUE(store_->GetShowtime(st_).ok());
      start.arrive_and_wait();
      auto r = store_->CancelBooking(b.id, 1);
      (r.ok() && r->booking.status == BookingStatus::kRefunded ? refunded : other)++;
      if (r.ok() && r->refunded_now) ++refunded_now;
    });
  }
  for (auto& t : clicks) t.join();
  EXPECT_EQ(refunded.load(), kClicks);
  EXPECT_EQ(refunded_now.load(), 1);
  EXPECT_EQ(other.load(), 0);
  auto refunds = store_->PendingRefunds(100).value();
  ASSERT_EQ(refunds.size(), 1u);
  EXPECT_EQ(refunds[0].payment_id, "pay_cc");
  auto events = Events("BookingRefunded", b.id);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["reason"], "CUSTOMER_CANCELLED");
  // The seats are for sale again; the tickets are void; money and seats add up.
  EXPECT_EQ(Owners(st_)["E1"].status, SeatStatus::kAvailable);
  EXPECT_EQ(Owners(st_)["E2"].status, SeatStatus::kAvailable);
  EXPECT_TRUE(TryHold(st_, 2, {"E1", "E2"}).ok());
  EXPECT_EQ(store_->CheckIn(CheckInRequest{st_, b.id, "E1", ""})->outcome, CheckInOutcome::kVoid);
  EXPECT_EQ(store_->Audit()->violations(), 0);
  IssueAllRefunds();
  EXPECT_EQ(StatusOf(b), BookingStatus::kRefunded);
  EXPECT_EQ(Events("BookingRefunded", b.id).size(), 1u);
  EXPECT_EQ(store_->Audit()->violations(), 0);
}

TEST_P(CancelContract, ACustomerCannotCancelOutsideTheTerms) {
  // No terms: no cancelling.
  st_ = MakePricedShowtime();
  const Booking fixed = Confirmed(st_, 1, {"E1"}, "pay_fixed");
  EXPECT_EQ(store_->CancelBooking(fixed.id, 1).status().code(), Code::kNotRefundable);
  // A booking not (yet) confirmed.
  const int64_t refundable = Refundable(*store_);
  const Booking pending = CheckedOutOn(refundable, 2, {"E1"}, "ses_pending");
  EXPECT_EQ(store_->CancelBooking(pending.id, 2).status().code(), Code::kNotRefundable);
  // A ticket admitted at the door.
  const Booking admitted = Confirmed(refundable, 3, {"E2"}, "pay_admitted");
  ASSERT_EQ(store_->CheckIn(CheckInRequest{refundable, admitted.id, "E2", ""})->outcome,
            CheckInOutcome::kAdmitted);
  EXPECT_EQ(store_->CancelBooking(admitted.id, 3).status().code(), Code::kNotRefundable);
  // Too late: less than the hour before the start (the store's clock decides).
  const Booking late = Confirmed(refundable, 4, {"E3"}, "pay_late_cc");
  clock_.Advance(Millis(86'400'000 - 59 * 60'000));
  EXPECT_EQ(store_->CancelBooking(late.id, 4).status().code(), Code::kNotRefundable);
  EXPECT_EQ(StatusOf(late), BookingStatus::kConfirmed);
  EXPECT_TRUE(store_->PendingRefunds(100).value().empty());
  EXPECT_EQ(store_->CancelBooking(late.id + 100'000, 4).status().code(), Code::kNotFound);
}

INSTANTIATE_TEST_SUITE_P(Engines, CancelContract, AllEngines(), EngineName);

}  // namespace
}  // namespace boxoffice
