// The seat-map cache over a real store (SQLite and PostgreSQL): single flight for a cold
// showtime, at most one load per max-age, invalidation by this instance's own changes,
// lazy expiry within the max-age, errors shared with the readers that waited.
#include "api/seat_map_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <nlohmann/json.hpp>
#include <thread>

#include "store/store_fixture.h"

namespace boxoffice {
namespace {

class SeatMapCacheTest : public StoreContract {
 protected:
  api::SeatMapCache MakeCache() {
    return api::SeatMapCache(
        [this](int64_t id) {
          ++loads_;
          std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a slow query
          return store_->GetSeatMap(id);
        },
        &clock_, Millis(1'000), &metrics_);
  }
  std::string StatusOf(const api::SeatMapCache::Entry& e, size_t seat) {
    return nlohmann::json::parse(*e.body)["seats"][seat]["status"];
  }
  std::atomic<int> loads_{0};
  Metrics metrics_;
};

TEST_P(SeatMapCacheTest, AThousandReadersOfAColdShowtimeMakeOneQuery) {
  const int64_t st = MakeShowtime({{"A", 20}});
  auto cache = MakeCache();
  constexpr int kReaders = 1'000;
  std::barrier start(kReaders);
  std::atomic<int> ok{0};
  std::vector<std::thread> readers;
  for (int i = 0; i < kReaders; ++i) {
    readers.emplace_back([&] {
      start.arrive_and_wait();
      if (cache.Get(st).ok()) ++ok;
    });
  }
  for (auto& t : readers) t.join();
  EXPECT_EQ(ok.load(), kReaders);
  EXPECT_LE(loads_.load(), 2);
}

TEST_P(SeatMapCacheTest, AtMostOneQueryPerMaxAgeAndOwnChangesShowAtOnce) {
  const int64_t st = MakeShowtime({{"A", 4}});
  auto cache = MakeCache();
  auto first = cache.Get(st);
  ASSERT_TRUE(first.ok());
  for (int i = 0; i < 50; ++i) ASSERT_EQ(cache.Get(st).value()->etag, first.value()->etag);
  EXPECT_EQ(loads_.load(), 1);
  // A hold made elsewhere shows once the entry is a max-age old.
  ASSERT_TRUE(TryHold(st, 1, {"A1"}).ok());
  EXPECT_EQ(StatusOf(*cache.Get(st).value(), 0), "AVAILABLE");
  clock_.Advance(Millis(1'000));
  EXPECT_EQ(StatusOf(*cache.Get(st).value(), 0), "HELD");
  EXPECT_EQ(loads_.load(), 2);
  // This instance's own change shows at once.
  ASSERT_TRUE(TryHold(st, 2, {"A2"}).ok());
  cache.Invalidate(st);
  auto after = cache.Get(st).value();
  EXPECT_EQ(StatusOf(*after, 1), "HELD");
  EXPECT_NE(after->etag, first.value()->etag);
  // A hold that expires shows AVAILABLE within the max-age (lazy expiry on load).
  clock_.Advance(kTtl + Millis(1'000));
  EXPECT_EQ(StatusOf(*cache.Get(st).value(), 0), "AVAILABLE");
}

// Another instance's changes (heard through Redis pub/sub) reload the entry once it is
// kRemoteMinAge old: a storm of them costs a few loads per second, not one per change.
TEST_P(SeatMapCacheTest, OtherInstancesChangesReloadAtMostEveryQuarterSecond) {
  const int64_t st = MakeShowtime({{"A", 4}});
  auto cache = MakeCache();
  ASSERT_TRUE(cache.Get(st).ok());
  ASSERT_TRUE(TryHold(st, 1, {"A1"}).ok());
  for (int i = 0; i < 100; ++i) {
    cache.InvalidateRemote(st);
    EXPECT_EQ(StatusOf(*cache.Get(st).value(), 0), "AVAILABLE");
  }
  EXPECT_EQ(loads_.load(), 1);
  clock_.Advance(api::SeatMapCache::kRemoteMinAge);
  EXPECT_EQ(StatusOf(*cache.Get(st).value(), 0), "HELD");
  EXPECT_EQ(loads_.load(), 2);
  // Without a new remote change the entry lives its full max-age again.
  clock_.Advance(api::SeatMapCache::kRemoteMinAge);
  ASSERT_TRUE(cache.Get(st).ok());
  EXPECT_EQ(loads_.load(), 2);
}

TEST_P(SeatMapCacheTest, ReadersThatWaitedShareTheLoadsError) {
  auto cache = MakeCache();
  constexpr int kReaders = 50;
  std::barrier start(kReaders);
  std::atomic<int> not_found{0};
  std::vector<std::thread> readers;
  for (int i = 0; i < kReaders; ++i) {
    readers.emplace_back([&] {
      start.arrive_and_wait();
      if (cache.Get(987654).status().code() == Code::kNotFound) ++not_found;
    });
  }
  for (auto& t : readers) t.join();
  EXPECT_EQ(not_found.load(), kReaders);
  EXPECT_LT(loads_.load(), kReaders / 2);
}

INSTANTIATE_TEST_SUITE_P(Engines, SeatMapCacheTest,
                         ::testing::Values(Engine::kSqlite, Engine::kPostgres), EngineName);

}  // namespace
}  // namespace boxoffice
