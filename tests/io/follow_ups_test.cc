// Repairs owed after lost answers (io::FollowUps): each is tried at once and then again
// with backoff until it reports done or its deadline passes; past max_pending a new one is
// dropped and counted; a repair that throws is a failed attempt, never the end of the
// process.
#include "io/follow_ups.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>

namespace boxoffice::io {
namespace {

using Clock = FollowUps::Clock;

TEST(FollowUps, ARepairIsTriedUntilItTakes) {
  Metrics metrics;
  FollowUps follow_ups(&metrics, "test");
  std::atomic<int> attempts{0};
  ASSERT_TRUE(follow_ups.Add(
      "thrice",
      [&] { return ++attempts < 3 ? FollowUps::Outcome::kRetry : FollowUps::Outcome::kDone; },
      Clock::now() + std::chrono::seconds(60)));
  follow_ups.Drain();
  EXPECT_EQ(attempts.load(), 3);
  EXPECT_NE(metrics.Render().find("boxoffice_follow_ups_total{owner=\"test\",outcome=\"done\"} 1"),
            std::string::npos)
      << metrics.Render();
}

TEST(FollowUps, ARepairThatThrowsIsAFailedAttempt) {
  Metrics metrics;
  FollowUps follow_ups(&metrics, "test");
  std::atomic<int> attempts{0};
  ASSERT_TRUE(follow_ups.Add(
      "throws first",
      [&]() -> FollowUps::Outcome {
        if (++attempts == 1) throw std::runtime_error("a dependency threw");
        return FollowUps::Outcome::kDone;
      },
      Clock::now() + std::chrono::seconds(60)));
  follow_ups.Drain();
  EXPECT_EQ(attempts.load(), 2);
}

TEST(FollowUps, ARepairEndsAtItsDeadlineAndTheQueueIsBounded) {
  Metrics metrics;
  FollowUps follow_ups(&metrics, "test", /*max_pending=*/2);
  std::atomic<int> attempts{0};
  auto never = [&] {
    ++attempts;
    return FollowUps::Outcome::kRetry;
  };
  ASSERT_TRUE(follow_ups.Add("never", never, Clock::now() + std::chrono::milliseconds(600)));
  ASSERT_TRUE(follow_ups.Add("never", never, Clock::now() + std::chrono::milliseconds(600)));
  EXPECT_FALSE(follow_ups.Add("one too many", never, Clock::now() + std::chrono::seconds(60)));
  follow_ups.Drain();
  EXPECT_GE(attempts.load(), 2);
  const std::string text = metrics.Render();
  EXPECT_NE(text.find("outcome=\"expired\"} 2"), std::string::npos) << text;
  EXPECT_NE(text.find("outcome=\"dropped\"} 1"), std::string::npos) << text;
}

}  // namespace
}  // namespace boxoffice::io
