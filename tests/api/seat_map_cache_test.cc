// The seat-map cache over a real store (SQLite and PostgreSQL): single flight for a cold
// showtime, at most one load per max-age, invalidation by this instance's own changes,
// lazy expiry within the max-age, errors shared with the readers that waited.
#include "api/seat_map_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "api/json_io.h"
#include "store/store_fixture.h"
#include "support/loop_thread.h"

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

// The seat map is written by hand for speed; it must be the bytes nlohmann writes.
TEST(SeatMapJson, IsWhatAJsonLibraryWouldWrite) {
  SeatMap map{42, FromEpochMs(1'900'000'000'123), {}};
  map.seats.push_back({"A1", "A", 1, "standard", SeatStatus::kAvailable, true, false});
  map.seats.push_back({"A2", "A", 2, "standard", SeatStatus::kAvailable, false, true});
  map.seats.push_back({"A3", "A", 3, "standard", SeatStatus::kAvailable, true, false});
  map.seats.push_back({"AA12", "AA", 12, "vip \"lounge\" \u00e9\\", SeatStatus::kHeld});
  map.seats.push_back({"B3", "B", 3, "x", SeatStatus::kBooked, false, true});
  map.seats.push_back({"B4", "B", 4, "x", SeatStatus::kBooked, false, true});
  map.seats.push_back({"B5", "B", 5, "x", SeatStatus::kBooked});
  nlohmann::json seats = nlohmann::json::array();
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& s : map.seats) {
    nlohmann::json seat = {{"code", s.code},
                           {"row", s.row},
                           {"number", s.number},
                           {"category", s.category},
                           {"status", SeatStatusName(s.status)}};
    if (s.accessible) seat["accessible"] = true;
    seats.push_back(seat);
    if (rows.empty() || rows.back()["row"] != s.row)
      rows.push_back({{"row", s.row}, {"aisles", nlohmann::json::array()}});
    if (s.aisle_after) rows.back()["aisles"].push_back(s.number);
  }
  const nlohmann::json expected{{"showtimeId", 42},
                                {"asOf", "2030-03-17T17:46:40.123Z"},
                                {"rows", rows},
                                {"seats", seats}};
  EXPECT_EQ(api::SeatMapJson(map), expected.dump());
  EXPECT_NE(api::SeatMapJson(map).find(R"("rows":[{"aisles":[2],"row":"A"},{"aisles":[],"row":"AA"},{"aisles":[3,4],"row":"B"}])"),
            std::string::npos);
  // The layout is part of the body, so of its tag: a cached old body is never kept for it.
  SeatMap plain = map;
  plain.seats[0].accessible = false;
  EXPECT_NE(api::SeatMapEtag(plain), api::SeatMapEtag(map));
  plain = map;
  plain.seats[1].aisle_after = false;
  EXPECT_NE(api::SeatMapEtag(plain), api::SeatMapEtag(map));
  map.seats.clear();
  EXPECT_EQ(api::SeatMapJson(map),
            R"({"asOf":"2030-03-17T17:46:40.123Z","rows":[],"seats":[],"showtimeId":42})");
}

// This instance's committed changes are applied to the cached map: shown at once, with a
// new ETag, and no store query (a storm of holds is not a storm of map loads).
TEST_P(SeatMapCacheTest, OwnChangesAreAppliedWithoutAQuery) {
  const int64_t st = MakeShowtime({{"A", 4}});
  auto cache = MakeCache();
  auto first = cache.Get(st).value();
  ASSERT_TRUE(TryHold(st, 1, {"A1", "A2"}).ok());
  cache.Apply(st, {"A1", "A2"}, SeatStatus::kHeld);
  auto held = cache.Get(st).value();
  EXPECT_EQ(StatusOf(*held, 0), "HELD");
  EXPECT_EQ(StatusOf(*held, 1), "HELD");
  EXPECT_EQ(StatusOf(*held, 2), "AVAILABLE");
  EXPECT_NE(held->etag, first->etag);
  EXPECT_EQ(held->loaded_at, first->loaded_at) << "its age is the load's";
  cache.Apply(st, {"A2"}, SeatStatus::kAvailable);
  EXPECT_EQ(StatusOf(*cache.Get(st).value(), 1), "AVAILABLE");
  EXPECT_EQ(loads_.load(), 1);
  // The patched map is what a load would give (same ETag), once the store agrees.
  ASSERT_TRUE(store_->ReleaseHold(TryHold(st, 2, {"A4"}).value().hold_id, 2).ok());
  clock_.Advance(Millis(1'000));
  auto reloaded = cache.Get(st).value();
  EXPECT_EQ(loads_.load(), 2);
  EXPECT_EQ(StatusOf(*reloaded, 0), "HELD");
  EXPECT_EQ(StatusOf(*reloaded, 1), "HELD") << "A2 is still held in the store: the load says so";
}

// What the cache does with each kind of seat change it hears.
TEST_P(SeatMapCacheTest, HeardChangesApplyReloadOrAgeAsTheirKindAsks) {
  const int64_t st = MakeShowtime({{"A", 4}});
  auto cache = MakeCache();
  ASSERT_TRUE(cache.Get(st).ok());
  auto hold = TryHold(st, 1, {"A1"});
  ASSERT_TRUE(hold.ok());
  cache.Hear({SeatChange::Type::kHeld, st, {"A1"}, clock_.Now()});
  EXPECT_EQ(StatusOf(*cache.Get(st).value(), 0), "HELD");
  EXPECT_EQ(loads_.load(), 1) << "own hold: applied";
  // Released, then held again by someone else before the release was heard: a reload
  // shows the truth where patching would have shown AVAILABLE.
  ASSERT_TRUE(store_->ReleaseHold(hold->hold_id, 1).ok());
  ASSERT_TRUE(TryHold(st, 2, {"A1"}).ok());
  cache.Hear({SeatChange::Type::kReleased, st, {"A1"}, clock_.Now()});
  EXPECT_EQ(StatusOf(*cache.Get(st).value(), 0), "HELD");
  EXPECT_EQ(loads_.load(), 2) << "own release: reloaded";
  SeatChange remote{SeatChange::Type::kHeld, st, {"A2"}, clock_.Now()};
  remote.remote = true;
  cache.Hear(remote);
  ASSERT_TRUE(cache.Get(st).ok());
  EXPECT_EQ(loads_.load(), 2) << "another instance's: reloaded only once 250 ms old";
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

// While one reader reloads an aged map, the others are answered from it at once (never
// from one past kStaleLimit × max-age); this instance's wins during a reload show at once
// and are applied to the reload's result, whose snapshot was taken before them.
TEST_P(SeatMapCacheTest, ReadersDoNotWaitForTheReloadOfAnAgedMap) {
  const int64_t st = MakeShowtime({{"A", 4}});
  std::mutex mu;
  std::condition_variable cv;
  bool open = true;
  int entered = 0;
  api::SeatMapCache cache(
      [&](int64_t id) {
        auto snapshot = store_->GetSeatMap(id);  // taken first, then the load is slow
        std::unique_lock lock(mu);
        ++entered;
        cv.notify_all();
        cv.wait(lock, [&] { return open; });
        return snapshot;
      },
      &clock_, Millis(1'000), &metrics_);
  auto load_in_background = [&](int64_t showtime) {
    {
      std::lock_guard lock(mu);
      open = false;
    }
    const int before = entered;
    std::thread loader([&cache, showtime] { EXPECT_TRUE(cache.Get(showtime).ok()); });
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return entered > before; });
    return loader;
  };
  auto finish = [&](std::thread& loader) {
    {
      std::lock_guard lock(mu);
      open = true;
    }
    cv.notify_all();
    loader.join();
  };
  ASSERT_TRUE(cache.Get(st).ok());
  const auto first = cache.Peek(st);
  ASSERT_TRUE(first);
  ASSERT_TRUE(TryHold(st, 1, {"A1"}).ok());  // made elsewhere
  clock_.Advance(Millis(1'000));
  EXPECT_EQ(cache.Peek(st), nullptr) << "aged, and nobody reloads it: a reader must";

  std::thread loader = load_in_background(st);
  EXPECT_EQ(cache.Peek(st), first);
  EXPECT_EQ(cache.Get(st).value(), first) << "Get does not wait either";
  clock_.Advance(Millis(1'000));  // 2 × max-age old
  EXPECT_EQ(cache.Peek(st), nullptr);
  finish(loader);
  const auto second = cache.Peek(st);
  ASSERT_TRUE(second);
  EXPECT_EQ(StatusOf(*second, 0), "HELD");

  // This instance holds A2 after the reload took its snapshot: the aged entry shows it at
  // once, and so does the reload's result, which is fresh.
  clock_.Advance(Millis(1'000));
  loader = load_in_background(st);
  EXPECT_EQ(cache.Peek(st), second);
  ASSERT_TRUE(TryHold(st, 2, {"A2"}).ok());
  cache.Apply(st, {"A2"}, SeatStatus::kHeld);
  const auto patched = cache.Peek(st);
  ASSERT_TRUE(patched);
  EXPECT_EQ(StatusOf(*patched, 1), "HELD");
  finish(loader);
  const auto third = cache.Peek(st);
  ASSERT_TRUE(third);
  EXPECT_NE(third, patched);
  EXPECT_EQ(StatusOf(*third, 1), "HELD") << "the snapshot predates A2; the win was applied";
  EXPECT_EQ(third->loaded_at, clock_.Now());
  const int loads = entered;
  EXPECT_EQ(cache.Peek(st), third);
  EXPECT_EQ(entered, loads);

  // The first load of a showtime, with a win during it.
  const int64_t other = MakeShowtime({{"B", 2}});
  loader = load_in_background(other);
  EXPECT_EQ(cache.Peek(other), nullptr);
  ASSERT_TRUE(TryHold(other, 3, {"B2"}).ok());
  cache.Apply(other, {"B2"}, SeatStatus::kHeld);
  finish(loader);
  const auto cold = cache.Peek(other);
  ASSERT_TRUE(cold);
  EXPECT_EQ(StatusOf(*cold, 1), "HELD");
  EXPECT_NE(
      metrics_.Render().find("boxoffice_seatmap_cache_total{outcome=\"stale_while_loading\"} 4"),
      std::string::npos)
      << metrics_.Render();
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

// A slow load on a loop: counted, then the store's read on the loop's blocking pool after
// 50 ms, so readers arriving meanwhile must wait for it. (A plain function: a coroutine
// takes its state by value.)
io::asio::awaitable<Result<SeatMap>> SlowLoad(Store* store, int64_t id, std::atomic<int>* loads) {
  ++*loads;
  auto work = [store, id] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return store->GetSeatMap(id);
  };
  co_return co_await io::Offload(std::move(work));
}

// Readers on two loops and a blocking one, arriving while one load is in flight: one load
// for all (single flight across loops: the forty readers a loop starts in one turn cannot
// all miss the load one of them or another began), each answered with its result, or each
// with its error; the loops' readers wait as timers, no thread of theirs blocks.
TEST_P(SeatMapCacheTest, ReadersOnLoopsShareOneLoadAndItsError) {
  const int64_t st = MakeShowtime({{"A", 20}});
  // (The blocking reader may be the one that loads: its loader is as slow and counted.)
  api::SeatMapCache cache(
      [this](int64_t id) {
        ++loads_;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        return store_->GetSeatMap(id);
      },
      &clock_, Millis(1'000), &metrics_,
      [this](int64_t id) { return SlowLoad(store_.get(), id, &loads_); });
  io::BlockingPool blocking(2, 64, &metrics_.GetCounter("test_overloaded_total", "test"));
  testing::LoopThread a(&blocking), b(&blocking);
  testing::JoinPool join_blocking(&blocking);  // before the loops' io_contexts go
  constexpr int kPerLoop = 40;
  for (const int64_t showtime : {st, int64_t{987654}}) {
    SCOPED_TRACE("showtime " + std::to_string(showtime));
    loads_ = 0;
    auto readers = [&cache, showtime] {
      std::vector<io::asio::awaitable<Result<std::shared_ptr<const api::SeatMapCache::Entry>>>> w;
      for (int i = 0; i < kPerLoop; ++i) w.push_back(cache.GetAsync(showtime));
      return w;
    };
    std::vector<Result<std::shared_ptr<const api::SeatMapCache::Entry>>> on_a, on_b;
    std::thread first([&] { on_a = a.RunAll(readers()); });
    std::thread second([&] { on_b = b.RunAll(readers()); });
    auto blocking_reader = cache.Get(showtime);
    first.join();
    second.join();
    // (An error is not kept: a reader that comes after the failed load loads again.)
    if (showtime == st) {
      EXPECT_EQ(loads_.load(), 1) << "one load for every reader";
    } else {
      EXPECT_LT(loads_.load(), kPerLoop) << "readers that came during a load shared it";
    }
    on_a.insert(on_a.end(), on_b.begin(), on_b.end());
    on_a.push_back(blocking_reader);
    for (const auto& r : on_a) {
      if (showtime == st) {
        ASSERT_TRUE(r.ok()) << r.status().message();
        EXPECT_EQ(*r.value()->body, *on_a.front().value()->body);
      } else {
        EXPECT_EQ(r.status().code(), Code::kNotFound);
      }
    }
  }
}

// A load that never answers (it waits a minute), counted.
io::asio::awaitable<Result<SeatMap>> NeverLoads(std::atomic<int>* loads) {
  ++*loads;
  io::asio::steady_timer forever(co_await io::asio::this_coro::executor, std::chrono::minutes(1));
  boost::system::error_code ec;
  co_await forever.async_wait(io::asio::redirect_error(io::asio::use_awaitable, ec));
  co_return Status(Code::kInternal, "unreachable");
}

// `serve` stops its loops with a load in flight on one of them: the load ends with its
// coroutine, so a blocking reader after it (a seat stream's opening, on a worker) loads
// the map afresh rather than waiting for a load nobody will finish.
TEST_P(SeatMapCacheTest, ALoadAbandonedWithItsLoopLeavesNoReaderWaiting) {
  const int64_t st = MakeShowtime({{"A", 4}});
  api::SeatMapCache cache(
      [this](int64_t id) {
        ++loads_;
        return store_->GetSeatMap(id);
      },
      &clock_, Millis(1'000), &metrics_, [this](int64_t) { return NeverLoads(&loads_); });
  {
    testing::LoopThread loop;
    loop.Start(cache.GetAsync(st));
    while (loads_.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }  // the loop ends with the load in flight
  auto after = cache.Get(st);
  ASSERT_TRUE(after.ok()) << after.status().message();
  EXPECT_EQ(loads_.load(), 2);
}

INSTANTIATE_TEST_SUITE_P(Engines, SeatMapCacheTest,
                         ::testing::Values(Engine::kSqlite, Engine::kPostgres), EngineName);

}  // namespace
}  // namespace boxoffice
