// PgBatcher: requests that arrive together decided by one statement, per I/O loop and key.
//
// Design note. Per key (a showtime for holds; for confirmations, whose reports do not name
// their showtime, one of a few queues by booking id), the first request goes out at once as a batch
// of one; requests for the same key that arrive while a statement for it is in flight wait in
// arrival order and go together, as one statement, when it returns. The statement (a server-side
// function over arrays) answers one row per request, in order. A batch holds at most max_batch
// requests, and at most max_waiting wait per key (then kUnavailable at once), so a request waits
// for a few statements at most. A request whose caller gave up before its statement went out (the
// wait's bound) is never sent: nothing is decided for a caller who was told 503. Once sent, its
// answer is awaited to the end (the pipeline bounds it). A failed statement fails the requests it
// carried, and only them: the queue carries on.
//
// Traits says how requests become the statement and its rows:
//   using Request = …; using Row = …;
//   static const Sql& Statement();
//   static std::vector<Param> Params(const Param& now, const std::vector<const Request*>&);
//   static Result<std::vector<Row>> ReadRows(const PGresult*, size_t expected);
//
// Everything here runs on one loop's thread: nothing is locked.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/status.h"
#include "store/pg_common.h"
#include "store/pg_pipeline.h"

namespace boxoffice {

template <class Traits>
class PgBatcher {
 public:
  using Request = typename Traits::Request;
  using Row = typename Traits::Row;

  struct Limits {
    size_t max_batch;    // requests in one statement
    size_t max_waiting;  // per key, then kUnavailable at once
  };

  // now: the test clock's override, or NULL (the database's clock). statement_timeout:
  // the pipeline's; a request waits at most for the statement in flight and its own.
  PgBatcher(PgPipelineSet* pipeline, std::function<Param()> now, Millis statement_timeout,
            Limits limits, PgBatchCounts* counts, std::string busy)
      : pipeline_(pipeline),
        now_(std::move(now)),
        answer_bound_(2 * (statement_timeout + PgPipeline::kAnswerMargin)),
        limits_(limits),
        counts_(counts),
        busy_(std::move(busy)) {
    // The stores' constants: a batch takes at least one request, and a full batch can wait.
    BOX_ASSERT(limits_.max_batch >= 1 && limits_.max_waiting >= limits_.max_batch);
  }

  // The request's row of the statement that decided it, the statement's failure, or
  // kUnavailable (too many waiting, or not sent within the bound).
  io::asio::awaitable<Result<Row>> Submit(int64_t key, Request request) {
    Queue& queue = queues_[key];
    if (queue.waiting.size() >= limits_.max_waiting) co_return Status(Code::kUnavailable, busy_);
    auto waiting = std::make_shared<Waiting>();
    waiting->request = std::move(request);
    queue.waiting.push_back(waiting);
    BOX_ASSERT(queue.waiting.size() <= limits_.max_waiting);
    if (!queue.in_flight) {
      queue.in_flight = true;
      auto executor = co_await io::asio::this_coro::executor;
      io::asio::co_spawn(executor, Drain(key), io::asio::detached);
    }
    // The drainer answers every request it sent, on every path.
    auto row = co_await waiting->done.Wait(answer_bound_);
    if (!row && !waiting->sent) {
      waiting->abandoned = true;  // Drain drops it: nothing decided behind a 503
      co_return Status(Code::kUnavailable, busy_);
    }
    if (!row) row = co_await waiting->done.Wait(answer_bound_);  // sent: Exec bounds it
    if (!row) {
      co_return Status(Code::kUnavailable, "the batch's statement did not come back")
          .MaybeApplied();
    }
    co_return std::move(*row);
  }

 private:
  struct Waiting {
    Request request;
    io::Completion<Result<Row>> done;
    bool sent = false;       // its statement went out: its answer comes within Exec's bound
    bool abandoned = false;  // its caller stopped waiting before it was sent: never send it
  };
  struct Queue {
    bool in_flight = false;
    std::deque<std::shared_ptr<Waiting>> waiting;
  };

  io::asio::awaitable<void> Drain(int64_t key) {
    Queue& queue = queues_[key];  // stable: the map's nodes never move
    while (!queue.waiting.empty()) {
      std::vector<std::shared_ptr<Waiting>> batch;
      while (!queue.waiting.empty() && batch.size() < limits_.max_batch) {
        std::shared_ptr<Waiting> next = std::move(queue.waiting.front());
        queue.waiting.pop_front();
        if (next->abandoned) continue;
        next->sent = true;
        batch.push_back(std::move(next));
      }
      if (batch.empty()) continue;
      BOX_ASSERT(batch.size() <= limits_.max_batch);
      std::vector<const Request*> requests;
      requests.reserve(batch.size());
      for (const auto& w : batch) requests.push_back(&w->request);
      Result<std::vector<Row>> rows = Status(Code::kInternal, "batch not run");
      try {
        std::vector<Param> params = Traits::Params(now_(), requests);
        counts_->statements.fetch_add(1, std::memory_order_relaxed);
        counts_->requests.fetch_add(batch.size(), std::memory_order_relaxed);
        auto result = co_await pipeline_->Exec(Traits::Statement(), std::move(params));
        rows = result.ok() ? Traits::ReadRows(result->get(), batch.size())
                           : Result<std::vector<Row>>(result.status());
      } catch (const std::exception& e) {
        // Every request taken is answered whatever happens, and the queue carries on.
        rows = Status(Code::kUnavailable, std::string("batch failed: ") + e.what()).MaybeApplied();
      }
      // ReadRows answers exactly `expected` rows or an error: each request gets its own.
      BOX_ASSERT(!rows.ok() || rows.value().size() == batch.size());
      for (size_t i = 0; i < batch.size(); ++i) {
        batch[i]->done.Set(rows.ok() ? Result<Row>(std::move(rows.value()[i]))
                                     : Result<Row>(rows.status()));
      }
    }
    queues_.erase(key);
  }

  PgPipelineSet* pipeline_;
  std::function<Param()> now_;
  const Millis answer_bound_;
  const Limits limits_;
  std::unordered_map<int64_t, Queue> queues_;  // keys with requests waiting or in flight
  PgBatchCounts* counts_;
  const std::string busy_;
};

}  // namespace boxoffice
