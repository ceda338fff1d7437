// SeatEvents: the seat-change fan-out (SeatsHeld, SeatsReleased, SeatsBooked) that keeps
// seat-map caches fresh and feeds the live stream of API.md's /seats/stream.
//
// A change is published after the store committed it. Listeners on this instance hear it
// before Publish returns (read your own writes). RedisSeatEvents also sends it on a Redis
// pub/sub channel, from a publisher thread behind a bounded queue so a hold never waits on
// it, and a subscriber thread passes other instances' changes to the same listeners.
//
// These are accelerators, never the truth: a change that is lost (queue full, Redis down,
// a reconnect) costs at most the seat-map cache's max age (1 s) of staleness, since every
// cache entry is reloaded that often anyway.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/metrics.h"
#include "core/sync.h"
#include "gate/redis_client.h"

namespace boxoffice {

struct SeatChange {
  enum class Type { kHeld, kReleased, kBooked };
  Type type = Type::kHeld;
  int64_t showtime_id = 0;
  std::vector<std::string> seats;
  Instant at;
  bool remote = false;  // heard from another instance (not part of the wire form)
};

// "SeatsHeld", "SeatsReleased", "SeatsBooked".
const char* SeatChangeName(SeatChange::Type type);
// The event of API.md's stream: {"type", "showtimeId", "seats", "at"}.
std::string SeatChangeJson(const SeatChange& change);
// The compact wire form between instances, and back (nullopt for anything malformed).
std::string EncodeSeatChange(std::string_view origin, const SeatChange& change);
std::optional<std::pair<std::string, SeatChange>> DecodeSeatChange(std::string_view text);

class SeatEvents {
 public:
  using Listener = std::function<void(const SeatChange&)>;
  virtual ~SeatEvents() = default;

  // Tells this instance's listeners at once, and other instances' soon (best effort).
  virtual void Publish(const SeatChange& change) { Deliver(change); }

  // Listeners run on the publishing thread (or the subscriber thread) and must be quick.
  uint64_t Subscribe(Listener listener);
  void Unsubscribe(uint64_t id);

 protected:
  void Deliver(const SeatChange& change);

 private:
  Mutex mu_;
  uint64_t next_id_ BOX_GUARDED_BY(mu_) = 1;
  std::map<uint64_t, Listener> listeners_ BOX_GUARDED_BY(mu_);
};

// The embedded profile: one instance, so local delivery is all there is.
using InProcessSeatEvents = SeatEvents;

class RedisSeatEvents final : public SeatEvents {
 public:
  static constexpr size_t kMaxQueued = 10'000;  // changes waiting to be sent; then dropped
  static constexpr std::string_view kChannel = "boxoffice:seat-changes";

  // Starts the publisher and subscriber threads.
  RedisSeatEvents(RedisOptions options, Metrics* metrics);
  ~RedisSeatEvents() override;  // stops and joins them

  void Publish(const SeatChange& change) override;

 private:
  void PublishLoop();
  void SubscribeLoop();

  const std::string origin_;  // this instance: its own changes coming back are ignored
  RedisOptions options_;
  RedisClient publisher_;
  Counter& dropped_;
  Counter& received_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::string> queue_;
  bool stop_ = false;
  int subscriber_fd_ = -1;  // shut down by the destructor to end a blocking read
  std::atomic<bool> subscribed_{false};
  std::thread publish_thread_;
  std::thread subscribe_thread_;
};

}  // namespace boxoffice
