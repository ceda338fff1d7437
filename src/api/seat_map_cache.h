// SeatMapCache: each showtime's seat map as pre-serialised JSON bytes with its ETag, per
// instance (the design article's §9: the map is read dozens of times per hold).
//
// * At most one store query per showtime per `max_age` (1 s) however many readers: the
//   first reader of a stale map loads it, the others wait for that load and share it
//   (single flight); if it fails, they all get its error rather than queueing retries.
//   On an I/O loop (GetAsync) the load is awaited and so is the wait for another's load:
//   a waiter is a timer on its own loop, which the load's end cancels through the loop's
//   handle; no thread waits. Off the loops (Get) a waiter blocks on a condition variable.
//   Both kinds share every load.
// * This instance's own changes (a hold, a release, a confirmed booking) show at once: the
//   committed change is applied to the cached map (Apply), without a store query, so a
//   storm of holds does not turn into a storm of map loads. A hold or booking that comes
//   while the entry is being loaded is applied to the load's result too (its snapshot may
//   predate the change), so a storm of wins never keeps the entry from refreshing.
// * Other instances' changes (heard through SeatEvents) make the entry reload once it is
//   kRemoteMinAge old, so a storm of remote changes costs at most max_age / kRemoteMinAge
//   loads per max_age, not one per change.
// * While one reader loads an entry that has every change of this instance (it has only
//   aged, or was patched meanwhile), the others are answered from it at once rather than
//   waiting for the load (stale while revalidate), as long as it is less than
//   kStaleLimit × max_age old; so a map read never queues behind the store. An entry a
//   change of this instance made stale is never served.
// * A hold that expires shows as AVAILABLE within max_age (lazy expiry applies on load).
// * The cache is bounded in bytes (max_bytes): each showtime counts its body, its tag, its
//   parsed map (the seats and their strings) and its slot's bookkeeping. Past the bound the
//   least recently used showtimes go first. Get, GetAsync, Peek, Latest, ShowsAvailable and
//   Apply use a showtime (it moves to the hot end, O(1) under mu_); an invalidation does
//   not. A showtime in use (being loaded, waited for, or read right now) is never evicted:
//   it moves to the hot end and goes later. So a map larger than the whole bound is still
//   served to the readers of its load, then kept alone until another showtime's read makes
//   room; the total exceeds the bound only by the showtimes in use when it was checked.
//   An evicted showtime is loaded afresh by its next reader.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/metrics.h"
#include "core/sync.h"
#include "domain/showtime.h"
#include "gate/seat_events.h"
#include "holds/seat_map_view.h"
#include "http/encoding.h"
#include "io/loop.h"

namespace boxoffice::api {

class SeatMapCache {
 public:
  // 32 MiB: about 800 maps of a 200-seat hall (~40 KB each) or 170 of a 1,000-seat one,
  // far more than are read within a max-age at a premiere; a crawl of every showtime cycles
  // through it instead of growing the process.
  static constexpr size_t kDefaultMaxBytes = size_t{32} << 20;
  using Loader = std::function<Result<SeatMap>(int64_t showtime_id)>;
  using AsyncLoader = std::function<io::asio::awaitable<Result<SeatMap>>(int64_t showtime_id)>;
  // A reader waits this long for another's load at most (the store's own timeouts end a
  // load well before), then is answered kUnavailable.
  static constexpr Millis kMaxLoadWait{15'000};

  // A coded body is kept only when at most this share of the body (a 300-seat map: gzip
  // 8.5 %, brotli 7 %), so the two together never pass the quarter counted for them in
  // advance (EntryBytes); a map that compresses worse is sent as it is.
  static constexpr size_t kMaxCodedShare = 8;  // 1/8 of the body each
  // A coding's header lines (its tag, Cache-Control, Vary, Content-Encoding), at most.
  static constexpr size_t kFieldsBytes = 160;

  struct Entry {
    std::shared_ptr<const std::string> body;
    std::string etag;
    Instant loaded_at;
    std::shared_ptr<const SeatMap> map;  // what body says, for Apply
    // the memory the entry holds (body, tag, map, a quarter of the body for its coded
    // forms), as the cache counts it
    size_t bytes = 0;

    // The map ready to send in one coding: the bytes, their tag, and the header lines of
    // the answer, written once per version and coding ("ETag: …\r\nCache-Control: …\r\n
    // Vary: Accept-Encoding\r\n", with Content-Encoding for a 200), so a read builds no
    // header of its own.
    struct Representation {
      std::shared_ptr<const std::string> body;
      std::string tag;  // etag, with "-gz" or "-br" inside its quotes for a coding
      std::shared_ptr<const std::string> fields_200;
      std::shared_ptr<const std::string> fields_304;
    };
    // The map in coding e (identity: as it is), made by the first reader that asks for it,
    // once per version and coding whatever the number of readers (the others wait for it,
    // a tenth of a millisecond); null when a coding does not pay (kMaxCodedShare) or the
    // compressor failed: then the body is sent as it is. Tags differ by coding, so a cache
    // never takes one coding's bytes for another's (RFC 9110 8.8.3.3).
    const Representation* In(http::Encoding e) const;
    // In(e)'s bytes, or null.
    std::shared_ptr<const std::string> Coded(http::Encoding e) const {
      const Representation* r = In(e);
      return r ? r->body : nullptr;
    }

   private:
    struct Form {
      std::once_flag once;
      std::optional<Representation> made;
    };
    mutable std::array<Form, http::kEncodings> forms_;
  };

  // async_loader: the same load, awaited on a loop; by default loader on the loop's
  // blocking pool (io::Offload). max_bytes: the bound on what the cache keeps (0 keeps only
  // the showtimes in use).
  SeatMapCache(Loader loader, const Clock* clock, Millis max_age, Metrics* metrics,
               AsyncLoader async_loader = nullptr, size_t max_bytes = kDefaultMaxBytes);
  ~SeatMapCache();
  SeatMapCache(const SeatMapCache&) = delete;
  SeatMapCache& operator=(const SeatMapCache&) = delete;

  // What the cache keeps now: the bytes it counts, and its showtimes.
  size_t bytes();
  size_t entries();

  // Blocks while another reader loads the entry, or while this one does.
  Result<std::shared_ptr<const Entry>> Get(int64_t showtime_id);
  // The same, awaited on an I/O loop (off the loops: Get).
  io::asio::awaitable<Result<std::shared_ptr<const Entry>>> GetAsync(int64_t showtime_id);
  // The entry if it is fresh now (or servable while another reader loads it), else null;
  // never loads nor waits for a load.
  std::shared_ptr<const Entry> Peek(int64_t showtime_id);
  // The last entry loaded (with this instance's changes since), however old, or null; never
  // loads nor waits (for suggestions such as a refused hold's alternatives, not answers).
  std::shared_ptr<const Entry> Latest(int64_t showtime_id);
  static constexpr Millis kRemoteMinAge{250};
  static constexpr int kStaleLimit = 2;  // × max_age: the oldest entry served while loading
  // Own changes kept for the load in flight; past that, its result is loaded again.
  static constexpr size_t kMaxChangesDuringLoad = 1024;
  static constexpr int kApplyAttempts = 4;  // then the entry is reloaded instead

  // Whether the servable cached map (no store query) shows every one of the seats
  // AVAILABLE; false when there is none or a seat is not in it.
  bool ShowsAvailable(int64_t showtime_id, const std::vector<std::string>& seats);

  // The next reader loads the map afresh.
  void Invalidate(int64_t showtime_id);
  // A seat change heard through SeatEvents:
  // * another instance's: InvalidateRemote;
  // * this instance's release (by the customer or the sweeper): Invalidate, since the freed
  //   seats may already be held again by a newer hold whose change came first;
  // * this instance's hold or booking: Apply.
  void Hear(const SeatChange& change);
  // This instance committed `seats` of the showtime to `status`: the cached map shows it
  // now (its age, and so its next load, unchanged).
  void Apply(int64_t showtime_id, const std::vector<std::string>& seats, SeatStatus status);
  // Another instance changed the showtime: reload once the entry is kRemoteMinAge old.
  void InvalidateRemote(int64_t showtime_id);

 private:
  struct Slot {
    explicit Slot(int64_t id) : showtime_id(id) {}
    const int64_t showtime_id;
    std::mutex mu;
    std::condition_variable loaded;
    std::shared_ptr<const Entry> entry;
    bool stale = true;
    bool remote_stale = false;  // another instance changed it since this entry's load began
    bool loading = false;
    // This instance's holds and bookings since the load in flight began, for its result.
    std::vector<std::pair<std::vector<std::string>, SeatStatus>> changes_during_load;
    bool changes_overflowed = false;
    uint64_t generation = 0;  // bumped by Invalidate
    uint64_t round = 0;       // bumped by every finished load
    Status last_error;        // of the last load, for the readers that waited on it
    // Readers on loops waiting for the load in flight: each a timer its loop awaits, which
    // the load's end cancels through the loop's handle (a loop that has ended drops it).
    // The timer belongs to the waiting coroutine, which is destroyed on its loop while the
    // loop's io_context exists; the cancel, run on that loop, finds it only if it still is.
    // (At most one per reader in flight; one that gave up stays until the load ends.)
    struct Waiter {
      std::shared_ptr<io::LoopHandle> loop;
      std::weak_ptr<io::asio::steady_timer> timer;
    };
    std::vector<Waiter> waiters;
  };
  // The load begun by BeginLoad: its snapshot's generation.
  struct Load {
    uint64_t generation;
  };
  // slot.mu held, the entry not servable and no load in flight: this reader loads it.
  static Load BeginLoad(Slot& slot);
  // slot.mu not held by lock, which holds it on return: installs what the load found,
  // with this instance's changes that came meanwhile, and wakes the readers that waited.
  Result<std::shared_ptr<const Entry>> FinishLoad(Slot& slot, std::unique_lock<std::mutex>& lock,
                                                  const Load& load, Result<SeatMap> map);
  struct LoadGuard;  // ends a load begun on a loop whatever becomes of its coroutine
  // slot.mu held: what a reader that waited for a load finished since `round` gets.
  Result<std::shared_ptr<const Entry>> Shared(const Slot& slot);
  // The showtime's slot, made if there is none (then what no longer fits is evicted).
  std::shared_ptr<Slot> SlotFor(int64_t showtime_id);
  // The showtime's slot, or null. kUse moves it to the hot end (a read or this instance's
  // change); kKeep does not (an invalidation).
  enum class Recency { kUse, kKeep };
  std::shared_ptr<Slot> Existing(int64_t showtime_id, Recency recency);
  static std::shared_ptr<const Entry> MakeEntry(SeatMap map, Instant loaded_at);
  static size_t EntryBytes(const std::string& body, const std::string& etag, const SeatMap& map);
  static size_t StringHeapBytes(const std::string& s);
  static size_t SlotBytes();
  // slot.mu held, slot in use: counts the slot's entry as it is now, then evicts what no
  // longer fits. Lock order: a slot's mu, then mu_.
  void Account(const Slot& slot);
  static void Patch(SeatMap& map, const std::vector<std::string>& seats, SeatStatus status);
  bool Fresh(const Slot& slot) const;                 // slot.mu held
  bool ServableWhileLoading(const Slot& slot) const;  // slot.mu held
  // The entry to answer with now (fresh, or servable while loading), counted; else null.
  std::shared_ptr<const Entry> Servable(const Slot& slot);  // slot.mu held

  Loader loader_;
  AsyncLoader async_loader_;
  const Clock* clock_;
  Millis max_age_;
  Counter& hits_;
  Counter& waits_;
  Counter& loads_;
  Counter& stale_;
  Counter& applied_;
  Counter& evictions_;
  const size_t max_bytes_;

  // A showtime kept: its slot, its place in lru_, and its entry's bytes as last counted.
  struct Node {
    std::shared_ptr<Slot> slot;
    std::list<int64_t>::iterator lru;
    size_t entry_bytes = 0;
  };
  // A make_shared allocation's control block (vtable pointer, two counts).
  static constexpr size_t kSharedBlockBytes = 16;
  // mu_ held: moves the node to the hot end.
  void Touch(Node& node) BOX_REQUIRES(mu_);
  // mu_ held: evicts showtimes not in use, coldest first, until bytes_ fits max_bytes_ (or
  // every showtime left is in use); the slots go to `evicted`, destroyed once mu_ is released.
  void Evict(std::vector<std::shared_ptr<Slot>>* evicted) BOX_REQUIRES(mu_);
  void PublishLocked() BOX_REQUIRES(mu_);  // the gauges' values

  // The gauges' values, shared with their readers (which the registry may call after the
  // cache is gone).
  struct Sizes {
    std::atomic<uint64_t> bytes{0};
    std::atomic<uint64_t> entries{0};
  };
  std::shared_ptr<Sizes> sizes_;
  // Lock order: a slot's mu, then mu_ (Account). Under mu_ no slot's mu is ever taken, not
  // even tried: whether a slot is in use is told by its reference count (Evict).
  Mutex mu_;
  std::unordered_map<int64_t, Node> slots_ BOX_GUARDED_BY(mu_);
  std::list<int64_t> lru_ BOX_GUARDED_BY(mu_);                   // most recently used first
  size_t bytes_ BOX_GUARDED_BY(mu_) = 0;                         // the sum over slots_
};

// The hold path's view of the cache (holds/seat_map_view.h): layouts loaded through its
// single flight, alternatives and disputes from its latest map when not older than
// `recent` (on `clock`).
class SeatMapCacheView final : public SeatMapView {
 public:
  SeatMapCacheView(SeatMapCache* cache, const Clock* clock, Millis recent)
      : cache_(cache), clock_(clock), recent_(recent) {}
  io::asio::awaitable<Result<std::shared_ptr<const SeatMap>>> Load(int64_t showtime_id) override;
  std::shared_ptr<const SeatMap> Recent(int64_t showtime_id) override;
  bool ShowsAvailable(int64_t showtime_id, const std::vector<std::string>& seats) override {
    return cache_->ShowsAvailable(showtime_id, seats);
  }

 private:
  SeatMapCache* cache_;
  const Clock* clock_;
  Millis recent_;
};

}  // namespace boxoffice::api
