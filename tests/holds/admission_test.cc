// Admission over a real store (SQLite and PostgreSQL) and the in-process room: settings
// kept in the database, signed queue and admission tokens bound to their customer and
// showtime, and the check every hold on a showtime with a waiting room must pass.
#include "holds/admission.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <thread>

#include "store/store_fixture.h"

namespace boxoffice {
namespace {

const std::string kSecret = "admission-test-secret-0123456789abcdef";

class AdmissionTest : public StoreContract {
 protected:
  void SetUp() override {
    StoreContract::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    admission_ = std::make_unique<Admission>(&room_, store_.get(), kSecret, &clock_, &metrics_);
    st_ = MakeShowtime({{"A", 10}});
  }
  Status Hold(int64_t customer, const std::string& token, int64_t showtime = 0) {
    return admission_->CheckHold(showtime ? showtime : st_, customer, &token);
  }
  InProcessWaitingRoom room_;
  Metrics metrics_;
  std::unique_ptr<Admission> admission_;
  int64_t st_ = 0;
};

TEST_P(AdmissionTest, RoomsAreSetInTheStoreAndValidated) {
  EXPECT_EQ(admission_->Configure(st_, {true, 0, Millis(900'000)}).code(), Code::kInvalid);
  EXPECT_EQ(admission_->Configure(st_, {true, 100'001, Millis(900'000)}).code(), Code::kInvalid);
  EXPECT_EQ(admission_->Configure(st_, {true, 5, Millis(5'000)}).code(), Code::kInvalid);
  EXPECT_EQ(admission_->Configure(st_ + 1000, {true, 5, Millis(60'000)}).code(), Code::kNotFound);
  EXPECT_FALSE(admission_->RoomOf(st_).has_value());
  EXPECT_TRUE(admission_->CheckHold(st_, 1, nullptr).ok()) << "no room, no admission needed";
  EXPECT_EQ(admission_->Join(st_, 1).status().code(), Code::kNotFound);

  ASSERT_TRUE(admission_->Configure(st_, {true, 5, Millis(60'000)}).ok());
  // Another instance learns of it from the store at its next round.
  Admission other(&room_, store_.get(), kSecret, &clock_, &metrics_);
  EXPECT_FALSE(other.RoomOf(st_).has_value());
  ASSERT_TRUE(other.RunOnce());
  EXPECT_EQ(other.RoomOf(st_), (WaitingRoomConfig{true, 5, Millis(60'000)}));
  EXPECT_EQ(other.CheckHold(st_, 1, nullptr).code(), Code::kNotAdmitted);
  ASSERT_TRUE(admission_->Configure(st_, {false, 5, Millis(60'000)}).ok());
  ASSERT_TRUE(other.RunOnce());
  EXPECT_FALSE(other.RoomOf(st_).has_value());
  EXPECT_TRUE(other.CheckHold(st_, 1, nullptr).ok());
}

TEST_P(AdmissionTest, AnAdmissionIsGoodOnlyForItsCustomerAndShowtimeWhileItRuns) {
  const int64_t other_showtime = MakeShowtime({{"A", 10}});
  ASSERT_TRUE(admission_->Configure(st_, {true, 1, Millis(60'000)}).ok());
  ASSERT_TRUE(admission_->Configure(other_showtime, {true, 1, Millis(60'000)}).ok());
  auto first = admission_->Join(st_, 101);
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(first->place.admitted);
  EXPECT_EQ(admission_->Join(st_, 101)->queue_token, first->queue_token) << "same place again";
  auto second = admission_->Join(st_, 102);
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->place.admitted);
  EXPECT_EQ(second->place.position, 1);
  EXPECT_GT(second->estimated_wait_seconds, 0);
  EXPECT_TRUE(second->admission_token.empty());

  const std::string token = first->admission_token;
  EXPECT_TRUE(Hold(101, token).ok());
  EXPECT_EQ(Hold(102, token).code(), Code::kNotAdmitted) << "another customer";
  EXPECT_EQ(Hold(101, token, other_showtime).code(), Code::kNotAdmitted) << "another showtime";
  EXPECT_EQ(admission_->CheckHold(st_, 101, nullptr).code(), Code::kNotAdmitted);
  std::string tampered = token;
  tampered[tampered.size() - 3] = tampered[tampered.size() - 3] == 'A' ? 'B' : 'A';
  EXPECT_EQ(Hold(101, tampered).code(), Code::kNotAdmitted);
  // A token for customer 2 made up from customer 1's: the signature does not follow.
  std::string forged = token;
  forged.replace(forged.find(".101."), 5, ".102.");
  EXPECT_EQ(Hold(102, forged).code(), Code::kNotAdmitted);
  EXPECT_EQ(Hold(101, std::string(200, 'a')).code(), Code::kNotAdmitted);

  // Queue tokens: only for their showtime, never forged.
  EXPECT_TRUE(admission_->Find(st_, second->queue_token).ok());
  EXPECT_EQ(admission_->Find(other_showtime, second->queue_token).status().code(), Code::kNotFound);
  std::string forged_queue = second->queue_token;
  forged_queue.replace(forged_queue.find(".102."), 5, ".103.");
  EXPECT_EQ(admission_->Find(st_, forged_queue).status().code(), Code::kNotFound);
  EXPECT_EQ(admission_->Find(st_, "garbage").status().code(), Code::kNotFound);

  // A confirmed booking ends the admission at once, and the next in line is admitted.
  admission_->BookingConfirmed(st_, 101);
  EXPECT_EQ(Hold(101, token).code(), Code::kNotAdmitted);
  auto now_second = admission_->Find(st_, second->queue_token);
  ASSERT_TRUE(now_second.ok());
  ASSERT_TRUE(now_second->place.admitted);
  EXPECT_TRUE(Hold(102, now_second->admission_token).ok());
  // And an admission ends by itself at its expiry.
  clock_.Advance(Millis(60'000));
  EXPECT_EQ(Hold(102, now_second->admission_token).code(), Code::kNotAdmitted);
  EXPECT_EQ(admission_->Find(st_, second->queue_token).status().code(), Code::kNotFound);
}

TEST_P(AdmissionTest, TheKeeperMovesTheLineWithoutAnyoneAsking) {
  ASSERT_TRUE(admission_->Configure(st_, {true, 1, Millis(10'000)}).ok());
  ASSERT_TRUE(admission_->Join(st_, 1)->place.admitted);
  ASSERT_FALSE(admission_->Join(st_, 2)->place.admitted);
  clock_.Advance(Millis(10'000));
  ASSERT_TRUE(admission_->RunOnce());
  // Customer 2 was admitted by the round itself: the room says so without a Join or Find.
  EXPECT_TRUE(room_.Admitted(st_, 2, clock_.Now()).value());
  EXPECT_NE(metrics_.Render().find("boxoffice_waiting_room_admitted{showtime=\"" +
                                   std::to_string(st_) + "\"} 1"),
            std::string::npos)
      << metrics_.Render();
}

// Fails the run (it cannot unwind deadlocked threads) unless Done() is called in time.
class Watchdog {
 public:
  Watchdog(std::chrono::seconds limit, const char* what)
      : thread_([this, limit, what] {
          std::unique_lock lock(mu_);
          if (!cv_.wait_for(lock, limit, [this] { return done_; })) {
            std::fprintf(stderr, "DEADLOCK: %s did not finish within %lld s\n", what,
                         static_cast<long long>(limit.count()));
            std::_Exit(1);
          }
        }) {}
  ~Watchdog() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

// Rooms opening while /metrics is scraped: the keeper's round must never wait on the
// registry while holding the room's lock, nor a scrape call a gauge under the registry's
// (they once did both, and a room enabled during a scrape froze every request). Run under
// ThreadSanitizer (make test-tsan), a lock-order inversion is reported even when the
// threads happen not to meet.
TEST_P(AdmissionTest, RoomsOpeningDuringScrapesNeverDeadlock) {
  constexpr int kRooms = 150;
  std::vector<int64_t> showtimes;
  for (int i = 0; i < kRooms; ++i) showtimes.push_back(MakeShowtime({{"A", 2}}));
  Watchdog watchdog(std::chrono::seconds(120), "opening rooms while scraping");
  std::atomic<bool> opening{true};
  std::thread scraper([&] {
    while (opening.load()) metrics_.Render();
  });
  for (int64_t id : showtimes) {
    ASSERT_TRUE(admission_->Configure(id, {true, 5, Millis(60'000)}).ok());
    ASSERT_TRUE(admission_->Join(id, 7).ok());
    ASSERT_TRUE(admission_->RunOnce());
  }
  opening = false;
  scraper.join();
  const std::string text = metrics_.Render();
  EXPECT_NE(text.find("boxoffice_waiting_room_admitted{showtime=\"" +
                      std::to_string(showtimes.back()) + "\"} 1"),
            std::string::npos);
}

// Rooms that close leave nothing behind: no room in memory, no series in /metrics.
TEST_P(AdmissionTest, ClosedRoomsLeaveNoStateAndNoSeries) {
  const size_t before = metrics_.Render().size();
  std::vector<int64_t> showtimes;
  for (int i = 0; i < 100; ++i) showtimes.push_back(MakeShowtime({{"A", 2}}));
  for (int64_t id : showtimes) {
    ASSERT_TRUE(admission_->Configure(id, {true, 1, Millis(60'000)}).ok());
    ASSERT_TRUE(admission_->Join(id, 1).ok());
    ASSERT_TRUE(admission_->Join(id, 2).ok());
  }
  ASSERT_TRUE(admission_->RunOnce());
  EXPECT_GT(metrics_.Render().size(), before + 100 * 40);
  EXPECT_EQ(room_.RoomCount(), 100u);
  for (int64_t id : showtimes) {
    ASSERT_TRUE(admission_->Configure(id, {false, 1, Millis(60'000)}).ok());
  }
  ASSERT_TRUE(admission_->RunOnce());
  EXPECT_EQ(metrics_.Render().size(), before) << metrics_.Render();
  EXPECT_EQ(room_.RoomCount(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Engines, AdmissionTest,
                         ::testing::Values(Engine::kSqlite, Engine::kPostgres), EngineName);

}  // namespace
}  // namespace boxoffice
