// Tickets and the door (store/ticket_store.h), on SQLite, PostgreSQL and two shards:
//  * a ticket is admitted once, whatever number of doors scan it at the same moment;
//  * a scan that carries the admitting scan's nonce gets its answer again;
//  * a ticket of a booking that is not (or no longer) confirmed is void;
//  * a customer's bookings come newest first, page by page.
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <set>
#include <thread>

#include "store/store_fixture.h"

namespace boxoffice {
namespace {

class TicketContract : public StoreContract {
 protected:
  // A confirmed booking of `seats` by customer on showtime.
  Booking Confirmed(int64_t showtime, int64_t customer, const std::vector<std::string>& seats) {
    static std::atomic<int> payments{0};
    const std::string id = "pay_t" + std::to_string(++payments);
    Booking b = CheckedOutOn(showtime, customer, seats, "ses_" + id);
    auto settled = store_->SettlePayment(PaymentReport{id, "ses_" + id, std::to_string(b.id), true,
                                                       b.amount.amount, b.amount.currency});
    EXPECT_EQ(settled.value(), Settlement::kConfirmed);
    return store_->GetBooking(b.id, customer).value();
  }

  CheckInResult Scan(const Booking& b, const std::string& seat, const std::string& nonce = "") {
    auto r = store_->CheckIn(CheckInRequest{b.showtime_id, b.id, seat, nonce});
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? r.value() : CheckInResult{};
  }
};

TEST_P(TicketContract, TwentyDoorsScanningOneTicketAdmitItOnce) {
  st_ = MakePricedShowtime();
  const Booking b = Confirmed(st_, 1, {"E1", "F1"});
  constexpr int kDoors = 20;
  std::barrier warm(kDoors), start(kDoors);
  std::atomic<int> admitted{0}, already{0}, other{0};
  std::mutex mu;
  std::set<int64_t> times;  // every answer names the one admitting scan's time
  std::vector<std::thread> doors;
  for (int i = 0; i < kDoors; ++i) {
    doors.emplace_back([&, i] {
      // Every door's connection open first (a pool opens them as it needs them, and one
      // being opened would keep its door out of the race).
      warm.arrive_and_wait();
      EXPECT_TRUE(store_->CountAtDoor(b.showtime_id).ok());
      start.arrive_and_wait();
      auto r =
          store_->CheckIn(CheckInRequest{b.showtime_id, b.id, "E1", "door-" + std::to_string(i)});
      if (!r.ok()) {
        ++other;
        return;
      }
      if (r->outcome == CheckInOutcome::kAdmitted)
        ++admitted;
      else if (r->outcome == CheckInOutcome::kAlreadyCheckedIn)
        ++already;
      else
        ++other;
      std::lock_guard lock(mu);
      times.insert(ToEpochMs(r->checked_in_at));
    });
  }
  for (auto& t : doors) t.join();
  EXPECT_EQ(admitted.load(), 1);
  EXPECT_EQ(already.load(), kDoors - 1);
  EXPECT_EQ(other.load(), 0);
  EXPECT_EQ(times.size(), 1u);
  // The booking's other seat is its own ticket.
  EXPECT_EQ(Scan(b, "F1").outcome, CheckInOutcome::kAdmitted);
  EXPECT_EQ(Scan(b, "F1").outcome, CheckInOutcome::kAlreadyCheckedIn);
}

TEST_P(TicketContract, ALaterScanSaysWhenTheFirstAdmittedIt) {
  st_ = MakePricedShowtime();
  const Booking b = Confirmed(st_, 1, {"E1"});
  const Instant first = clock_.Now();
  EXPECT_EQ(Scan(b, "E1").outcome, CheckInOutcome::kAdmitted);
  clock_.Advance(Millis(90'000));
  const CheckInResult later = Scan(b, "E1");
  EXPECT_EQ(later.outcome, CheckInOutcome::kAlreadyCheckedIn);
  EXPECT_EQ(ToEpochMs(later.checked_in_at), ToEpochMs(first));
}

TEST_P(TicketContract, TheAdmittingScansNonceGetsItsAnswerAgain) {
  st_ = MakePricedShowtime();
  const Booking b = Confirmed(st_, 1, {"E1"});
  const CheckInResult first = Scan(b, "E1", "scan-7");
  ASSERT_EQ(first.outcome, CheckInOutcome::kAdmitted);
  clock_.Advance(Millis(2'000));
  const CheckInResult retry = Scan(b, "E1", "scan-7");  // the answer was lost: retried
  EXPECT_EQ(retry.outcome, CheckInOutcome::kAdmitted);
  EXPECT_EQ(ToEpochMs(retry.checked_in_at), ToEpochMs(first.checked_in_at));
  EXPECT_EQ(Scan(b, "E1", "scan-8").outcome, CheckInOutcome::kAlreadyCheckedIn);
  EXPECT_EQ(Scan(b, "E1").outcome, CheckInOutcome::kAlreadyCheckedIn);
}

TEST_P(TicketContract, ATicketIsVoidUnlessItsBookingIsConfirmed) {
  st_ = MakePricedShowtime();
  const Booking pending = CheckedOutOn(st_, 1, {"E1"}, "ses_pending");
  EXPECT_EQ(Scan(pending, "E1").outcome, CheckInOutcome::kVoid);
  const Booking confirmed = Confirmed(st_, 2, {"F1"});
  // A refund ends the booking (what cancelling a showtime or a booking writes).
  RawSql("UPDATE booking SET status = 'REFUNDED' WHERE booking_id = " +
         std::to_string(confirmed.id));
  EXPECT_EQ(Scan(confirmed, "F1").outcome, CheckInOutcome::kVoid);
  EXPECT_EQ(store_->CountAtDoor(st_)->admitted, 0);
}

TEST_P(TicketContract, ATicketNamingAnotherShowtimeOrSeatIsUnknown) {
  st_ = MakePricedShowtime();
  const Booking b = Confirmed(st_, 1, {"E1"});
  const int64_t other = MakePricedShowtime();
  auto scan = [&](int64_t showtime, int64_t booking, const std::string& seat) {
    return store_->CheckIn(CheckInRequest{showtime, booking, seat, ""})->outcome;
  };
  EXPECT_EQ(scan(other, b.id, "E1"), CheckInOutcome::kUnknown);
  EXPECT_EQ(scan(st_, b.id, "F1"), CheckInOutcome::kUnknown);
  EXPECT_EQ(scan(st_, std::stoll(NoSuchBooking()), "E1"), CheckInOutcome::kUnknown);
  EXPECT_EQ(scan(st_, b.id, "E1"), CheckInOutcome::kAdmitted);
}

TEST_P(TicketContract, TheDoorCountsSeatsSoldAndAdmitted) {
  st_ = MakePricedShowtime();
  EXPECT_EQ(store_->CountAtDoor(st_)->sold, 0);
  const Booking a = Confirmed(st_, 1, {"E1", "F1"});
  Confirmed(st_, 2, {"E2"});
  CheckedOutOn(st_, 3, {"E3"}, "ses_open");  // not sold until paid
  ASSERT_EQ(Scan(a, "F1").outcome, CheckInOutcome::kAdmitted);
  auto count = store_->CountAtDoor(st_);
  ASSERT_TRUE(count.ok()) << count.status().message();
  EXPECT_EQ(count->sold, 3);
  EXPECT_EQ(count->admitted, 1);
  const int64_t unknown = std::stoll(NoSuchBooking());  // an id no showtime has either
  EXPECT_EQ(store_->CountAtDoor(unknown).status().code(), Code::kNotFound);
}

TEST_P(TicketContract, ACustomersBookingsComeNewestFirstPageByPage) {
  st_ = MakePricedShowtime();
  const int64_t later_show = MakeShowtime({{"A", 5}}, kStart + Millis(2 * 86'400'000));
  const Booking first = Confirmed(st_, 7, {"E1"});
  clock_.Advance(Millis(1'000));
  const Booking second = CheckedOutOn(later_show, 7, {"A1"}, "");
  clock_.Advance(Millis(1'000));
  const Booking third = Confirmed(st_, 7, {"F2"});
  Confirmed(st_, 8, {"E3"});  // another customer's

  auto page = store_->ListCustomerBookings(CustomerBookingsQuery{7, std::nullopt, 2});
  ASSERT_TRUE(page.ok()) << page.status().message();
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ((*page)[0].booking.id, third.id);
  EXPECT_EQ((*page)[0].booking.status, BookingStatus::kConfirmed);
  EXPECT_EQ((*page)[0].title, "Dune: Part Three");
  EXPECT_EQ((*page)[1].booking.id, second.id);
  EXPECT_EQ((*page)[1].booking.status, BookingStatus::kPending);
  EXPECT_EQ(ToEpochMs((*page)[1].starts_at), ToEpochMs(kStart + Millis(2 * 86'400'000)));
  const auto& last = (*page)[1].booking;
  auto rest = store_->ListCustomerBookings(
      CustomerBookingsQuery{7, std::make_pair(last.created_at, last.id), 2});
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->size(), 1u);
  EXPECT_EQ((*rest)[0].booking.id, first.id);
  EXPECT_EQ((*rest)[0].booking.seats, std::vector<std::string>{"E1"});
  EXPECT_TRUE(store_->ListCustomerBookings(CustomerBookingsQuery{9, std::nullopt, 5})->empty());
}

INSTANTIATE_TEST_SUITE_P(Engines, TicketContract, AllEngines(), EngineName);

}  // namespace
}  // namespace boxoffice
