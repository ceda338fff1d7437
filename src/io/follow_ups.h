// FollowUps: repairs owed after a write whose answer was lost, retried until they take.
//
// When the answer to a write is lost (its connection broke, or the database answered too
// late), the write may have committed after all. Whoever sent it knows how to repair that
// idempotently, by the ids it chose itself: release a hold by its id (the customer was told
// 503, so the seats and the 8-seat limit must not stay taken), end the lease of an
// idempotency key's claim (so the customer's retry carries on at once, not after the
// lease), undo a checkout. Such a repair is handed here and tried on this object's own
// thread at once, then again with backoff (kFirstRetry, doubling, at most kMaxRetry) until
// it reports kDone or its deadline passes: a hold's expiry or a lease's end, after which
// what it would repair has ended by itself. A repair that cannot tell "not there yet"
// from "never there" (a write still queued at the database) keeps trying to its deadline.
//
// Limits: at most max_pending repairs wait; past that a new one is dropped and counted
// (what it repairs then ends at its deadline, as it would have without this). Repairs run
// one at a time and may block (they are the blocking store calls): never on an I/O loop.
// The thread starts with the first repair and ends with Stop or the destructor.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/metrics.h"

namespace boxoffice::io {

class FollowUps {
 public:
  enum class Outcome { kDone, kRetry };
  using Repair = std::function<Outcome()>;
  using Clock = std::chrono::steady_clock;
  static constexpr size_t kMaxPending = 10'000;
  static constexpr std::chrono::milliseconds kFirstRetry{250};
  static constexpr std::chrono::milliseconds kMaxRetry{5'000};  // "released within seconds"

  // name: the metrics' label of this owner ("holds", "checkout").
  FollowUps(Metrics* metrics, std::string name, size_t max_pending = kMaxPending);
  ~FollowUps();
  FollowUps(const FollowUps&) = delete;
  FollowUps& operator=(const FollowUps&) = delete;

  // Queues a repair, tried at once; false (and counted) when max_pending wait already.
  bool Add(std::string what, Repair repair, Clock::time_point deadline);
  // Ends the thread; repairs still waiting are dropped (each ends at its deadline anyway).
  void Stop();
  size_t pending();
  // Waits until no repair is waiting or running (tests).
  void Drain();

 private:
  struct Entry {
    std::string what;
    Repair repair;
    Clock::time_point deadline;
    Clock::time_point next_try;
    std::chrono::milliseconds backoff;
  };
  void Run();

  const size_t max_pending_;
  Counter& done_;
  Counter& expired_;
  Counter& dropped_;
  Counter& attempts_;
  // Read by the pending gauge, which the registry may call after this object is gone.
  std::shared_ptr<std::atomic<size_t>> pending_gauge_ = std::make_shared<std::atomic<size_t>>(0);
  std::mutex mu_;  // a leaf: repairs run outside it
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::vector<Entry> entries_;  // guarded by mu_
  bool running_ = false;        // a repair is being tried (outside mu_)
  bool stop_ = false;
  std::thread thread_;  // started by the first Add
};

}  // namespace boxoffice::io
