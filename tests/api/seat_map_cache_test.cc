// The seat-map cache over a real store (SQLite and PostgreSQL): single flight for a cold
// showtime, at most one load per max-age, invalidation by this instance's own changes,
// lazy expiry within the max-age, errors shared with the readers that waited. Its bound in
// bytes, over maps made in memory: the least recently used showtimes go first and load
// again when read, a showtime being loaded is never evicted, and a bound that fits twenty
// thousand showtimes keeps them all however old, with every byte accounted.
#include "api/seat_map_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <condition_variable>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "api/json_io.h"
#include "store/store_fixture.h"
#include "support/loop_thread.h"

namespace boxoffice {
namespace {

class SeatMapCacheTest : public StoreContract {
 protected:
  api::SeatMapCache MakeCache(size_t max_bytes = api::SeatMapCache::kDefaultMaxBytes) {
    return api::SeatMapCache(
        [this](int64_t id) {
          ++loads_;
          std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a slow query
          return store_->GetSeatMap(id);
        },
        &clock_, Millis(1'000), &metrics_, nullptr, max_bytes);
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
// A version's coded body is made once however many readers ask at the same moment, is the
// body in that coding, and is counted in the entry's bytes in advance; a change makes a new
// version with its own. A map too small to pay for a coding has none (sent as it is).
TEST_P(SeatMapCacheTest, EachVersionIsCompressedOnceWhateverTheReaders) {
  const int64_t st = MakeShowtime({{"A", 20}, {"B", 20}, {"C", 20}, {"D", 20}, {"E", 20}});
  auto cache = MakeCache();
  auto entry = cache.Get(st).value();
  for (http::Encoding e : {http::Encoding::kGzip, http::Encoding::kBrotli}) {
    constexpr int kReaders = 16;
    std::barrier start(kReaders);
    std::vector<std::shared_ptr<const std::string>> seen(kReaders);
    std::vector<std::thread> readers;
    for (int i = 0; i < kReaders; ++i) {
      readers.emplace_back([&, i] {
        start.arrive_and_wait();
        seen[static_cast<size_t>(i)] = entry->Coded(e);
      });
    }
    for (auto& t : readers) t.join();
    ASSERT_NE(seen[0], nullptr);
    for (const auto& s : seen) EXPECT_EQ(s.get(), seen[0].get()) << "one compression";
    EXPECT_EQ(http::Decompress(e, *seen[0]), *entry->body);
    EXPECT_LE(seen[0]->size(), entry->body->size() / api::SeatMapCache::kMaxCodedShare);
  }
  // The coded bodies' quarter is counted on top of the body and the parsed seats (whose
  // strings and the entry's own blocks come to far less than that quarter).
  EXPECT_GE(entry->bytes, entry->body->size() + entry->map->seats.capacity() * sizeof(SeatView) +
                              2 * (entry->body->size() / api::SeatMapCache::kMaxCodedShare));
  cache.Apply(st, {"A1"}, SeatStatus::kHeld);
  auto changed = cache.Get(st).value();
  ASSERT_NE(changed.get(), entry.get());
  auto coded = changed->Coded(http::Encoding::kGzip);
  ASSERT_NE(coded, nullptr);
  EXPECT_NE(coded.get(), entry->Coded(http::Encoding::kGzip).get());
  EXPECT_EQ(http::Decompress(http::Encoding::kGzip, *coded), *changed->body);
  const int64_t tiny = MakeShowtime({{"A", 2}});
  EXPECT_EQ(cache.Get(tiny).value()->Coded(http::Encoding::kBrotli), nullptr)
      << "a 2-seat map does not compress to an eighth";
}

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
                                {"seats", seats},
                                {"status", "SCHEDULED"}};
  EXPECT_EQ(api::SeatMapJson(map), expected.dump());
  SeatMap cancelled = map;
  cancelled.cancelled = true;
  nlohmann::json closed = expected;
  closed["status"] = "CANCELLED";
  EXPECT_EQ(api::SeatMapJson(cancelled), closed.dump());
  EXPECT_NE(api::SeatMapEtag(cancelled), api::SeatMapEtag(map));
  EXPECT_NE(
      api::SeatMapJson(map).find(
          R"("rows":[{"aisles":[2],"row":"A"},{"aisles":[],"row":"AA"},{"aisles":[3,4],"row":"B"}])"),
      std::string::npos);
  // The layout is part of the body, so of its tag: a cached old body is never kept for it.
  SeatMap plain = map;
  plain.seats[0].accessible = false;
  EXPECT_NE(api::SeatMapEtag(plain), api::SeatMapEtag(map));
  plain = map;
  plain.seats[1].aisle_after = false;
  EXPECT_NE(api::SeatMapEtag(plain), api::SeatMapEtag(map));
  map.seats.clear();
  EXPECT_EQ(
      api::SeatMapJson(map),
      R"({"asOf":"2030-03-17T17:46:40.123Z","rows":[],"seats":[],"showtimeId":42,"status":"SCHEDULED"})");
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

// A showtime read long ago goes to make room for others, and its next read loads it afresh
// (a hold made elsewhere meanwhile shows, though the max-age has not passed); changes heard
// for it while it is gone are no-ops.
TEST_P(SeatMapCacheTest, AnEvictedShowtimeLoadsAgainOnItsNextRead) {
  const int64_t a = MakeShowtime({{"A", 10}});
  const int64_t b = MakeShowtime({{"A", 10}});
  const int64_t c = MakeShowtime({{"A", 10}});
  size_t per_showtime = 0;
  {
    auto probe = MakeCache();
    ASSERT_TRUE(probe.Get(a).ok());
    per_showtime = probe.bytes();
  }
  loads_ = 0;
  auto cache = MakeCache(2 * per_showtime + per_showtime / 2);  // room for two showtimes
  ASSERT_TRUE(cache.Get(a).ok());
  ASSERT_TRUE(TryHold(a, 1, {"A1"}).ok());  // made elsewhere: the cached map does not show it
  EXPECT_EQ(StatusOf(*cache.Get(a).value(), 0), "AVAILABLE");
  ASSERT_TRUE(cache.Get(b).ok());
  ASSERT_TRUE(cache.Get(c).ok());
  EXPECT_EQ(cache.Latest(a), nullptr) << "the least recently used showtime went";
  EXPECT_EQ(cache.entries(), 2u);
  cache.Apply(a, {"A2"}, SeatStatus::kHeld);
  cache.Invalidate(a);
  cache.InvalidateRemote(a);
  EXPECT_EQ(cache.entries(), 2u) << "a change to a showtime not kept keeps nothing";
  EXPECT_EQ(loads_.load(), 3);

  auto again = cache.Get(a);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(loads_.load(), 4);
  EXPECT_EQ(StatusOf(*again.value(), 0), "HELD") << "loaded afresh, within the max-age";
  EXPECT_EQ(StatusOf(*again.value(), 1), "AVAILABLE");
  EXPECT_EQ(cache.Get(a).value(), again.value()) << "and kept: the next read is a hit";
  EXPECT_EQ(loads_.load(), 4);
  EXPECT_EQ(cache.Latest(b), nullptr) << "b, now the least recently used, made room";
  EXPECT_NE(cache.Latest(c), nullptr);
  EXPECT_LE(cache.bytes(), 2 * per_showtime + per_showtime / 2);
}

// A map made in memory: `seats` seats in rows of ten; its body ends with its showtime's id.
SeatMap InMemorySeatMap(int64_t showtime_id, int seats) {
  SeatMap map{showtime_id, kStart, {}};
  for (int i = 0; i < seats; ++i) {
    const std::string row(1, static_cast<char>('A' + i / 10));
    map.seats.push_back(
        {row + std::to_string(i % 10 + 1), row, i % 10 + 1, "standard", SeatStatus::kAvailable});
  }
  return map;
}

// The cache's bound in bytes, over maps made in memory (no store: what is measured is the
// cache alone). The loader counts loads by showtime and holds back the showtimes blocked.
class SeatMapCacheBoundTest : public ::testing::Test {
 protected:
  static constexpr int kSeats = 100;

  api::SeatMapCache MakeCache(size_t max_bytes, int seats = kSeats) {
    return api::SeatMapCache(
        [this, seats](int64_t id) -> Result<SeatMap> {
          std::unique_lock lock(mu_);
          ++loads_[id];
          cv_.notify_all();
          cv_.wait(lock, [&] { return !blocked_.contains(id); });
          return InMemorySeatMap(id, seats);
        },
        &clock_, Millis(1'000), &metrics_, nullptr, max_bytes);
  }
  // What one showtime of `seats` seats costs the cache: its entry and its slot, and its
  // slot alone.
  struct Cost {
    size_t showtime;
    size_t slot;
  };
  static Cost CostOf(int seats) {
    ManualClock clock(kStart);
    Metrics metrics;
    api::SeatMapCache probe(
        [seats](int64_t id) -> Result<SeatMap> { return InMemorySeatMap(id, seats); }, &clock,
        Millis(1'000), &metrics);
    auto entry = probe.Get(1);
    EXPECT_TRUE(entry.ok());
    return Cost{probe.bytes(), probe.bytes() - entry.value()->bytes};
  }
  int Loads(int64_t id) {
    std::lock_guard lock(mu_);
    auto it = loads_.find(id);
    return it == loads_.end() ? 0 : it->second;
  }
  void Block(int64_t id) {
    std::lock_guard lock(mu_);
    blocked_.insert(id);
  }
  void Release(int64_t id) {
    {
      std::lock_guard lock(mu_);
      blocked_.erase(id);
    }
    cv_.notify_all();
  }
  void WaitForLoad(int64_t id) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return loads_.contains(id); });
  }
  bool Rendered(const std::string& series) {
    return metrics_.Render().find("\n" + series + "\n") != std::string::npos;
  }

  ManualClock clock_{kStart};
  Metrics metrics_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<int64_t, int> loads_;  // guarded by mu_
  std::set<int64_t> blocked_;     // guarded by mu_
};

// A crawl of forty showtimes through a cache with room for four: the accounted bytes never
// pass the bound, and the showtimes read least recently go first, so one read all along
// (a premiere's) is never loaded again.
TEST_F(SeatMapCacheBoundTest, TheLeastRecentlyUsedGoFirstAndTheBytesStayWithinTheBound) {
  const Cost cost = CostOf(kSeats);
  const size_t budget = 4 * cost.showtime + cost.showtime / 2;
  auto cache = MakeCache(budget);
  for (int64_t id = 1; id <= 4; ++id) ASSERT_TRUE(cache.Get(id).ok());
  EXPECT_EQ(cache.entries(), 4u);
  // What an entry counts is at least its body and its seats.
  auto first = cache.Latest(1);
  ASSERT_TRUE(first);
  EXPECT_GE(first->bytes, first->body->size() + kSeats * sizeof(SeatView));

  ASSERT_TRUE(cache.Get(1).ok());  // 1 is now the most recently used, 2 the least
  ASSERT_TRUE(cache.Get(5).ok());
  EXPECT_EQ(cache.entries(), 4u);
  EXPECT_LE(cache.bytes(), budget);
  EXPECT_EQ(cache.Latest(2), nullptr) << "the least recently used went";
  EXPECT_NE(cache.Latest(1), nullptr);

  for (int64_t id = 6; id <= 40; ++id) {
    ASSERT_TRUE(cache.Get(id).ok());
    ASSERT_TRUE(cache.Peek(1)) << "read all along, so never evicted";
    EXPECT_LE(cache.bytes(), budget) << "showtime " << id;
    EXPECT_LE(cache.entries(), 4u) << "showtime " << id;
  }
  EXPECT_EQ(Loads(1), 1);
  for (int64_t id = 2; id <= 37; ++id) EXPECT_EQ(cache.Latest(id), nullptr) << id;
  for (int64_t id : {38, 39, 40}) EXPECT_NE(cache.Latest(id), nullptr) << id;
  EXPECT_TRUE(Rendered("boxoffice_seatmap_cache_evictions_total 36")) << metrics_.Render();
  EXPECT_TRUE(Rendered("boxoffice_seatmap_cache_entries 4")) << metrics_.Render();
  EXPECT_TRUE(Rendered("boxoffice_seatmap_cache_bytes " + std::to_string(cache.bytes())))
      << metrics_.Render();
}

// A showtime whose first load is in flight (its reader, and one waiting for that load,
// hold it) stays while twenty others pass through a cache with room for two; its load's
// result is kept and served, and once unused it goes like any other.
TEST_F(SeatMapCacheBoundTest, AShowtimeBeingLoadedIsNeverEvicted) {
  const Cost cost = CostOf(kSeats);
  const size_t budget = 2 * cost.showtime + cost.showtime / 2;
  auto cache = MakeCache(budget);
  Block(1);
  std::shared_ptr<const api::SeatMapCache::Entry> loaded, waited;
  std::thread loader([&] {
    auto r = cache.Get(1);
    ASSERT_TRUE(r.ok()) << r.status().message();
    loaded = r.value();
  });
  WaitForLoad(1);
  std::thread waiter([&] {
    auto r = cache.Get(1);
    ASSERT_TRUE(r.ok()) << r.status().message();
    waited = r.value();
  });
  for (int64_t id = 2; id <= 21; ++id) {
    EXPECT_TRUE(cache.Get(id).ok());  // (no ASSERT before the threads are joined)
    EXPECT_LE(cache.bytes(), budget) << "showtime " << id;
  }
  EXPECT_EQ(cache.Latest(2), nullptr) << "the others were evicted";
  Release(1);
  loader.join();
  waiter.join();
  EXPECT_EQ(Loads(1), 1) << "one load, shared: the slot stayed while it was loaded";
  ASSERT_TRUE(loaded);
  EXPECT_EQ(waited, loaded);
  EXPECT_EQ(cache.Peek(1), loaded) << "its result was kept";
  EXPECT_TRUE(loaded->body->ends_with("\"showtimeId\":1,\"status\":\"SCHEDULED\"}"));
  EXPECT_LE(cache.bytes(), budget);
  // Unused now: three newer showtimes push it out.
  for (int64_t id = 22; id <= 24; ++id) ASSERT_TRUE(cache.Get(id).ok());
  EXPECT_EQ(cache.Latest(1), nullptr);
  EXPECT_LE(cache.bytes(), budget);
}

// Twenty thousand showtimes under a bound that fits them all: every one is kept however
// old (Latest answers for each, none loaded twice, none evicted), and the accounted bytes
// are exactly their entries' and slots', through loads and applied changes alike.
TEST_F(SeatMapCacheBoundTest, TwentyThousandShowtimesWithinTheBoundAreAllKept) {
  constexpr int64_t kShowtimes = 20'000;
  constexpr int kFew = 4;  // seats a showtime
  const Cost cost = CostOf(kFew);
  auto cache = MakeCache(size_t{1} << 30, kFew);
  for (int64_t id = 1; id <= kShowtimes; ++id) {
    ASSERT_TRUE(cache.Get(id).ok());
    if (id % 1'000 == 0) clock_.Advance(Millis(1'000));  // the early ones age past max-age
  }
  EXPECT_EQ(cache.entries(), static_cast<size_t>(kShowtimes));
  auto accounted = [&] {
    size_t sum = 0;
    for (int64_t id = 1; id <= kShowtimes; ++id) {
      auto entry = cache.Latest(id);
      if (!entry) {
        ADD_FAILURE() << "showtime " << id << " was dropped";
        continue;
      }
      EXPECT_TRUE(entry->body->ends_with("\"showtimeId\":" + std::to_string(id) +
                                         ",\"status\":\"SCHEDULED\"}"))
          << id;
      sum += entry->bytes;
    }
    return sum + kShowtimes * cost.slot;
  };
  EXPECT_EQ(cache.bytes(), accounted());
  for (int64_t id = 1; id <= kShowtimes; id += 97) {
    cache.Apply(id, {"A1", "A2"}, SeatStatus::kBooked);
  }
  EXPECT_EQ(cache.bytes(), accounted()) << "a patched entry replaces what the old one counted";
  EXPECT_EQ(cache.entries(), static_cast<size_t>(kShowtimes));
  {
    std::lock_guard lock(mu_);
    EXPECT_EQ(loads_.size(), static_cast<size_t>(kShowtimes));
    for (const auto& [id, loads] : loads_) EXPECT_EQ(loads, 1) << "showtime " << id;
  }
  EXPECT_TRUE(Rendered("boxoffice_seatmap_cache_evictions_total 0")) << metrics_.Render();
  EXPECT_TRUE(Rendered("boxoffice_seatmap_cache_entries 20000")) << metrics_.Render();
}

INSTANTIATE_TEST_SUITE_P(Engines, SeatMapCacheTest,
                         ::testing::Values(Engine::kSqlite, Engine::kPostgres), EngineName);

}  // namespace
}  // namespace boxoffice
