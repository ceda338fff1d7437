// PgPipeline: one PostgreSQL connection of one I/O loop, in libpq's non-blocking pipeline
// mode, awaited by the loop's coroutines.
//
// Design note. A request's statement is sent at once behind whatever is in flight on the
// connection, followed by a Sync: each statement is its own transaction, and an error
// fails only the statement it belongs to (the pipeline resumes after its Sync). Results
// come back in the order sent; a queue of what was sent says whose each result is. Many
// requests share one connection this way, none waits for another's round trip, and no
// thread waits at all: the loop waits for the socket (an Asio descriptor that never owns
// it) and hands each result to the coroutine that awaits it.
//
// Statements are prepared on first use on each connection, in the same pipeline. The
// session's limits (statement_timeout, lock_timeout) are set by the first statement of
// each connection. A connection that breaks or answers out of step is closed: every
// statement it carried fails with kUnavailable (a 503, the client retries), and the next
// Exec opens a new one. At most max_in_flight statements wait on one connection; past
// that, kUnavailable at once.
//
// Deadlines. PostgreSQL runs a connection's statements one after the other, so a statement
// queued behind others starts only when they are done: its time is counted from then,
// when it becomes the head of the queue (the one the server is working on), not from when
// it was sent. Only the head can be overdue: a head unanswered statement_timeout plus
// kAnswerMargin after it became the head means the connection is lost, and it is closed;
// the statements behind it are never failed for time they spent waiting their turn. (A
// statement failed with its answer unknown may have committed: its caller repairs what it
// wrote, by the ids it chose; see holds/hold_service.h and payments/checkout.h.)
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/clock.h"
#include "io/loop.h"
#include "store/pg_common.h"

namespace boxoffice {

struct PgPipelineOptions {
  std::string url;
  Millis connect_timeout{5'000};
  Millis statement_timeout{5'000};
  Millis lock_timeout{2'000};
  size_t max_in_flight = 4'096;  // statements waiting on one connection, then kUnavailable
  std::string application_name = "boxoffice";
};

// Statements a batching component sent on the loops' pipelines and the requests they
// carried, counted where every loop adds (relaxed atomics: no lock on the request path).
struct PgBatchCounts {
  std::atomic<uint64_t> statements{0};
  std::atomic<uint64_t> requests{0};
};

class PgPipeline {
 public:
  // A statement the server has this long past statement_timeout to answer, then the
  // connection is deemed lost.
  static constexpr Millis kAnswerMargin{2'000};
  // The longest a caller waits for its statement's answer, however many are ahead of it
  // (each head has its own deadline); past it the answer is lost to the caller (its write
  // repaired by its ids), never the connection closed for it.
  static constexpr Millis kMaxAnswerWait{60'000};

  PgPipeline(io::asio::io_context& context, PgPipelineOptions options);
  ~PgPipeline();
  PgPipeline(const PgPipeline&) = delete;
  PgPipeline& operator=(const PgPipeline&) = delete;

  // Runs one statement as its own transaction and awaits its result (a tuples or command
  // result; an error is its Status, as PgError translates it).
  io::asio::awaitable<Result<PgResultPtr>> Exec(const Sql& sql, std::vector<Param> params);
  // Opens the connection unless it is ready (or joins the connect under way); kUnavailable
  // when it cannot, within connect_timeout, or within a second of a failed attempt.
  io::asio::awaitable<Status> Open() { return EnsureConnected(); }

  // The server process of the current connection (tests), or 0.
  int backend_pid() const;
  // How a statement sent now would fare: at once (kReady), after a connect under way or
  // one it starts (kConnecting, kClosed), or refused at once (kCoolingDown: a connect
  // failed within the last second).
  enum class Health { kReady, kConnecting, kClosed, kCoolingDown };
  Health health() const;
  // Statements sent and not answered yet, and those waiting for the connect.
  size_t load() const { return in_flight_ + connect_waiters_.size(); }

 private:
  struct Request {
    io::Completion<Result<PgResultPtr>> done;
    std::optional<Result<PgResultPtr>> result;  // of its statement, set before its Sync
    uint64_t generation = 0;
  };
  struct Item {
    enum class Kind { kPrepare, kQuery, kSync };
    Kind kind;
    std::shared_ptr<Request> request;
    const char* name = nullptr;  // the prepared statement (kPrepare)
  };
  enum class State { kDown, kConnecting, kReady };

  io::asio::awaitable<Status> EnsureConnected();
  io::asio::awaitable<Status> Connect();
  std::shared_ptr<Request> Submit(const Sql& sql, const std::vector<Param>& params);
  // The head of the queue changed (or the queue was empty and is not): its deadline starts.
  void NewHead();
  void Flush();
  void Arm(bool read);
  void OnReadable();
  // The connection is lost: everything it carried fails with why.
  void Close(const Status& why);

  io::asio::io_context& context_;
  const PgPipelineOptions options_;
  PGconn* conn_ = nullptr;
  std::shared_ptr<io::asio::posix::stream_descriptor> descriptor_;  // never owns the socket
  State state_ = State::kDown;
  uint64_t generation_ = 0;  // one per connection: waits armed for an older one do nothing
  std::deque<Item> queue_;   // what was sent and is not answered yet, in order
  size_t in_flight_ = 0;     // statements in queue_
  // The head statement's deadline (see the design note): the watchdog fires at it, and
  // closes the connection if the same head (head_seq_) is still unanswered.
  io::asio::steady_timer watchdog_;
  uint64_t head_seq_ = 0;
  std::unordered_set<std::string> prepared_;  // by name (see pg_connection.h)
  bool read_armed_ = false;
  bool write_armed_ = false;
  bool flush_pending_ = false;
  std::vector<std::shared_ptr<io::Completion<Status>>> connect_waiters_;
  std::chrono::steady_clock::time_point retry_at_{};
  std::string last_error_;
};

// A loop's few pipelined connections. PostgreSQL runs one connection's statements one
// after the other, so a statement waiting for a row lock (a hot showtime's) would hold up
// everything sent behind it on its connection: each statement goes to the ready
// connection with the fewest statements in flight, and a waiting one delays only what
// shares its connection. A connection is opened in the background when the others are
// busy. The set lives as long as its loop: connects it started in the background end with
// the loop's coroutines.
class PgPipelineSet {
 public:
  static constexpr size_t kMaxConnections = 8;

  PgPipelineSet(io::asio::io_context& context, const PgPipelineOptions& options, size_t count) {
    BOX_ASSERT(count >= 1 && count <= kMaxConnections);
    for (size_t i = 0; i < count; ++i) {
      pipelines_.push_back(std::make_unique<PgPipeline>(context, options));
    }
  }

  // Runs a statement on the ready connection with the least load. When that one is busy,
  // a closed one is opened in the background (one connect at a time) for the statements
  // after it: a statement never waits for a connect while a connection is ready, so its
  // wait stays one statement's. With none ready (the loop's first statements, or after a
  // failure), it waits for the connect under way, or starts one; a connection whose
  // connect just failed gets nothing for its second of cooling down while another opens.
  io::asio::awaitable<Result<PgResultPtr>> Exec(const Sql& sql, std::vector<Param> params) {
    PgPipeline* ready = nullptr;
    PgPipeline* connecting = nullptr;
    PgPipeline* closed = nullptr;
    for (const auto& p : pipelines_) {
      switch (p->health()) {
        case PgPipeline::Health::kReady:
          if (!ready || p->load() < ready->load()) ready = p.get();
          break;
        case PgPipeline::Health::kConnecting:
          if (!connecting || p->load() < connecting->load()) connecting = p.get();
          break;
        case PgPipeline::Health::kClosed:
          if (!closed) closed = p.get();
          break;
        case PgPipeline::Health::kCoolingDown:
          break;
      }
    }
    if (ready) {
      if (ready->load() > 0 && closed && !connecting) {
        auto executor = co_await io::asio::this_coro::executor;
        io::asio::co_spawn(executor, OpenInBackground(closed), io::asio::detached);
      }
      co_return co_await ready->Exec(sql, std::move(params));
    }
    PgPipeline* chosen = connecting ? connecting : closed ? closed : pipelines_.front().get();
    co_return co_await chosen->Exec(sql, std::move(params));
  }

 private:
  static io::asio::awaitable<void> OpenInBackground(PgPipeline* pipeline) {
    co_await pipeline->Open();  // a failure is logged, and cools the connection down
  }

  std::vector<std::unique_ptr<PgPipeline>> pipelines_;
};

}  // namespace boxoffice
