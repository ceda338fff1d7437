// SqliteStore's private parts that its files share: its connection pools, and the hold
// queue, the thread that feeds the one writer with holds, a batch per write transaction
// (group commit; see SqliteStore::HoldSeatsAsync).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

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

// A thread that feeds the one writer with requests of one kind (today: holds): what waits,
// at most Traits::kMaxBatch, is decided by Traits::Run(store, requests) in one write
// transaction, one commit for the batch (group commit), and each answer is posted to the
// loop of its coroutine (Submit).
//
// Traits: using Request = …; using Answer = …; (an Answer is made from a Status)
//   static std::vector<Answer> Run(SqliteStore*, const std::vector<Request>&);
//   static constexpr size_t kMaxBatch, kMaxWaiting; static constexpr Millis kWaitBound;
//   static constexpr const char* kBusy;  // the 503's message
template <class Traits>
class SqliteStore::WriterQueue {
 public:
  using Request = typename Traits::Request;
  using Answer = typename Traits::Answer;

  explicit WriterQueue(SqliteStore* store) : store_(store), thread_([this] { Run(); }) {}
  ~WriterQueue() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }

  // On an I/O loop: the request's answer, or kUnavailable when more than kMaxWaiting wait
  // or it was not taken within kWaitBound (then it is never run: nothing is decided for a
  // caller who was told 503).
  io::asio::awaitable<Answer> Submit(Request request) {
    io::Loop* loop = io::Loop::Current();
    BOX_ASSERT(loop != nullptr);  // callers decide off the loops themselves
    auto pending = std::make_shared<Pending>();
    io::Completion<Answer> done;
    pending->waiter = &done;
    struct Forget {  // a request nobody waits for any more is never run, or its answer
      Pending* p;    // goes nowhere (the coroutine ended: its loop stopped)
      ~Forget() {
        int waiting = Pending::kWaiting;
        p->state.compare_exchange_strong(waiting, Pending::kAbandoned);
        p->waiter = nullptr;
      }
    } forget{pending.get()};
    if (!Push(std::move(request), pending, loop->handle())) {
      co_return Answer(Status(Code::kUnavailable, Traits::kBusy));
    }
    auto result = co_await done.Wait(Traits::kWaitBound);
    if (!result) {
      int waiting = Pending::kWaiting;
      if (pending->state.compare_exchange_strong(waiting, Pending::kAbandoned)) {
        co_return Answer(Status(Code::kUnavailable, Traits::kBusy));
      }
      // Taken: its transaction runs and answers (bounded by the writer's own timeouts).
      result = co_await done.Wait(Traits::kWaitBound);
      if (!result) {
        co_return Answer(
            Status(Code::kUnavailable, "the write transaction did not come back").MaybeApplied());
      }
    }
    co_return std::move(*result);
  }

 private:
  // A request's state, shared by its coroutine (on a loop) and the queue's thread. Whoever
  // moves it out of kWaiting first decides: the thread takes it (and will answer), or the
  // coroutine abandons it after its wait's bound (and the thread never runs it).
  struct Pending {
    enum : int { kWaiting, kTaken, kAbandoned };
    std::atomic<int> state{kWaiting};
    // The waiting coroutine's completion (in its frame), touched on its loop only: the
    // answer is posted there. Null once the coroutine is gone. Nothing here belongs to a
    // loop, so the queue's thread may drop the last reference after the loop ended.
    io::Completion<Answer>* waiter = nullptr;
  };
  struct Entry {
    Request request;
    std::shared_ptr<Pending> pending;
    std::shared_ptr<io::LoopHandle> loop;
  };

  bool Push(Request request, std::shared_ptr<Pending> pending,
            std::shared_ptr<io::LoopHandle> loop) {
    {
      std::lock_guard lock(mu_);
      if (stopping_ || queue_.size() >= Traits::kMaxWaiting) return false;
      queue_.push_back(Entry{std::move(request), std::move(pending), std::move(loop)});
      BOX_ASSERT(queue_.size() <= Traits::kMaxWaiting);
    }
    wake_.notify_one();
    return true;
  }

  void Run() {
    for (;;) {
      std::vector<Entry> batch;
      {
        std::unique_lock lock(mu_);
        wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, nothing left
        while (!queue_.empty() && batch.size() < Traits::kMaxBatch) {
          Entry entry = std::move(queue_.front());
          queue_.pop_front();
          int waiting = Pending::kWaiting;
          if (entry.pending->state.compare_exchange_strong(waiting, Pending::kTaken)) {
            batch.push_back(std::move(entry));
          }
        }
      }
      if (batch.empty()) continue;
      BOX_ASSERT(batch.size() <= Traits::kMaxBatch);  // one write transaction's worth at most
      std::vector<Request> requests;
      requests.reserve(batch.size());
      for (const auto& e : batch) requests.push_back(e.request);
      std::vector<Answer> results;
      try {
        results = Traits::Run(store_, requests);
      } catch (const std::exception& e) {
        // Every request taken is answered whatever happens, and the queue carries on.
        results.assign(batch.size(),
                       Answer(Status(Code::kUnavailable, std::string("write batch failed: ") +
                                                             e.what())
                                  .MaybeApplied()));
      }
      if (results.size() != batch.size()) {  // (committed: answered, never aborted)
        results.assign(batch.size(),
                       Answer(BOX_BROKEN_AFTER_COMMIT(results.size() == batch.size())));
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

// The hold queue's requests.
struct SqliteStore::HoldJobs {
  using Request = HoldRequest;
  using Answer = Result<Hold>;
  static std::vector<Answer> Run(SqliteStore* store, const std::vector<Request>& requests) {
    return store->HoldBatch(requests);
  }
  static constexpr size_t kMaxBatch = kMaxHoldBatch;
  static constexpr size_t kMaxWaiting = kMaxHoldsWaiting;
  static constexpr Millis kWaitBound = kHoldWaitBound;
  static constexpr const char* kBusy = "too many holds waiting for the database";
};
// Runs decide(connection, i) for requests 0 … n-1 in one write transaction, each behind a
// savepoint that is rolled back unless keep(answer): one commit for all. Every answer is
// the transaction's failure if it cannot begin, a savepoint fails, or the commit fails.
template <class Answer, class Decide, class Keep>
std::vector<Answer> SqliteStore::WriteBatch(size_t n, Decide decide, Keep keep) {
  auto fail_all = [&](const Status& why) { return std::vector<Answer>(n, Answer(why)); };
  auto conn = pools_->writer.Acquire();
  if (!conn.ok()) return fail_all(conn.status());
  SqliteConnection& c = *conn.value();
  sqlite::WriteTx tx(c);
  if (!tx.status().ok()) return fail_all(tx.status());
  std::vector<Answer> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (Status s = c.ExecScript("SAVEPOINT request"); !s.ok()) return fail_all(s);
    Answer r = decide(c, i);
    Status undone = keep(r) ? Status::Ok() : c.ExecScript("ROLLBACK TO request");
    Status released = c.ExecScript("RELEASE request");
    if (!undone.ok()) return fail_all(undone);
    if (!released.ok()) return fail_all(released);
    out.push_back(std::move(r));
  }
  BOX_ASSERT(out.size() == n);  // an answer for each request, in order
  // One commit for the batch (group commit).
  if (Status s = tx.Commit(); !s.ok()) return fail_all(s);
  return out;
}

}  // namespace boxoffice
