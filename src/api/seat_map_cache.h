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
// * At most kMaxEntries showtimes are kept; beyond that, entries older than max_age go.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/metrics.h"
#include "gate/seat_events.h"
#include "io/loop.h"
#include "store/store.h"

namespace boxoffice::api {

class SeatMapCache {
 public:
  static constexpr size_t kMaxEntries = 4096;
  using Loader = std::function<Result<SeatMap>(int64_t showtime_id)>;
  using AsyncLoader = std::function<io::asio::awaitable<Result<SeatMap>>(int64_t showtime_id)>;
  // A reader waits this long for another's load at most (the store's own timeouts end a
  // load well before), then is answered kUnavailable.
  static constexpr Millis kMaxLoadWait{15'000};

  struct Entry {
    std::shared_ptr<const std::string> body;
    std::string etag;
    Instant loaded_at;
    std::shared_ptr<const SeatMap> map;  // what body says, for Apply
  };

  // async_loader: the same load, awaited on a loop; by default loader on the loop's
  // blocking pool (io::Offload).
  SeatMapCache(Loader loader, const Clock* clock, Millis max_age, Metrics* metrics,
               AsyncLoader async_loader = nullptr);

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
  std::shared_ptr<Slot> SlotFor(int64_t showtime_id);
  std::shared_ptr<Slot> Existing(int64_t showtime_id);
  static std::shared_ptr<const Entry> MakeEntry(SeatMap map, Instant loaded_at);
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
  std::mutex mu_;
  std::unordered_map<int64_t, std::shared_ptr<Slot>> slots_;
};

}  // namespace boxoffice::api
