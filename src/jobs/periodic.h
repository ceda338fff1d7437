// Periodic: the one background loop every job uses (sweeper, relay, refunds, reconciler).
//
// Start runs `round` on its own thread every `interval` until Stop. A round that returns
// true ran into its batch limit and is run again at once, so a backlog drains without
// waiting, while each single round stays bounded. Stop wakes the thread and joins it.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "core/clock.h"

namespace boxoffice {

class Periodic {
 public:
  ~Periodic() { Stop(); }

  void Start(Millis interval, std::function<bool()> round) {
    thread_ = std::thread([this, interval, round = std::move(round)] {
      std::unique_lock lock(mu_);
      while (!cv_.wait_for(lock, interval, [this] { return stop_; })) {
        bool again = true;
        while (again && !stop_) {
          lock.unlock();
          again = round();
          lock.lock();
        }
      }
    });
  }

  void Stop() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace boxoffice
