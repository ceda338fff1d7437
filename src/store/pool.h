// A bounded pool of connections, shared by the SQLite and PostgreSQL stores.
//
// At most `size` connections exist; Acquire waits at most `acquire_timeout` for one and
// then reports kUnavailable, so a request never waits on the database without bound.
// Connections are opened lazily (outside the lock) and a lease that saw its connection
// break discards it, so the next Acquire opens a fresh one.
#pragma once

#include <chrono>
#include <condition_variable>
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
    Lease(Lease&& other) noexcept : pool_(std::exchange(other.pool_, nullptr)), conn_(std::move(other.conn_)) {}
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

  Result<Lease> Acquire() {
    std::unique_lock lock(mu_);
    const bool got = cv_.wait_for(lock, acquire_timeout_,
                                  [&] { return !idle_.empty() || open_ < size_; });
    if (!got) return Status(Code::kUnavailable, "database pool exhausted");
    if (!idle_.empty()) {
      auto conn = std::move(idle_.back());
      idle_.pop_back();
      return Lease(this, std::move(conn));
    }
    ++open_;
    lock.unlock();
    auto made = factory_();
    if (!made.ok()) {
      lock.lock();
      --open_;
      cv_.notify_one();
      return made.status();
    }
    return Lease(this, std::move(made.value()));
  }

  size_t size() const { return size_; }

 private:
  void Return(std::unique_ptr<Conn> conn) {
    std::lock_guard lock(mu_);
    if (conn) {
      idle_.push_back(std::move(conn));
    } else {
      --open_;
    }
    cv_.notify_one();
  }

  const size_t size_;
  const std::chrono::milliseconds acquire_timeout_;
  Factory factory_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Conn>> idle_;
  size_t open_ = 0;
};

}  // namespace boxoffice
