// A bounded pool of connections, shared by the SQLite and PostgreSQL stores and the Redis gate.
//
// At most `size` connections exist; Acquire waits at most `acquire_timeout` for one and
// then reports kUnavailable, so a request never waits on the database without bound.
// Connections are opened lazily (outside the lock) and a lease that saw its connection
// break discards it, so the next Acquire opens a fresh one.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace boxoffice {

template <class Conn>
class Pool {
 public:
  using Factory = std::function<Result<std::unique_ptr<Conn>>()>;

  class Lease {
   public:
    Lease(Pool* pool, std::unique_ptr<Conn> conn) : pool_(pool), conn_(std::move(conn)) {}
    Lease(Lease&& other) noexcept
        : pool_(std::exchange(other.pool_, nullptr)), conn_(std::move(other.conn_)) {}
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (pool_) pool_->Return(std::move(conn_));
    }
    Conn& operator*() { return *conn_; }
    Conn* operator->() { return conn_.get(); }
    // The connection is broken: drop it instead of returning it.
    void Discard() { conn_.reset(); }

   private:
    Pool* pool_;
    std::unique_ptr<Conn> conn_;
  };

  Pool(size_t size, std::chrono::milliseconds acquire_timeout, Factory factory)
      : size_(size), acquire_timeout_(acquire_timeout), factory_(std::move(factory)) {}

  // Waiters are served first come, first served: under a hot showtime every request
  // queues here, and FIFO order keeps the tail latency close to the median.
  Result<Lease> Acquire() {
    std::unique_lock lock(mu_);
    bool may_open = false;
    if (waiters_.empty() && !idle_.empty()) {
      auto conn = std::move(idle_.back());
      idle_.pop_back();
      return Lease(this, std::move(conn));
    }
    if (waiters_.empty() && open_ < size_) {
      ++open_;
      may_open = true;
    } else {
      Waiter w;
      waiters_.push_back(&w);
      if (!w.cv.wait_for(lock, acquire_timeout_, [&] { return w.done; })) {
        waiters_.erase(std::find(waiters_.begin(), waiters_.end(), &w));
        return Status(Code::kUnavailable, "database pool exhausted");
      }
      if (w.conn) return Lease(this, std::move(w.conn));
      may_open = true;  // a broken connection's slot was handed to us
    }
    lock.unlock();
    BOX_ASSERT(may_open);
    auto made = factory_();
    if (!made.ok()) {
      Return(nullptr);  // give the slot back (to the next waiter, if any)
      return made.status();
    }
    return Lease(this, std::move(made.value()));
  }

  size_t size() const { return size_; }

 private:
  struct Waiter {
    std::condition_variable cv;
    std::unique_ptr<Conn> conn;  // handed over by Return; null: open a new one
    bool done = false;
  };

  // Takes a connection back (null: it broke, its slot is free) and hands it, or its slot,
  // to the oldest waiter.
  void Return(std::unique_ptr<Conn> conn) {
    std::lock_guard lock(mu_);
    if (!waiters_.empty()) {
      Waiter* w = waiters_.front();
      waiters_.pop_front();
      w->conn = std::move(conn);
      w->done = true;
      w->cv.notify_one();
      return;
    }
    if (conn) {
      idle_.push_back(std::move(conn));
    } else {
      --open_;
    }
  }

  const size_t size_;
  const std::chrono::milliseconds acquire_timeout_;
  Factory factory_;
  std::mutex mu_;
  std::deque<Waiter*> waiters_;
  std::vector<std::unique_ptr<Conn>> idle_;
  size_t open_ = 0;
};

}  // namespace boxoffice
