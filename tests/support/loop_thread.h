// An I/O loop (io/loop.h) on a thread of its own, as `serve` runs them: a test hands it
// coroutines and waits for their results from the test's thread.
#pragma once

#include <future>
#include <optional>
#include <thread>
#include <vector>

#include "io/loop.h"

namespace boxoffice::testing {

// With a blocking pool: the pool must be joined before the loop ends (declare a JoinPool
// after the LoopThreads). A job that finished still holds, for a moment after it resumed
// the loop's coroutine, the loop's work count; the loop's io_context must outlive it, as
// the server's contexts outlive its pool (http/server.cc).
class LoopThread {
 public:
  explicit LoopThread(io::BlockingPool* blocking = nullptr)
      : guard_(io::asio::make_work_guard(context_)), loop_(0, &context_, blocking) {
    thread_ = std::thread([this] { loop_.Run(); });
  }
  ~LoopThread() {
    guard_.reset();
    context_.stop();
    thread_.join();
  }
  LoopThread(const LoopThread&) = delete;
  LoopThread& operator=(const LoopThread&) = delete;

  // Runs work on the loop and waits for its result.
  template <class T>
  T Run(io::asio::awaitable<T> work) {
    std::promise<T> promise;
    auto future = promise.get_future();
    io::asio::co_spawn(context_, Deliver(std::move(work), &promise), io::asio::detached);
    return future.get();
  }

  // Starts every work on the loop at once (they arrive together, in order) and waits for
  // all their results, in the same order.
  template <class T>
  std::vector<T> RunAll(std::vector<io::asio::awaitable<T>> works) {
    std::vector<std::promise<T>> promises(works.size());
    std::vector<std::future<T>> futures;
    for (size_t i = 0; i < works.size(); ++i) futures.push_back(promises[i].get_future());
    // One post: the coroutines start in one go, before any of their statements return.
    io::asio::post(context_, [&] {
      for (size_t i = 0; i < works.size(); ++i) {
        io::asio::co_spawn(context_, Deliver(std::move(works[i]), &promises[i]),
                           io::asio::detached);
      }
    });
    std::vector<T> out;
    for (auto& f : futures) out.push_back(f.get());
    return out;
  }

  // Starts work on the loop without waiting for it: it ends on its own, or with the loop.
  template <class T>
  void Start(io::asio::awaitable<T> work) {
    io::asio::co_spawn(context_, Drop(std::move(work)), io::asio::detached);
  }

  io::asio::io_context& context() { return context_; }

 private:
  template <class T>
  static io::asio::awaitable<void> Drop(io::asio::awaitable<T> work) {
    co_await std::move(work);
  }

  template <class T>
  static io::asio::awaitable<void> Deliver(io::asio::awaitable<T> work, std::promise<T>* out) {
    out->set_value(co_await std::move(work));
  }

  io::asio::io_context context_{1};
  io::asio::executor_work_guard<io::asio::io_context::executor_type> guard_;
  io::Loop loop_;
  std::thread thread_;
};

// Joins a blocking pool when it goes: declared after the LoopThreads that use the pool, it
// goes before them.
class JoinPool {
 public:
  explicit JoinPool(io::BlockingPool* pool) : pool_(pool) {}
  ~JoinPool() { pool_->Join(); }
  JoinPool(const JoinPool&) = delete;
  JoinPool& operator=(const JoinPool&) = delete;

 private:
  io::BlockingPool* pool_;
};

}  // namespace boxoffice::testing
