// Holds that arrive together on an I/O loop are decided together (one statement on
// PostgreSQL, one transaction on SQLite), with exactly the outcomes of their serial order,
// which is their arrival order: no seat held twice, each win on seats free after the
// earlier winners, and each refused request naming exactly its seats those winners took.
// A hold whose answer is lost after the database made it (the customer is told 503) is
// released by its id, so it keeps neither seats nor the customer's 8-seat limit.
#include <gtest/gtest.h>

#include <future>
#include <map>
#include <random>
#include <thread>

#include "holds/hold_service.h"
#include "store_fixture.h"
#include "support/loop_thread.h"
#include "support/tcp_proxy.h"

namespace boxoffice {
namespace {

using testing::LoopThread;

class HoldBatches : public StoreContract {
 protected:
  std::vector<io::asio::awaitable<Result<Hold>>> HoldsOf(const std::vector<HoldRequest>& requests) {
    std::vector<io::asio::awaitable<Result<Hold>>> works;
    for (const HoldRequest& r : requests) works.push_back(store_->HoldSeatsAsync(r));
    return works;
  }
};

// 200 holds on 30 seats of one row, each of 1 to 3 adjacent seats, started on one loop in
// order before any is answered: the first goes alone, the others wait for it and go in
// batches.
TEST_P(HoldBatches, ConcurrentHoldsGetTheOutcomesOfTheirSerialOrder) {
  const int64_t showtime = MakeShowtime({{"A", 30}});
  constexpr int kRequests = 200;
  std::mt19937 random(7);
  std::vector<HoldRequest> requests;
  for (int i = 0; i < kRequests; ++i) {
    const int first = static_cast<int>(random() % 28) + 1;
    const int count = static_cast<int>(random() % 3) + 1;
    std::vector<std::string> seats;
    for (int s = first; s < first + count && s <= 30; ++s) seats.push_back("A" + std::to_string(s));
    std::sort(seats.begin(), seats.end());
    requests.push_back(HoldRequest{NewHoldId(showtime), showtime, 1'000 + i, seats, kTtl});
  }
  std::vector<Result<Hold>> outcomes;
  {
    LoopThread loop;  // ends (and closes its connections) before the store goes
    outcomes = loop.RunAll(HoldsOf(requests));
  }
  if (auto* pg = dynamic_cast<PgStore*>(store_.get())) {
    EXPECT_LT(pg->hold_statements(), static_cast<uint64_t>(kRequests) / 2)
        << "requests that arrived together went in batches";
    EXPECT_EQ(pg->batched_holds(), static_cast<uint64_t>(kRequests));
  } else if (auto* sqlite = dynamic_cast<SqliteStore*>(store_.get())) {
    EXPECT_LT(sqlite->hold_transactions(), static_cast<uint64_t>(kRequests) / 2)
        << "requests that arrived together went in one transaction each batch";
    EXPECT_EQ(sqlite->batched_holds(), static_cast<uint64_t>(kRequests));
  }

  // Replay the arrival order serially.
  std::map<std::string, std::string> owner;  // seat → hold id
  int won = 0;
  for (int i = 0; i < kRequests; ++i) {
    std::vector<std::string> taken_before;
    for (const auto& seat : requests[i].seats) {
      if (owner.count(seat)) taken_before.push_back(seat);
    }
    if (taken_before.empty()) {
      ASSERT_TRUE(outcomes[i].ok()) << "request " << i << ": " << outcomes[i].status().message();
      for (const auto& seat : requests[i].seats) owner[seat] = requests[i].hold_id;
      ++won;
    } else {
      ASSERT_EQ(outcomes[i].status().code(), Code::kConflict) << "request " << i;
      EXPECT_EQ(outcomes[i].status().seats(), taken_before) << "request " << i;
    }
  }
  auto seats = store_->GetSeatOwners(showtime);
  ASSERT_TRUE(seats.ok());
  for (const auto& seat : seats.value()) {
    auto it = owner.find(seat.code);
    if (it == owner.end()) {
      EXPECT_EQ(seat.status, SeatStatus::kAvailable) << seat.code;
    } else {
      EXPECT_EQ(seat.status, SeatStatus::kHeld) << seat.code;
      EXPECT_EQ(seat.hold_id, it->second) << seat.code << " belongs to its serial winner";
    }
  }
  EXPECT_GT(won, 5);
}

// A batch where one request is refused keeps the others' holds (each all or nothing).
TEST_P(HoldBatches, ARefusedRequestInABatchTakesNothingAndLeavesTheOthers) {
  const int64_t showtime = MakeShowtime({{"B", 6}});
  std::vector<HoldRequest> requests = {
      HoldRequest{NewHoldId(showtime), showtime, 1, {"B1", "B2"}, kTtl},
      HoldRequest{NewHoldId(showtime), showtime, 2, {"B2", "B3"}, kTtl},  // B2 taken by the first
      HoldRequest{
          NewHoldId(showtime), showtime, 3, {"B3", "B4"}, kTtl},  // B3 untouched by the second
      HoldRequest{NewHoldId(showtime), showtime, 4, {"B5", "Z9"}, kTtl},  // Z9 is no seat
  };
  std::vector<Result<Hold>> outcomes;
  {
    LoopThread loop;
    outcomes = loop.RunAll(HoldsOf(requests));
  }
  EXPECT_TRUE(outcomes[0].ok());
  EXPECT_EQ(outcomes[1].status().code(), Code::kConflict);
  EXPECT_EQ(outcomes[1].status().seats(), std::vector<std::string>{"B2"});
  EXPECT_TRUE(outcomes[2].ok()) << outcomes[2].status().message();
  EXPECT_EQ(outcomes[3].status().code(), Code::kUnknownSeats);
  auto seats = store_->GetSeatOwners(showtime);
  ASSERT_TRUE(seats.ok());
  std::map<std::string, SeatStatus> status;
  for (const auto& seat : seats.value()) status[seat.code] = seat.status;
  EXPECT_EQ(status["B5"], SeatStatus::kAvailable) << "the refused request took nothing";
  EXPECT_EQ(status["B6"], SeatStatus::kAvailable);
}

// Booking reads that arrive together on a loop share a statement on PostgreSQL; each gets
// its own booking, and NOT_FOUND for another customer's or one that does not exist.
TEST_P(HoldBatches, BookingReadsThatArriveTogetherShareAStatement) {
  const int64_t showtime = MakeShowtime({{"A", 20}});
  std::vector<Booking> bookings;
  for (int i = 1; i <= 20; ++i) {
    auto hold = TryHold(showtime, 100 + i, {"A" + std::to_string(i)});
    ASSERT_TRUE(hold.ok());
    auto booking = store_->StartCheckout(hold->hold_id, 100 + i, kTtl, kTtl * 2);
    ASSERT_TRUE(booking.ok()) << booking.status().message();
    bookings.push_back(booking.value());
  }
  constexpr int kReads = 300;
  struct Read {
    int64_t booking_id;
    int64_t customer_id;
    const Booking* expected;  // null: NOT_FOUND
  };
  std::vector<Read> reads;
  for (int i = 0; i < kReads; ++i) {
    const Booking& b = bookings[i % bookings.size()];
    if (i % 10 == 3) {
      reads.push_back({b.id, b.customer_id + 1, nullptr});  // another customer's
    } else if (i % 10 == 7) {
      reads.push_back({b.id + 100'000, b.customer_id, nullptr});  // none
    } else {
      reads.push_back({b.id, i % 5 == 0 ? Store::kAnyCustomer : b.customer_id, &b});
    }
  }
  std::vector<Result<Booking>> outcomes;
  {
    LoopThread loop;
    std::vector<io::asio::awaitable<Result<Booking>>> works;
    for (const Read& read : reads)
      works.push_back(store_->GetBookingAsync(read.booking_id, read.customer_id));
    outcomes = loop.RunAll(std::move(works));
  }
  for (int i = 0; i < kReads; ++i) {
    SCOPED_TRACE("read " + std::to_string(i));
    if (!reads[i].expected) {
      EXPECT_EQ(outcomes[i].status().code(), Code::kNotFound);
      continue;
    }
    ASSERT_TRUE(outcomes[i].ok()) << outcomes[i].status().message();
    EXPECT_EQ(outcomes[i]->id, reads[i].expected->id);
    EXPECT_EQ(outcomes[i]->customer_id, reads[i].expected->customer_id);
    EXPECT_EQ(outcomes[i]->seats, reads[i].expected->seats);
    EXPECT_EQ(outcomes[i]->status, BookingStatus::kPending);
    EXPECT_EQ(outcomes[i]->amount.amount, 1250);
  }
  if (auto* pg = dynamic_cast<PgStore*>(store_.get())) {
    EXPECT_LT(pg->booking_read_statements(), static_cast<uint64_t>(kReads) / 2)
        << "reads that arrived together shared statements";
  }
}

// GET /showtimes, /showtimes/{id} and a seat map's load on a loop: the same showtimes,
// prices, pages, seats and refusals as the blocking reads, and on PostgreSQL through the
// loop's pipeline.
TEST_P(HoldBatches, ShowtimeReadsOnALoopAnswerAsTheBlockingOnes) {
  const Instant day = kStart + Millis(86'400'000);
  std::vector<int64_t> ids;
  for (int i = 0; i < 5; ++i)
    ids.push_back(MakeShowtime({{"A", 5}}, day + Millis(i * 3'600'000), i % 2 ? "Rex" : "Odeon"));
  const int64_t priced = MakePricedShowtime();
  const uint64_t sent_before = [&] {
    auto* pg = dynamic_cast<PgStore*>(store_.get());
    return pg ? pg->showtime_read_statements() : 0;
  }();
  ShowtimeQuery page;
  page.limit = 2;
  ShowtimeQuery rex;
  rex.cinema = "Rex";
  rex.from = day + Millis(3'600'000);
  ShowtimeQuery none;
  none.cinema = "Nowhere";
  Metrics metrics;
  io::BlockingPool blocking(2, 16, &metrics.GetCounter("overloaded_total", "test"));  // as `serve`
  LoopThread loop(&blocking);
  testing::JoinPool join_blocking(&blocking);  // before the loop's io_context goes
  for (const int64_t id : {ids[0], ids[3], priced}) {
    SCOPED_TRACE("showtime " + std::to_string(id));
    auto async = loop.Run(store_->GetShowtimeAsync(id));
    auto blocking = store_->GetShowtime(id);
    ASSERT_TRUE(async.ok()) << async.status().message();
    ASSERT_TRUE(blocking.ok());
    EXPECT_EQ(async->title, blocking->title);
    EXPECT_EQ(async->cinema, blocking->cinema);
    EXPECT_EQ(async->starts_at, blocking->starts_at);
    EXPECT_EQ(async->seat_count, blocking->seat_count);
    ASSERT_EQ(async->prices.size(), blocking->prices.size());
    for (const auto& [category, price] : blocking->prices) {
      EXPECT_EQ(async->prices.at(category).amount, price.amount);
      EXPECT_EQ(async->prices.at(category).currency, price.currency);
    }
  }
  EXPECT_EQ(loop.Run(store_->GetShowtimeAsync(priced + 1000)).status().code(), Code::kNotFound);
  ASSERT_TRUE(TryHold(priced, 1, {"E2", "F3"}).ok());
  auto map = loop.Run(store_->GetSeatMapAsync(priced));
  auto blocking_map = store_->GetSeatMap(priced);
  ASSERT_TRUE(map.ok()) << map.status().message();
  ASSERT_EQ(map->seats.size(), blocking_map->seats.size());
  for (size_t i = 0; i < map->seats.size(); ++i) {
    EXPECT_EQ(map->seats[i].code, blocking_map->seats[i].code);
    EXPECT_EQ(map->seats[i].category, blocking_map->seats[i].category);
    EXPECT_EQ(map->seats[i].status, blocking_map->seats[i].status);
    EXPECT_EQ(map->seats[i].accessible, blocking_map->seats[i].accessible);
    EXPECT_EQ(map->seats[i].aisle_after, blocking_map->seats[i].aisle_after);
  }
  EXPECT_EQ(map->seats[1].status, SeatStatus::kHeld);  // E2
  EXPECT_EQ(loop.Run(store_->GetSeatMapAsync(priced + 1000)).status().code(), Code::kNotFound);
  // Each showtime's id and prices, in order: what a page shows.
  auto ids_of = [](const Result<std::vector<Showtime>>& list) {
    std::vector<std::pair<int64_t, std::map<std::string, int64_t>>> out;
    if (list.ok()) {
      for (const Showtime& s : *list) {
        std::map<std::string, int64_t> prices;
        for (const auto& [category, price] : s.prices) prices[category] = price.amount;
        out.emplace_back(s.id, std::move(prices));
      }
    }
    return out;
  };
  auto first = loop.Run(store_->ListShowtimesAsync(page));
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(ids_of(first), ids_of(store_->ListShowtimes(page)));
  ASSERT_EQ(first->size(), 2u);
  EXPECT_EQ((*first)[0].prices.at("standard").amount, 1250);
  page.after = std::make_pair(first->back().starts_at, first->back().id);
  auto second = loop.Run(store_->ListShowtimesAsync(page));
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(ids_of(second), ids_of(store_->ListShowtimes(page)));
  EXPECT_EQ(second->size(), 2u);
  auto at_rex = loop.Run(store_->ListShowtimesAsync(rex));
  ASSERT_TRUE(at_rex.ok());
  ASSERT_EQ(at_rex->size(), 2u);
  EXPECT_EQ((*at_rex)[0].id, ids[1]);
  EXPECT_EQ((*at_rex)[1].id, ids[3]);
  auto nowhere = loop.Run(store_->ListShowtimesAsync(none));
  ASSERT_TRUE(nowhere.ok());
  EXPECT_TRUE(nowhere->empty());
  if (auto* pg = dynamic_cast<PgStore*>(store_.get())) {
    // 3 reads and a missing one, 2 seat maps, then 3 lists with showtimes and 1 without.
    EXPECT_EQ(pg->showtime_read_statements() - sent_before, 3u * 2 + 1 + 2 + 3 * 2 + 1)
        << "every read went through the loop's pipeline";
  }
}

// Within one batch a request sees the ones before it as if they had committed: the quota
// counts the customer's earlier wins of the batch, a refused request names the seats it
// found taken (those won earlier in the batch, not those of a refused request), and a seat
// whose hold expired is free.
TEST_P(HoldBatches, EachRequestOfABatchSeesTheEarlierOnesAsCommitted) {
  const int64_t showtime = MakeShowtime({{"C", 12}});
  ASSERT_TRUE(TryHold(showtime, 90, {"C11"}, Millis(60'000)).ok());  // expires before the batch
  ASSERT_TRUE(TryHold(showtime, 91, {"C12"}).ok());                  // still live
  ASSERT_TRUE(TryHold(showtime, 7, {"C10"}).ok());                   // customer 7 holds 1
  clock_.Advance(Millis(60'001));
  std::vector<HoldRequest> requests = {
      HoldRequest{NewHoldId(showtime), showtime, 7, {"C1", "C2", "C3", "C4"}, kTtl},  // 1 + 4 ≤ 8
      HoldRequest{NewHoldId(showtime), showtime, 7, {"C5", "C6", "C7"}, kTtl},        // 5 + 3 ≤ 8
      HoldRequest{NewHoldId(showtime), showtime, 7, {"C8"}, kTtl},                    // 8 + 1 > 8
      HoldRequest{NewHoldId(showtime), showtime, 8, {"C2", "C6", "C8", "C9"}, kTtl},
      HoldRequest{NewHoldId(showtime), showtime, 8, {"C11", "C9"}, kTtl},  // C11 expired
      HoldRequest{NewHoldId(showtime), showtime, 9, {"C12"}, kTtl},
  };
  std::vector<Result<Hold>> outcomes;
  {
    LoopThread loop;
    outcomes = loop.RunAll(HoldsOf(requests));
  }
  ASSERT_TRUE(outcomes[0].ok()) << outcomes[0].status().message();
  ASSERT_TRUE(outcomes[1].ok()) << outcomes[1].status().message();
  EXPECT_EQ(outcomes[2].status().code(), Code::kHoldLimit);
  EXPECT_EQ(outcomes[2].status().id(), 8) << "the batch's earlier wins count";
  EXPECT_EQ(outcomes[3].status().code(), Code::kConflict);
  EXPECT_EQ(outcomes[3].status().seats(), (std::vector<std::string>{"C2", "C6"}));
  ASSERT_TRUE(outcomes[4].ok()) << outcomes[4].status().message();
  EXPECT_EQ(outcomes[5].status().code(), Code::kConflict);
  EXPECT_EQ(outcomes[5].status().seats(), std::vector<std::string>{"C12"});
  auto owners = Owners(showtime);
  for (const char* seat : {"C1", "C4", "C5", "C7"}) {
    EXPECT_EQ(owners[seat].status, SeatStatus::kHeld) << seat;
  }
  EXPECT_EQ(owners["C1"].hold_id, requests[0].hold_id);
  EXPECT_EQ(owners["C7"].hold_id, requests[1].hold_id);
  EXPECT_EQ(owners["C8"].status, SeatStatus::kAvailable) << "refused requests took nothing";
  EXPECT_EQ(owners["C11"].hold_id, requests[4].hold_id) << "an expired hold's seat is free";
  EXPECT_EQ(owners["C9"].hold_id, requests[4].hold_id);
  EXPECT_EQ(owners["C12"].status, SeatStatus::kHeld);
  EXPECT_NE(owners["C12"].hold_id, requests[5].hold_id);
  for (size_t i : {0u, 1u, 4u}) {
    auto hold = store_->GetHold(outcomes[i].value().hold_id, requests[i].customer_id);
    ASSERT_TRUE(hold.ok()) << i;
    EXPECT_EQ(hold.value().seats, requests[i].seats) << i;
    EXPECT_EQ(hold.value().expires_at, clock_.Now() + kTtl) << i;
  }
}

// The admin's writes on a loop: a showtime created there reads back as one created by the
// blocking call (rows, categories, prices, seat order), an invalid one creates nothing,
// and a waiting room is set on a known showtime only.
TEST_P(HoldBatches, AdminWritesOnALoopAreTheBlockingOnes) {
  NewShowtime s = PricedLayout();
  NewShowtime bad = s;
  bad.rows = {{"C", 2, "standard"}, {"C", 2, "standard"}};  // seat codes twice
  const int64_t before = store_->CountShowtimes().value();
  Result<int64_t> created = Status(Code::kInternal, "not run");
  Result<int64_t> refused = Status(Code::kInternal, "not run");
  Status room_set = Status::Ok(), room_unknown = Status::Ok();
  {
    LoopThread loop;
    created = loop.Run(store_->CreateShowtimeAsync(s));
    refused = loop.Run(store_->CreateShowtimeAsync(bad));
    if (created.ok()) {
      room_set = loop.Run(store_->SetWaitingRoomAsync(*created, {true, 3, Millis(60'000)}));
      room_unknown =
          loop.Run(store_->SetWaitingRoomAsync(*created + 1000, {true, 3, Millis(60'000)}));
    }
  }
  ASSERT_TRUE(created.ok()) << created.status().message();
  EXPECT_FALSE(refused.ok());
  EXPECT_EQ(store_->CountShowtimes().value(), before + 1) << "the refused one left nothing";
  const int64_t blocking = store_->CreateShowtime(s).value();
  auto a = store_->GetShowtime(*created), b = store_->GetShowtime(blocking);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->title, b->title);
  EXPECT_EQ(a->starts_at, b->starts_at);
  EXPECT_EQ(a->seat_count, 20);
  EXPECT_EQ(a->seat_count, b->seat_count);
  ASSERT_EQ(a->prices.size(), b->prices.size());
  for (const auto& [category, price] : b->prices) {
    EXPECT_EQ(a->prices.at(category).amount, price.amount) << category;
  }
  auto ma = store_->GetSeatMap(*created), mb = store_->GetSeatMap(blocking);
  ASSERT_TRUE(ma.ok() && mb.ok());
  ASSERT_EQ(ma->seats.size(), mb->seats.size());
  for (size_t i = 0; i < ma->seats.size(); ++i) {
    EXPECT_EQ(ma->seats[i].code, mb->seats[i].code) << i;
    EXPECT_EQ(ma->seats[i].row, mb->seats[i].row) << i;
    EXPECT_EQ(ma->seats[i].category, mb->seats[i].category) << i;
  }
  EXPECT_TRUE(room_set.ok()) << room_set.message();
  EXPECT_EQ(room_unknown.code(), Code::kNotFound);
  auto rooms = store_->EnabledWaitingRooms().value();
  ASSERT_EQ(rooms.size(), 1u);
  EXPECT_EQ(rooms[0].first, *created);
  EXPECT_EQ(rooms[0].second.active_limit, 3);
}

// /readyz's round trip on a loop: answered by the engine, and on PostgreSQL an engine that
// cannot be reached answers an error within the connect bound, never a hang.
TEST_P(HoldBatches, APingOnALoopReachesTheEngine) {
  PgOptions o;
  o.url = "postgresql://boxoffice@127.0.0.1:1/boxoffice";  // nothing listens on port 1
  o.connect_timeout = Millis(1'000);
  PgStore unreachable(o);  // (made before the loop, which must end first)
  LoopThread loop;
  EXPECT_TRUE(loop.Run(store_->PingAsync()).ok());
  if (GetParam() != Engine::kPostgres) return;
  const Status down = loop.Run(unreachable.PingAsync());
  EXPECT_FALSE(down.ok());
  EXPECT_EQ(down.code(), Code::kUnavailable) << down.message();
}

// The same URL with another port (the proxy's).
std::string WithPort(const std::string& url, unsigned short port) {
  const size_t host = url.find('@');
  const size_t colon = url.find(':', host);
  const size_t slash = url.find('/', colon);
  return url.substr(0, colon + 1) + std::to_string(port) + url.substr(slash);
}

unsigned short PortOf(const std::string& url) {
  const size_t host = url.find('@');
  const size_t colon = url.find(':', host);
  return static_cast<unsigned short>(std::stoi(url.substr(colon + 1, url.find('/', colon))));
}

// The link to the database fails one way while a hold is decided: the database makes the
// hold, its answer never comes, the customer gets 503. The hold must not stay: it is
// released by its id (the service chose it) once the database answers again. Before this
// was done, its seats and the customer's 8-seat limit stayed taken for the hold's TTL.
TEST_P(HoldBatches, AHoldWhoseAnswerWasLostIsReleased) {
  if (GetParam() != Engine::kPostgres) GTEST_SKIP() << "a network between service and database";
  const int64_t showtime = MakeShowtime({{"A", 10}});
  testing::TcpProxy proxy(PortOf(pg_url_));
  PgOptions o;
  o.url = WithPort(pg_url_, proxy.port());
  o.test_clock = &clock_;
  o.statement_timeout = Millis(500);
  o.connect_timeout = Millis(1'000);
  o.pool_size = 2;
  PgStore remote(o);
  Metrics metrics;
  HoldService holds(&remote, HoldPolicy{}, &metrics);
  Result<Hold> answer = Status(Code::kInternal, "not run");
  {
    LoopThread loop;
    ASSERT_TRUE(loop.Run(holds.HoldSeatsAsync(showtime, 7, {"A3"})).ok()) << "the link works";
    ASSERT_TRUE(holds.ReleaseHold(loop.Run(holds.HoldSeatsAsync(showtime, 7, {"A4"}))->hold_id, 7)
                    .ok());
    proxy.SwallowAnswers(true);
    answer = loop.Run(holds.HoldSeatsAsync(showtime, 7, {"A1", "A2"}));
  }
  EXPECT_EQ(answer.status().code(), Code::kUnavailable) << answer.status().message();
  proxy.SwallowAnswers(false);
  proxy.CutAll();  // connections opened while answers were swallowed are half-open: gone
  auto status_of = [&](const std::string& code) {
    auto owners = store_->GetSeatOwners(showtime);
    EXPECT_TRUE(owners.ok());
    for (const auto& o : owners.value()) {
      if (o.code == code) return o.status;
    }
    return SeatStatus::kBooked;  // (no such seat: never the answer awaited)
  };
  bool released = false;
  for (int i = 0; i < 600 && !released; ++i) {  // within the follow-ups' retries (seconds)
    released = status_of("A1") == SeatStatus::kAvailable && status_of("A2") == SeatStatus::kAvailable;
    if (!released) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(released) << "the hold whose answer was lost still keeps its seats";
  // The database had made it: the loss the test is about happened (the hold is there,
  // released).
  PGconn* conn = PQconnectdb(pg_url_.c_str());
  PGresult* made = PQexec(conn,
                          "SELECT status FROM seat_hold WHERE customer_id = 7"
                          "   AND 'A1' = ANY(seats) AND 'A2' = ANY(seats)");
  ASSERT_EQ(PQntuples(made), 1) << PQerrorMessage(conn);
  EXPECT_STREQ(PQgetvalue(made, 0, 0), "RELEASED");
  PQclear(made);
  PQfinish(conn);
  // Only A3 counts toward the customer's 8 seats: 7 more may be held.
  auto seven = store_->HoldSeats(HoldRequest{NewHoldId(showtime), showtime, 7,
                                             {"A10", "A5", "A6", "A7", "A8", "A9", "A1"}, kTtl});
  EXPECT_TRUE(seven.ok()) << seven.status().message();
  holds.follow_ups().Stop();
}

// A hold refused before it reached the database (it cannot be reached) may not have been
// made: nothing is owed, and no repair is queued for it (a store that is down would
// otherwise fill the repairs' queue with holds that never were, crowding out real ones).
TEST_P(HoldBatches, AHoldThatNeverReachedTheDatabaseOwesNoRepair) {
  if (GetParam() != Engine::kPostgres) GTEST_SKIP() << "a database that cannot be reached";
  const int64_t showtime = MakeShowtime({{"A", 10}});
  PgOptions o;
  o.url = WithPort(pg_url_, 1);  // nothing listens on port 1
  o.test_clock = &clock_;
  o.connect_timeout = Millis(1'000);
  PgStore unreachable(o);
  Metrics metrics;
  HoldService holds(&unreachable, HoldPolicy{}, &metrics);
  Result<Hold> answer = Status(Code::kInternal, "not run");
  {
    LoopThread loop;
    answer = loop.Run(holds.HoldSeatsAsync(showtime, 7, {"A1"}));
  }
  EXPECT_EQ(answer.status().code(), Code::kUnavailable) << answer.status().message();
  EXPECT_FALSE(answer.status().maybe_applied()) << answer.status().message();
  EXPECT_EQ(holds.follow_ups().pending(), 0u);
}

// A hold batch that waited for the database's write lock (here another connection's write
// transaction) is decided on the clock of when it has it: sales that closed meanwhile are
// closed for it.
TEST_P(HoldBatches, AHoldThatWaitedForTheWriterIsDecidedOnTheClockOfThen) {
  if (GetParam() != Engine::kSqlite) GTEST_SKIP() << "SQLite's one writer";
  const int64_t showtime = MakeShowtime({{"A", 10}});
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(sqlite_path_.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  LoopThread loop;
  const HoldRequest request{NewHoldId(showtime), showtime, 1, {"A1"}, kTtl};
  auto held = std::async(std::launch::async,
                         [&] { return loop.Run(store_->HoldSeatsAsync(request)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // taken, waiting for the lock
  clock_.Advance(Millis(2 * 86'400'000));                       // past the start: closed
  ASSERT_EQ(sqlite3_exec(other, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(other);
  const Result<Hold> outcome = held.get();
  EXPECT_EQ(outcome.status().code(), Code::kSalesClosed) << outcome.status().message();
  EXPECT_EQ(Owners(showtime)["A1"].status, SeatStatus::kAvailable);
}

INSTANTIATE_TEST_SUITE_P(Engines, HoldBatches, AllEngines(), EngineName);

}  // namespace
}  // namespace boxoffice
