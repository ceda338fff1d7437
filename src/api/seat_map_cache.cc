#include "api/seat_map_cache.h"

#include <algorithm>

#include "api/json_io.h"

namespace boxoffice::api {

SeatMapCache::SeatMapCache(Loader loader, const Clock* clock, Millis max_age, Metrics* metrics,
                           AsyncLoader async_loader, size_t max_bytes)
    : loader_(std::move(loader)),
      async_loader_(std::move(async_loader)),
      clock_(clock),
      max_age_(max_age),
      hits_(metrics->GetCounter("boxoffice_seatmap_cache_total",
                                "Seat map reads by how the cache served them.", "outcome=\"hit\"")),
      waits_(metrics->GetCounter("boxoffice_seatmap_cache_total",
                                 "Seat map reads by how the cache served them.",
                                 "outcome=\"waited\"")),
      loads_(metrics->GetCounter("boxoffice_seatmap_cache_total",
                                 "Seat map reads by how the cache served them.",
                                 "outcome=\"loaded\"")),
      stale_(metrics->GetCounter("boxoffice_seatmap_cache_total",
                                 "Seat map reads by how the cache served them.",
                                 "outcome=\"stale_while_loading\"")),
      applied_(metrics->GetCounter("boxoffice_seatmap_changes_applied_total",
                                   "This instance's seat changes applied to cached maps.")),
      evictions_(metrics->GetCounter(
          "boxoffice_seatmap_cache_evictions_total",
          "Showtimes dropped from the seat map cache, least recently used first, to keep it "
          "within its bytes.")),
      max_bytes_(max_bytes),
      sizes_(std::make_shared<Sizes>()) {
  metrics->AddGauge("boxoffice_seatmap_cache_bytes",
                    "Bytes of seat maps (bodies, tags, parsed maps) the cache keeps.",
                    [sizes = sizes_] { return static_cast<double>(sizes->bytes.load()); });
  metrics->AddGauge("boxoffice_seatmap_cache_entries", "Showtimes the seat map cache keeps.",
                    [sizes = sizes_] { return static_cast<double>(sizes->entries.load()); });
}

SeatMapCache::~SeatMapCache() {
  sizes_->bytes = 0;
  sizes_->entries = 0;
}

size_t SeatMapCache::bytes() {
  MutexLock lock(mu_);
  return bytes_;
}

size_t SeatMapCache::entries() {
  MutexLock lock(mu_);
  return slots_.size();
}

std::shared_ptr<SeatMapCache::Slot> SeatMapCache::SlotFor(int64_t showtime_id) {
  std::vector<std::shared_ptr<Slot>> evicted;  // destroyed after mu_ is released
  MutexLock lock(mu_);
  auto it = slots_.find(showtime_id);
  if (it != slots_.end()) {
    Touch(it->second);
    return it->second.slot;
  }
  // Held here before Evict, so the new slot is in use and stays.
  auto slot = std::make_shared<Slot>(showtime_id);
  lru_.push_front(showtime_id);
  const bool added = slots_.emplace(showtime_id, Node{slot, lru_.begin(), 0}).second;
  BOX_ASSERT(added);  // not found above, under the same lock
  bytes_ += SlotBytes();
  Evict(&evicted);
  PublishLocked();
  return slot;
}

std::shared_ptr<SeatMapCache::Slot> SeatMapCache::Existing(int64_t showtime_id, Recency recency) {
  MutexLock lock(mu_);
  auto it = slots_.find(showtime_id);
  if (it == slots_.end()) return nullptr;
  if (recency == Recency::kUse) Touch(it->second);
  return it->second.slot;
}

void SeatMapCache::Touch(Node& node) { lru_.splice(lru_.begin(), lru_, node.lru); }

void SeatMapCache::Account(const Slot& slot) {
  const size_t entry_bytes = slot.entry ? slot.entry->bytes : 0;
  std::vector<std::shared_ptr<Slot>> evicted;  // destroyed after mu_ is released
  MutexLock lock(mu_);                         // Lock order: slot.mu (the caller's), then mu_.
  auto it = slots_.find(slot.showtime_id);
  // Its caller holds it, so it was not evicted.
  BOX_ASSERT(it != slots_.end() && it->second.slot.get() == &slot);
  BOX_ASSERT(bytes_ >= it->second.entry_bytes);
  bytes_ = bytes_ - it->second.entry_bytes + entry_bytes;
  it->second.entry_bytes = entry_bytes;
  Evict(&evicted);
  PublishLocked();
}

void SeatMapCache::Evict(std::vector<std::shared_ptr<Slot>>* evicted) {
  // Each showtime is looked at once at most. One in use (its slot has references besides
  // this map's: every reader, loader and waiter holds one while it uses the slot, and new
  // ones are only taken from the map under mu_) is being read or loaded now: it moves to
  // the hot end and goes later, once unused.
  for (size_t left = lru_.size(); bytes_ > max_bytes_ && left > 0; --left) {
    auto it = slots_.find(lru_.back());
    BOX_ASSERT(it != slots_.end());
    if (it->second.slot.use_count() > 1) {
      lru_.splice(lru_.begin(), lru_, std::prev(lru_.end()));
      continue;
    }
    const size_t freed = SlotBytes() + it->second.entry_bytes;
    BOX_ASSERT(bytes_ >= freed);
    bytes_ -= freed;
    evicted->push_back(std::move(it->second.slot));
    slots_.erase(it);
    lru_.pop_back();
    evictions_.Inc();
  }
  BOX_ASSERT(lru_.size() == slots_.size());  // one place in the order per showtime kept
}

void SeatMapCache::PublishLocked() {
  sizes_->bytes.store(bytes_, std::memory_order_relaxed);
  sizes_->entries.store(slots_.size(), std::memory_order_relaxed);
}

size_t SeatMapCache::SlotBytes() {
  // The slot and its control block, its node in slots_ (with its next pointer and a
  // bucket) and its node in lru_ (two pointers and the id). The load's transient lists
  // (waiters, changes during a load) are not counted.
  return kSharedBlockBytes + sizeof(Slot) + sizeof(std::pair<const int64_t, Node>) +
         2 * sizeof(void*) + 2 * sizeof(void*) + sizeof(int64_t);
}

size_t SeatMapCache::StringHeapBytes(const std::string& s) {
  static const size_t kInPlace = std::string().capacity();  // short strings stay inside
  return s.capacity() > kInPlace ? s.capacity() + 1 : 0;
}

size_t SeatMapCache::EntryBytes(const std::string& body, const std::string& etag,
                                const SeatMap& map) {
  // Three shared allocations (the entry with its tag, the body, the map) and what they
  // point to: the body's text, the tag's, the seats and their strings. The allocator's own
  // overhead (a few allocations per map) is not counted.
  // The coded bodies (Entry::In) are counted in advance, each at its bound, and each
  // coding's header lines and tag at theirs.
  size_t bytes = kSharedBlockBytes + sizeof(Entry) + StringHeapBytes(etag) + kSharedBlockBytes +
                 sizeof(std::string) + StringHeapBytes(body) + kSharedBlockBytes + sizeof(SeatMap) +
                 map.seats.capacity() * sizeof(SeatView) +
                 2 * (kSharedBlockBytes + sizeof(std::string) + body.size() / kMaxCodedShare) +
                 http::kEncodings * (2 * (kSharedBlockBytes + sizeof(std::string) + kFieldsBytes) +
                                     kFieldsBytes);
  for (const SeatView& seat : map.seats) {
    bytes +=
        StringHeapBytes(seat.code) + StringHeapBytes(seat.row) + StringHeapBytes(seat.category);
  }
  return bytes;
}

bool SeatMapCache::Fresh(const Slot& slot) const {
  if (!slot.entry || slot.stale) return false;
  const Millis age = std::chrono::duration_cast<Millis>(clock_->Now() - slot.entry->loaded_at);
  return age < max_age_ && !(slot.remote_stale && age >= kRemoteMinAge);
}

bool SeatMapCache::ServableWhileLoading(const Slot& slot) const {
  if (!slot.loading || !slot.entry || slot.stale) return false;
  return clock_->Now() - slot.entry->loaded_at < kStaleLimit * max_age_;
}

std::shared_ptr<const SeatMapCache::Entry> SeatMapCache::Servable(const Slot& slot) {
  if (Fresh(slot)) {
    hits_.Inc();
    return slot.entry;
  }
  if (ServableWhileLoading(slot)) {
    stale_.Inc();
    return slot.entry;
  }
  return nullptr;
}

std::shared_ptr<const SeatMapCache::Entry> SeatMapCache::Peek(int64_t showtime_id) {
  std::shared_ptr<Slot> slot = Existing(showtime_id, Recency::kUse);
  if (!slot) return nullptr;
  std::lock_guard lock(slot->mu);
  return Servable(*slot);
}

std::shared_ptr<const SeatMapCache::Entry> SeatMapCache::Latest(int64_t showtime_id) {
  std::shared_ptr<Slot> slot = Existing(showtime_id, Recency::kUse);
  if (!slot) return nullptr;
  std::lock_guard lock(slot->mu);
  return slot->entry;
}

bool SeatMapCache::ShowsAvailable(int64_t showtime_id, const std::vector<std::string>& seats) {
  auto entry = Peek(showtime_id);
  if (!entry || !entry->map || seats.empty()) return false;
  size_t available = 0;
  for (const SeatView& seat : entry->map->seats) {
    if (seat.status == SeatStatus::kAvailable &&
        std::find(seats.begin(), seats.end(), seat.code) != seats.end()) {
      ++available;
    }
  }
  return available == seats.size();
}

Result<std::shared_ptr<const SeatMapCache::Entry>> SeatMapCache::Get(int64_t showtime_id) {
  std::shared_ptr<Slot> slot = SlotFor(showtime_id);
  std::unique_lock lock(slot->mu);
  if (auto entry = Servable(*slot)) return entry;
  if (slot->loading) {
    // Someone is loading it: share that load, whatever its outcome.
    // (Bounded: a load on a loop abandoned at shutdown must not hold a worker forever.)
    const uint64_t round = slot->round;
    if (!slot->loaded.wait_for(lock, kMaxLoadWait, [&] { return slot->round != round; })) {
      return Status(Code::kUnavailable, "the seat map is still loading, retry shortly");
    }
    waits_.Inc();
    return Shared(*slot);
  }
  const Load load = BeginLoad(*slot);
  lock.unlock();
  return FinishLoad(*slot, lock, load, loader_(showtime_id));
}

// A load begun on a loop ends, whatever happens to its coroutine: if it is destroyed before
// the load's result came (its loop stopped) or the load threw, the slot is not left loading
// for good; the readers that waited get kUnavailable.
struct SeatMapCache::LoadGuard {
  SeatMapCache* cache;
  Slot* slot;
  std::unique_lock<std::mutex>* lock;  // slot->mu, not held while the load is awaited
  Load load;
  bool finished = false;
  ~LoadGuard() {
    if (finished) return;
    if (lock->owns_lock()) lock->unlock();
    cache->FinishLoad(*slot, *lock, load,
                      Status(Code::kUnavailable, "the seat map's load was abandoned"));
  }
};

io::asio::awaitable<Result<std::shared_ptr<const SeatMapCache::Entry>>> SeatMapCache::GetAsync(
    int64_t showtime_id) {
  io::Loop* loop = io::Loop::Current();
  if (!loop) co_return Get(showtime_id);
  auto executor = co_await io::asio::this_coro::executor;
  std::shared_ptr<Slot> slot = SlotFor(showtime_id);
  std::unique_lock lock(slot->mu);
  if (auto entry = Servable(*slot)) co_return entry;
  if (slot->loading) {
    // Someone is loading it (maybe on another loop, or a blocking reader): share that load.
    // Registered and woken under slot.mu, and nothing runs on this loop between the unlock
    // and the wait's start: the wake-up, posted to this loop, cannot come before it.
    const uint64_t round = slot->round;
    auto timer = std::make_shared<io::asio::steady_timer>(executor, kMaxLoadWait);
    slot->waiters.push_back(Slot::Waiter{loop->handle(), timer});
    lock.unlock();
    boost::system::error_code ec;
    co_await timer->async_wait(io::asio::redirect_error(io::asio::use_awaitable, ec));
    lock.lock();
    if (slot->round == round) {
      co_return Status(Code::kUnavailable, "the seat map is still loading, retry shortly");
    }
    waits_.Inc();
    co_return Shared(*slot);
  }
  LoadGuard guard{this, slot.get(), &lock, BeginLoad(*slot)};
  lock.unlock();
  Result<SeatMap> map = Status(Code::kInternal, "not loaded");
  if (async_loader_) {
    map = co_await async_loader_(showtime_id);
  } else {
    // (Named first: g++ 12 destroys a lambda temporary in a co_await expression twice.)
    auto work = [this, showtime_id] { return loader_(showtime_id); };
    map = co_await io::Offload(std::move(work));
  }
  guard.finished = true;
  co_return FinishLoad(*slot, lock, guard.load, std::move(map));
}

SeatMapCache::Load SeatMapCache::BeginLoad(Slot& slot) {
  BOX_ASSERT(!slot.loading);
  slot.loading = true;
  slot.remote_stale = false;
  return Load{slot.generation};
}

Result<std::shared_ptr<const SeatMapCache::Entry>> SeatMapCache::Shared(const Slot& slot) {
  if (!slot.last_error.ok()) return slot.last_error;
  return slot.entry;
}

Result<std::shared_ptr<const SeatMapCache::Entry>> SeatMapCache::FinishLoad(
    Slot& slot, std::unique_lock<std::mutex>& lock, const Load& load, Result<SeatMap> map) {
  BOX_ASSERT(!lock.owns_lock());
  std::shared_ptr<const Entry> entry;
  const Instant loaded_at = clock_->Now();
  if (map.ok()) entry = MakeEntry(std::move(map.value()), loaded_at);  // rendered unlocked
  lock.lock();
  BOX_ASSERT(slot.loading);  // this load's, begun by BeginLoad and ended only here
  // This instance's holds and bookings that came during the load may be missing from its
  // snapshot: they are applied to it, a few rounds at most (more may come meanwhile);
  // past that, or if too many came, the next reader loads again.
  bool complete = !slot.changes_overflowed;
  for (int round = 0; entry && complete && !slot.changes_during_load.empty(); ++round) {
    if (round == kApplyAttempts) {
      complete = false;
      break;
    }
    const auto changes = std::move(slot.changes_during_load);
    slot.changes_during_load.clear();
    lock.unlock();
    SeatMap patched = *entry->map;
    for (const auto& [seats, status] : changes) Patch(patched, seats, status);
    entry = MakeEntry(std::move(patched), loaded_at);
    lock.lock();
  }
  slot.changes_during_load.clear();
  slot.changes_overflowed = false;
  slot.loading = false;
  ++slot.round;
  loads_.Inc();
  if (map.ok()) {
    slot.entry = entry;
    Account(slot);
    slot.last_error = Status::Ok();
    // Invalidated while loading: what was loaded may predate the change.
    slot.stale = slot.generation != load.generation || !complete;
  } else {
    slot.last_error = map.status();
  }
  // The readers that waited. Lock order: slot.mu, then a loop handle's (a leaf: it only
  // queues the cancel on that loop).
  slot.loaded.notify_all();
  for (const Slot::Waiter& w : slot.waiters) {
    w.loop->Post([timer = w.timer] {
      if (auto waiting = timer.lock()) waiting->cancel();
    });
  }
  slot.waiters.clear();
  if (!map.ok()) return map.status();
  return entry;
}

std::shared_ptr<const SeatMapCache::Entry> SeatMapCache::MakeEntry(SeatMap map, Instant loaded_at) {
  auto shared = std::make_shared<const SeatMap>(std::move(map));
  auto body = std::make_shared<const std::string>(SeatMapJson(*shared));
  std::string etag = SeatMapEtag(*shared);
  const size_t bytes = EntryBytes(*body, etag, *shared);
  auto entry = std::make_shared<Entry>();  // its coded bodies' once flags neither copy nor move
  entry->body = std::move(body);
  entry->etag = std::move(etag);
  entry->loaded_at = loaded_at;
  entry->map = std::move(shared);
  entry->bytes = bytes;
  return entry;
}

const SeatMapCache::Entry::Representation* SeatMapCache::Entry::In(http::Encoding e) const {
  Form& form = forms_[static_cast<size_t>(e)];
  std::call_once(form.once, [&] {
    Representation r;
    if (e == http::Encoding::kIdentity) {
      r.body = body;
      r.tag = etag;
    } else {
      auto out = http::Compress(e, *body);
      // What a coding may keep is counted in advance (EntryBytes), so it keeps no more.
      if (!out || out->size() > body->size() / kMaxCodedShare) return;
      out->shrink_to_fit();
      r.body = std::make_shared<const std::string>(std::move(*out));
      BOX_ASSERT(etag.size() >= 2 && etag.back() == '"');  // SeatMapEtag's quoted hex
      r.tag = etag.substr(0, etag.size() - 1) + (e == http::Encoding::kGzip ? "-gz\"" : "-br\"");
    }
    // API.md's seat map: a second in shared caches, one entry per coding.
    const std::string fields =
        "ETag: " + r.tag + "\r\nCache-Control: public, max-age=1\r\nVary: Accept-Encoding\r\n";
    BOX_ASSERT(fields.size() <= kFieldsBytes);  // as counted (EntryBytes)
    r.fields_304 = std::make_shared<const std::string>(fields);
    r.fields_200 = e == http::Encoding::kIdentity
                       ? r.fields_304
                       : std::make_shared<const std::string>(
                             fields + "Content-Encoding: " + http::EncodingName(e) + "\r\n");
    form.made = std::move(r);
  });
  return form.made ? &*form.made : nullptr;
}

void SeatMapCache::Hear(const SeatChange& change) {
  if (change.remote) {
    InvalidateRemote(change.showtime_id);
  } else if (change.type == SeatChange::Type::kReleased) {
    Invalidate(change.showtime_id);
  } else {
    Apply(change.showtime_id, change.seats,
          change.type == SeatChange::Type::kHeld ? SeatStatus::kHeld : SeatStatus::kBooked);
  }
}

void SeatMapCache::Apply(int64_t showtime_id, const std::vector<std::string>& seats,
                         SeatStatus status) {
  std::shared_ptr<Slot> slot = Existing(showtime_id, Recency::kUse);
  if (!slot) return;
  std::unique_lock lock(slot->mu);
  // A load in flight may have taken its snapshot before this change: the load applies it
  // to its result before installing it.
  bool recorded = false;
  if (slot->loading) {
    if (slot->changes_during_load.size() < kMaxChangesDuringLoad) {
      slot->changes_during_load.emplace_back(seats, status);
      BOX_ASSERT(slot->changes_during_load.size() <= kMaxChangesDuringLoad);
      recorded = true;
    } else {
      slot->changes_overflowed = true;
    }
  }
  // Patched and serialised outside the lock, so readers (on I/O threads) never wait for
  // it; installed only if no other change came meanwhile (else patched again from the
  // newer entry, a few times, and past that the next reader reloads).
  for (int attempt = 0; attempt < kApplyAttempts; ++attempt) {
    const std::shared_ptr<const Entry> base = slot->entry;
    if (!base) {
      if (recorded) return;  // nothing cached yet; the load in flight takes the change
      break;
    }
    lock.unlock();
    SeatMap patched = *base->map;
    Patch(patched, seats, status);
    auto entry = MakeEntry(std::move(patched), base->loaded_at);
    lock.lock();
    if (slot->entry == base) {
      slot->entry = std::move(entry);
      Account(*slot);
      applied_.Inc();
      return;
    }
  }
  ++slot->generation;
  slot->stale = true;
}

void SeatMapCache::Patch(SeatMap& map, const std::vector<std::string>& seats, SeatStatus status) {
  if (map.cancelled) return;  // no seat of a cancelled showtime reads AVAILABLE again
  for (auto& seat : map.seats) {
    if (std::find(seats.begin(), seats.end(), seat.code) != seats.end()) seat.status = status;
  }
}

void SeatMapCache::Invalidate(int64_t showtime_id) {
  std::shared_ptr<Slot> slot = Existing(showtime_id, Recency::kKeep);
  if (!slot) return;
  std::lock_guard lock(slot->mu);
  ++slot->generation;
  slot->stale = true;
}

void SeatMapCache::InvalidateRemote(int64_t showtime_id) {
  std::shared_ptr<Slot> slot = Existing(showtime_id, Recency::kKeep);
  if (!slot) return;
  std::lock_guard lock(slot->mu);
  slot->remote_stale = true;
}

io::asio::awaitable<Result<std::shared_ptr<const SeatMap>>> SeatMapCacheView::Load(
    int64_t showtime_id) {
  auto entry = co_await cache_->GetAsync(showtime_id);
  if (!entry.ok()) co_return entry.status();
  co_return std::shared_ptr<const SeatMap>(entry.value()->map);
}

std::shared_ptr<const SeatMap> SeatMapCacheView::Recent(int64_t showtime_id) {
  auto entry = cache_->Latest(showtime_id);
  if (!entry || clock_->Now() - entry->loaded_at > recent_) return nullptr;
  return entry->map;
}

}  // namespace boxoffice::api
