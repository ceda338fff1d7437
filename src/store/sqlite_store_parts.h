// SqliteStore's private parts that its files share: its connection pools, and the hold
// queue, the thread that feeds the one writer with holds, a batch per write transaction
// (group commit; see SqliteStore::HoldSeatsAsync).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "core/pool.h"
#include "core/status.h"
#include "io/loop.h"
#include "store/sqlite_connection.h"
#include "store/sqlite_store.h"

namespace boxoffice {

struct SqliteStore::Pools {
  Pools(size_t readers_size, Millis timeout, Pool<SqliteConnection>::Factory open)
      : writer(1, timeout, open), readers(readers_size, timeout, open) {}
  Pool<SqliteConnection> writer;  // exactly one: SQLite has one writer at a time
  Pool<SqliteConnection> readers;
};

// The thread that feeds the writer with holds (see HoldSeatsAsync).
class SqliteStore::HoldQueue {
 public:
  // A request's state, shared by its coroutine (on a loop) and the queue's thread. Whoever
  // moves it out of kWaiting first decides: the thread takes it (and will answer), or the
  // coroutine abandons it after its wait's bound (and the thread never runs it: no hold
  // is made for a customer who was told 503).
  struct Pending {
    enum : int { kWaiting, kTaken, kAbandoned };
    std::atomic<int> state{kWaiting};
    // The waiting coroutine's completion (in its frame), touched on its loop only: the
    // answer is posted there. Null once the coroutine is gone. Nothing here belongs to a
    // loop, so the queue's thread may drop the last reference after the loop ended.
    io::Completion<Result<Hold>>* waiter = nullptr;
  };

  explicit HoldQueue(SqliteStore* store) : store_(store), thread_([this] { Run(); }) {}
  ~HoldQueue() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }

  bool Push(HoldRequest request, std::shared_ptr<Pending> pending,
            std::shared_ptr<io::LoopHandle> loop) {
    {
      std::lock_guard lock(mu_);
      if (stopping_ || queue_.size() >= kMaxHoldsWaiting) return false;
      queue_.push_back(Entry{std::move(request), std::move(pending), std::move(loop)});
      BOX_ASSERT(queue_.size() <= kMaxHoldsWaiting);
    }
    wake_.notify_one();
    return true;
  }

 private:
  struct Entry {
    HoldRequest request;
    std::shared_ptr<Pending> pending;
    std::shared_ptr<io::LoopHandle> loop;
  };

  void Run() {
    for (;;) {
      std::vector<Entry> batch;
      {
        std::unique_lock lock(mu_);
        wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, nothing left
        while (!queue_.empty() && batch.size() < kMaxHoldBatch) {
          Entry entry = std::move(queue_.front());
          queue_.pop_front();
          int waiting = Pending::kWaiting;
          if (entry.pending->state.compare_exchange_strong(waiting, Pending::kTaken)) {
            batch.push_back(std::move(entry));
          }
        }
      }
      if (batch.empty()) continue;
      BOX_ASSERT(batch.size() <= kMaxHoldBatch);  // one write transaction's worth at most
      std::vector<HoldRequest> requests;
      requests.reserve(batch.size());
      for (const auto& e : batch) requests.push_back(e.request);
      std::vector<Result<Hold>> results;
      try {
        results = store_->HoldBatch(requests);
      } catch (const std::exception& e) {
        // Every request taken is answered whatever happens, and the queue carries on.
        results.assign(
            batch.size(),
            Result<Hold>(Status(Code::kUnavailable, std::string("hold batch failed: ") + e.what())
                             .MaybeApplied()));
      }
      if (results.size() != batch.size()) {  // (committed: answered, never aborted)
        results.assign(batch.size(),
                       Result<Hold>(BOX_BROKEN_AFTER_COMMIT(results.size() == batch.size())));
      }
      for (size_t i = 0; i < batch.size(); ++i) {
        // A loop that has ended drops the answer (nobody waits for it any more).
        batch[i].loop->Post([pending = batch[i].pending, r = std::move(results[i])]() mutable {
          if (pending->waiter) pending->waiter->Set(std::move(r));
        });
      }
    }
  }

  SqliteStore* store_;
  std::mutex mu_;  // guards queue_ and stopping_; a leaf: nothing is called under it
  std::condition_variable wake_;
  std::deque<Entry> queue_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts once the rest exists
};

}  // namespace boxoffice
