// Loop: the I/O thread a request's coroutine runs on, and what belongs to that thread.
//
// Design note. boxoffice answers requests on a few I/O threads, each running one
// io_context (http::Server). No thread waits on the network on the request path: Redis and
// PostgreSQL are reached through connections that belong to one loop each (one pipelined
// connection per loop and per client, kept in a PerLoop slot), awaited by the request's
// coroutine. Nothing is shared between loops on that path, so nothing is locked.
//
// Work that must block (SQLite, a store method with no asynchronous form yet) goes to the
// loop's blocking pool through Offload, which is bounded: past max_pending jobs waiting for
// a thread, the answer is kUnavailable at once (a 503), never an unbounded queue.
//
// Off the loops (jobs, tests, command-line tools) Loop::Current() is null and the same code
// runs the blocking way: Offload calls inline, clients use their blocking connections, and
// RunSync drives a coroutine to its end on the calling thread. One hold logic serves both.
//
// Lifetimes: a loop runs the hooks its thread registered with AtExit when its io_context
// stops, on that thread, while the io_context still exists; that is where per-loop
// connections are closed. A component holding PerLoop slots must outlive the loops that
// used it (in `serve`, it is built before the server and destroyed after it stops).
#pragma once

// clang-format off
// Boost 1.74's awaitable.hpp uses std::exchange without including <utility>.
#include <utility>
#include <boost/asio.hpp>
// clang-format on

#include <array>
#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>
#include <vector>

#include "core/metrics.h"
#include "core/status.h"

namespace boxoffice::io {

namespace asio = boost::asio;

// Threads for work that blocks, behind a bounded queue.
class BlockingPool {
 public:
  BlockingPool(size_t threads, size_t max_pending, Counter* overloaded);
  ~BlockingPool();  // joins the threads

  // Counts a job in, or false when max_pending jobs already wait (the caller answers 503).
  bool TryEnter();
  // Counts a job in whatever waits: for the few jobs that finish what a request started.
  void Enter() { pending_.fetch_add(1, std::memory_order_relaxed); }
  // The job left the queue (it started on a thread).
  void Leave() {
    const size_t before = pending_.fetch_sub(1, std::memory_order_relaxed);
    BOX_ASSERT(before > 0);  // each Leave gives back an Enter's or a TryEnter's place
  }
  asio::thread_pool::executor_type executor() { return pool_.get_executor(); }
  void Join() { pool_.join(); }

 private:
  asio::thread_pool pool_;
  const size_t max_pending_;
  std::atomic<size_t> pending_{0};
  Counter* overloaded_;
};

// Posts to a loop from another thread, safely even after the loop has ended: then the work
// is dropped. Loop::Run closes it when the loop ends, while its io_context still exists.
class LoopHandle {
 public:
  explicit LoopHandle(asio::io_context* context) : context_(context) {}
  // False (and f dropped) once the loop has ended.
  template <class F>
  bool Post(F f) {
    std::lock_guard lock(mu_);  // a leaf: post only queues
    if (!context_) return false;
    asio::post(*context_, std::move(f));
    return true;
  }
  void Close() {
    std::lock_guard lock(mu_);
    context_ = nullptr;
  }

 private:
  std::mutex mu_;
  asio::io_context* context_;  // guarded by mu_
};

class Loop {
 public:
  static constexpr size_t kMaxLoops = 64;  // PerLoop's slot count; serve has one per core

  // blocking: the pool Offload uses from this loop, or null (Offload then runs inline).
  Loop(size_t index, asio::io_context* context, BlockingPool* blocking);

  // Runs the io_context on the calling thread as this loop until it stops, then the exit
  // hooks (last registered first).
  void Run();
  // The loop the calling thread runs, or null.
  static Loop* Current();

  size_t index() const { return index_; }
  asio::io_context& context() { return *context_; }
  BlockingPool* blocking() const { return blocking_; }
  // For other threads that answer this loop's coroutines.
  const std::shared_ptr<LoopHandle>& handle() const { return handle_; }
  // Called on this loop's thread only.
  void AtExit(std::function<void()> hook);

 private:
  size_t index_;
  asio::io_context* context_;
  BlockingPool* blocking_;
  std::shared_ptr<LoopHandle> handle_;
  std::vector<std::function<void()>> exit_hooks_;  // touched by this loop's thread only
};

// One T per loop, made on that loop's thread at first use and destroyed when it ends.
// Slot i is only ever touched by loop i's thread: no lock.
template <class T>
class PerLoop {
 public:
  PerLoop() = default;
  PerLoop(const PerLoop&) = delete;
  PerLoop& operator=(const PerLoop&) = delete;
  ~PerLoop() {
    for (const auto& slot : slots_) BOX_ASSERT(slot == nullptr);  // loops ended first
  }

  // The current loop's T (made by make() if there is none yet); null off the loops.
  template <class Make>
  T* Get(Make make) {
    Loop* loop = Loop::Current();
    if (!loop) return nullptr;
    BOX_ASSERT(loop->index() < Loop::kMaxLoops);
    std::unique_ptr<T>& slot = slots_[loop->index()];
    if (!slot) {
      slot = make(loop->context());
      loop->AtExit([&slot] { slot.reset(); });
    }
    return slot.get();
  }

 private:
  std::array<std::unique_ptr<T>, Loop::kMaxLoops> slots_{};
};

namespace detail {

// g++ 12 destroys some temporaries written inside a co_await expression twice: a lambda
// with captures (`co_await Offload([x = std::move(x)] {...})`), a braced list, a member of
// a temporary (`co_await Wait(Options{}.timeout)`). Name such values before the co_await. Coroutines here
// are plain functions taking their state by value.
template <class R, class F>
asio::awaitable<std::optional<R>> RunInPool(BlockingPool* pool, F f) {
  pool->Leave();
  co_return std::optional<R>(f());
}

template <class T>
asio::awaitable<void> Store(asio::awaitable<T> work, std::optional<T>* out) {
  out->emplace(co_await std::move(work));
}

}  // namespace detail

// Runs f() on the current loop's blocking pool and resumes on the loop; inline off the
// loops. f returns a Status or a Result; a full queue makes it kUnavailable, unless
// may_refuse is false (for work that finishes what a request already started, which must
// not be left half-done).
template <class F>
auto Offload(F f, bool may_refuse = true) -> asio::awaitable<std::invoke_result_t<F&>> {
  using R = std::invoke_result_t<F&>;
  Loop* loop = Loop::Current();
  if (!loop || !loop->blocking()) co_return f();
  BlockingPool* pool = loop->blocking();
  if (!may_refuse) {
    pool->Enter();
  } else if (!pool->TryEnter()) {
    co_return R(Status(Code::kUnavailable, "server busy, retry shortly"));
  }
  // (co_spawn wants a default-constructible result: hence the optional.)
  auto executor = pool->executor();
  auto out = co_await asio::co_spawn(executor, detail::RunInPool<R>(pool, std::move(f)),
                                     asio::use_awaitable);
  co_return std::move(*out);
}

// Runs f() on the current loop's blocking pool without waiting for it: for work that
// follows up what a request already did and need not delay its answer. Counted among the
// pool's pending jobs until it starts (so requests that check for room see it), never
// refused; inline off the loops. An exception f throws is logged and dropped.
void LogDetachedFailure(const char* what);
template <class F>
void OffloadDetached(F f) {
  Loop* loop = Loop::Current();
  if (!loop || !loop->blocking()) {
    f();
    return;
  }
  BlockingPool* pool = loop->blocking();
  pool->Enter();
  asio::post(pool->executor(), [pool, f = std::move(f)]() mutable {
    pool->Leave();
    try {
      f();
    } catch (const std::exception& e) {
      LogDetachedFailure(e.what());
    }
  });
}

// A place in the current loop's blocking pool, taken when a request arrives and kept until
// its job is handed to Offload: work the request does on the loop in between (a statement
// that must then be followed up on the pool) cannot carry the pool past its bound. Off
// the loops, or without a pool, there is always a place.
class PoolPlace {
 public:
  PoolPlace() {
    Loop* loop = Loop::Current();
    pool_ = loop ? loop->blocking() : nullptr;
    taken_ = pool_ && pool_->TryEnter();
  }
  ~PoolPlace() { Give(); }
  PoolPlace(const PoolPlace&) = delete;
  PoolPlace& operator=(const PoolPlace&) = delete;
  // False when the pool was full (the caller answers 503).
  bool ok() const { return !pool_ || taken_; }
  // Gives the place back, just before Offload(…, /*may_refuse=*/false) takes it again.
  void Give() {
    if (taken_) pool_->Leave();
    taken_ = false;
  }

 private:
  BlockingPool* pool_ = nullptr;
  bool taken_ = false;
};

// Drives a coroutine to its end on the calling thread, which must not be a loop (it would
// stop that loop while it waits). Exceptions propagate.
template <class T>
T RunSync(asio::awaitable<T> work) {
  BOX_ASSERT(Loop::Current() == nullptr);
  asio::io_context context(1);
  std::optional<T> out;
  std::exception_ptr error;
  asio::co_spawn(context, detail::Store(std::move(work), &out),
                 [&error](std::exception_ptr e) { error = e; });
  context.run();
  if (error) std::rethrow_exception(error);
  BOX_ASSERT(out.has_value());
  return std::move(*out);
}

// A result that arrives by callback on the loop, awaited by one coroutine with a deadline.
// Set and Wait run on the same thread: the callback sets the value and cancels the wait.
// Off the loops the value is set before anyone waits, and Wait returns it at once.
template <class T>
class Completion {
 public:
  void Set(T value) {
    if (value_) return;  // the first answer counts
    value_.emplace(std::move(value));
    if (timer_) timer_->cancel();
  }
  bool done() const { return value_.has_value(); }
  // The value, or nullopt when the deadline passed first.
  asio::awaitable<std::optional<T>> Wait(std::chrono::steady_clock::duration timeout) {
    if (!value_) {
      timer_.emplace(co_await asio::this_coro::executor);
      timer_->expires_after(timeout);
      boost::system::error_code ec;
      co_await timer_->async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    co_return std::move(value_);
  }

 private:
  std::optional<asio::steady_timer> timer_;
  std::optional<T> value_;
};

}  // namespace boxoffice::io
