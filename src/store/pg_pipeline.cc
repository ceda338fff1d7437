#include "store/pg_pipeline.h"

#include "core/log.h"
#include "core/status.h"
#include "store/pg_connect.h"

namespace boxoffice {
namespace {

namespace asio = io::asio;
using Descriptor = asio::posix::stream_descriptor;

// The session's limits, and no sequential or bitmap scans: a loop's connections run only
// statements that find their rows by key (holds, booking reads, a purchase's phases), and
// PostgreSQL caches their plans. A plan made while a table was small (a new database, a
// premiere's first seconds, before autovacuum's ANALYZE) would otherwise scan the table on
// every call once it is large: seen in the premiere as booking reads scanning every
// booking. A handful of keys (`seat_code = ANY(…)`) was read through a bitmap, which costs
// more than walking the index for each: without it PostgreSQL spent about a fifth less CPU
// per attempt in the hold storm (three alternating runs each). And no JIT: a disabled scan
// costs more than jit_above_cost, so a statement left with no other path would be compiled
// afresh on every call (140 ms for a one-row showtime read, seen with index scans off).
constexpr Sql kSessionLimits{
    "session_limits",
    "SELECT set_config('statement_timeout', $1, false), set_config('lock_timeout', $2, false),"
    "       set_config('idle_in_transaction_session_timeout', '60000', false),"
    "       set_config('enable_seqscan', 'off', false),"
    "       set_config('enable_bitmapscan', 'off', false), set_config('jit', 'off', false)"};

// Resolves host on the blocking pool into *answer (a coroutine of its own, so that its
// caller may stop waiting). Parameters, not captures: they live in the coroutine's frame.
asio::awaitable<void> ResolveInto(std::shared_ptr<io::Completion<Result<std::string>>> answer,
                                  std::string host) {
  auto resolve = [host] { return ResolvePgHost(host); };
  answer->Set(co_await io::Offload(std::move(resolve), /*may_refuse=*/false));
}

}  // namespace

PgPipeline::PgPipeline(asio::io_context& context, PgPipelineOptions options)
    : context_(context), options_(std::move(options)), watchdog_(context) {}

PgPipeline::~PgPipeline() { Close(Status(Code::kUnavailable, "database connection closed")); }

int PgPipeline::backend_pid() const { return conn_ ? PQbackendPID(conn_) : 0; }

asio::awaitable<Result<PgResultPtr>> PgPipeline::Exec(const Sql& sql, std::vector<Param> params) {
  if (Status s = co_await EnsureConnected(); !s.ok()) co_return s;
  const int64_t ahead = static_cast<int64_t>(in_flight_);
  std::shared_ptr<Request> request = Submit(sql, params);
  // Every statement ahead is answered, or the watchdog closes the connection (which answers
  // this one), each within its head's deadline: this bound is only a guard against a wait
  // that nothing would end. Past it, the connection is left to its watchdog.
  const Millis bound =
      std::min(kMaxAnswerWait, (options_.statement_timeout + kAnswerMargin) * (ahead + 2));
  auto answer = co_await request->done.Wait(bound);
  if (!answer) {
    LogError("database statement unanswered past its bound",
             {{"statement", sql.name}, {"boundMs", bound.count()}});
    co_return Status(Code::kUnavailable, "database did not answer in time").MaybeApplied();
  }
  co_return std::move(*answer);
}

void PgPipeline::NewHead() {
  ++head_seq_;
  if (queue_.empty()) {
    watchdog_.cancel();
    return;
  }
  watchdog_.expires_after(options_.statement_timeout + kAnswerMargin);
  watchdog_.async_wait([this, seq = head_seq_](boost::system::error_code ec) {
    // (A cancelled wait may outlive the pipeline: nothing of it is read then.)
    if (ec || seq != head_seq_ || queue_.empty()) return;
    // A loop that ran late may fire this before the read its answer is waiting for: what
    // has come is read first, and only a head still unanswered closes the connection.
    if (conn_) OnReadable();
    if (seq != head_seq_ || queue_.empty()) return;
    LogWarn("database statement overdue; connection closed",
            {{"statementTimeoutMs", options_.statement_timeout.count()}});
    Close(Status(Code::kUnavailable, "database did not answer in time"));
  });
}

PgPipeline::Health PgPipeline::health() const {
  switch (state_) {
    case State::kReady:
      return Health::kReady;
    case State::kConnecting:
      return Health::kConnecting;
    case State::kDown:
      break;
  }
  return std::chrono::steady_clock::now() < retry_at_ ? Health::kCoolingDown : Health::kClosed;
}

asio::awaitable<Status> PgPipeline::EnsureConnected() {
  if (state_ == State::kReady) co_return Status::Ok();
  if (state_ == State::kConnecting) {
    auto waiter = std::make_shared<io::Completion<Status>>();
    connect_waiters_.push_back(waiter);
    auto connected = co_await waiter->Wait(options_.connect_timeout + kAnswerMargin);
    co_return connected ? *connected
                        : Status(Code::kUnavailable, "cannot connect to postgresql: timeout");
  }
  // A refused connect is tried again no sooner than a second later, not on every request.
  if (std::chrono::steady_clock::now() < retry_at_) {
    co_return Status(Code::kUnavailable, "cannot connect to postgresql: " + last_error_);
  }
  state_ = State::kConnecting;
  Status s = Status::Ok();
  try {
    s = co_await Connect();
  } catch (const std::exception& e) {
    // Never left "connecting": the waiters are answered and the next request tries again.
    s = Status(Code::kUnavailable, std::string("cannot connect to postgresql: ") + e.what());
    Close(s);
    state_ = State::kDown;
  }
  if (!s.ok()) {
    last_error_ = s.message();
    retry_at_ = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    LogWarn("database pipeline cannot connect", {{"error", s.message()}});
  }
  auto waiters = std::move(connect_waiters_);
  connect_waiters_.clear();
  for (auto& w : waiters) w->Set(s);
  co_return s;
}

asio::awaitable<Status> PgPipeline::Connect() {
  // A host name is resolved on the blocking pool: PQconnectStartParams would call
  // getaddrinfo on this loop's thread, and a slow resolver would stall every request on it.
  // The resolve counts toward connect_timeout: a resolver that does not answer fails the
  // connect in time (its job ends on its own and is dropped).
  std::string hostaddr;
  if (std::string host = PgHostToResolve(options_.url); !host.empty()) {
    auto answer = std::make_shared<io::Completion<Result<std::string>>>();
    auto executor = co_await asio::this_coro::executor;
    asio::co_spawn(executor, ResolveInto(answer, host), asio::detached);
    auto address = co_await answer->Wait(options_.connect_timeout);
    if (!address || !address->ok()) {
      state_ = State::kDown;
      co_return Status(Code::kUnavailable, "cannot connect to postgresql: " +
                                               (address ? address->status().message()
                                                        : "resolving " + host + " took too long"));
    }
    hostaddr = std::move(address->value());
  }
  const PgConnectParams params(options_.url, options_.connect_timeout, options_.application_name,
                               hostaddr);
  PGconn* conn = PQconnectStartParams(params.keys(), params.values(), 1);
  if (!conn || PQstatus(conn) == CONNECTION_BAD) {
    const std::string why = conn ? PQerrorMessage(conn) : "out of memory";
    if (conn) PQfinish(conn);
    state_ = State::kDown;
    co_return Status(Code::kUnavailable, "cannot connect to postgresql: " + why);
  }
  // libpq does not time an asynchronous connect: the loop does. Each step waits on a fresh
  // descriptor, released before PQconnectPoll: libpq may close the socket and open another
  // (the next address of a host), often under the same number, which a reused descriptor
  // would never see become ready.
  const auto deadline = std::chrono::steady_clock::now() + options_.connect_timeout;
  PostgresPollingStatusType poll = PGRES_POLLING_WRITING;
  while (poll != PGRES_POLLING_OK) {
    if (poll == PGRES_POLLING_FAILED || std::chrono::steady_clock::now() >= deadline) break;
    auto descriptor = std::make_shared<Descriptor>(context_, PQsocket(conn));
    asio::steady_timer timer(context_, deadline);
    timer.async_wait([weak = std::weak_ptr<Descriptor>(descriptor)](boost::system::error_code ec) {
      if (auto d = weak.lock(); d && !ec) d->cancel();
    });
    boost::system::error_code ec;
    co_await descriptor->async_wait(
        poll == PGRES_POLLING_READING ? Descriptor::wait_read : Descriptor::wait_write,
        asio::redirect_error(asio::use_awaitable, ec));
    timer.cancel();
    descriptor->release();
    poll = PQconnectPoll(conn);
  }
  if (poll != PGRES_POLLING_OK || PQsetnonblocking(conn, 1) != 0 ||
      PQenterPipelineMode(conn) != 1) {
    const std::string why = poll == PGRES_POLLING_OK || poll == PGRES_POLLING_FAILED
                                ? std::string(PQerrorMessage(conn))
                                : "timeout";
    PQfinish(conn);
    state_ = State::kDown;
    co_return Status(Code::kUnavailable, "cannot connect to postgresql: " + why);
  }
  // Server notices become JSON log lines like everything else on stderr.
  PQsetNoticeProcessor(
      conn,
      [](void*, const char* message) {
        std::string text = message;
        while (!text.empty() && text.back() == '\n') text.pop_back();
        LogInfo("postgresql notice", {{"detail", text}});
      },
      nullptr);
  conn_ = conn;
  descriptor_ = std::make_shared<Descriptor>(context_, PQsocket(conn));
  ++generation_;
  state_ = State::kReady;
  auto limits = Submit(kSessionLimits,
                       {P(options_.statement_timeout.count()), P(options_.lock_timeout.count())});
  auto set = co_await limits->done.Wait(options_.connect_timeout);
  if (!set || !set->ok()) {
    const Status why(Code::kUnavailable,
                     "cannot set the session's limits: " +
                         (set ? set->status().message() : std::string("timeout")));
    Close(why);
    co_return why;
  }
  co_return Status::Ok();
}

std::shared_ptr<PgPipeline::Request> PgPipeline::Submit(const Sql& sql,
                                                        const std::vector<Param>& params) {
  auto request = std::make_shared<Request>();
  request->generation = generation_;
  if (!conn_) {
    request->done.Set(Status(Code::kUnavailable, "database connection lost"));
    return request;
  }
  if (in_flight_ >= options_.max_in_flight) {
    request->done.Set(Status(Code::kUnavailable, "database pipeline full"));
    return request;
  }
  const bool was_idle = queue_.empty();
  const int n = static_cast<int>(params.size());
  if (!prepared_.count(std::string(sql.name))) {
    if (PQsendPrepare(conn_, sql.name, sql.text, n, nullptr) != 1) {
      const Status why = PgError(conn_, nullptr);
      Close(why);
      request->done.Set(why);
      return request;
    }
    prepared_.insert(sql.name);
    queue_.push_back(Item{Item::Kind::kPrepare, request, sql.name});
  }
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
  if (PQsendQueryPrepared(conn_, sql.name, n, values.data(), nullptr, nullptr, 0) != 1 ||
      PQpipelineSync(conn_) != 1) {
    const Status why = PgError(conn_, nullptr);
    Close(why);
    request->done.Set(why);
    return request;
  }
  queue_.push_back(Item{Item::Kind::kQuery, request});
  queue_.push_back(Item{Item::Kind::kSync, request});
  ++in_flight_;
  BOX_ASSERT(in_flight_ <= options_.max_in_flight);  // refused above at the limit
  if (was_idle) NewHead();
  Flush();
  if (conn_) Arm(/*read=*/true);
  return request;
}

void PgPipeline::Flush() {
  const int r = PQflush(conn_);
  if (r < 0) {
    Close(PgError(conn_, nullptr));
    return;
  }
  flush_pending_ = r == 1;
  if (flush_pending_) Arm(/*read=*/false);
}

void PgPipeline::Arm(bool read) {
  bool& armed = read ? read_armed_ : write_armed_;
  if (armed || !descriptor_) return;
  armed = true;
  descriptor_->async_wait(read ? Descriptor::wait_read : Descriptor::wait_write,
                          [this, read, generation = generation_](boost::system::error_code ec) {
                            if (generation != generation_) return;  // a connection that is gone
                            (read ? read_armed_ : write_armed_) = false;
                            if (ec || !conn_) return;
                            if (read) {
                              OnReadable();
                            } else if (flush_pending_) {
                              Flush();
                            }
                          });
}

void PgPipeline::OnReadable() {
  if (PQconsumeInput(conn_) != 1) {
    Close(PgError(conn_, nullptr));
    return;
  }
  // The server may wait for us to read before it takes more of what we send.
  if (flush_pending_) {
    Flush();
    if (!conn_) return;
  }
  while (!queue_.empty() && !PQisBusy(conn_)) {
    PGresult* raw = PQgetResult(conn_);
    Item& front = queue_.front();
    if (front.kind == Item::Kind::kSync) {
      PgResultPtr sync(raw, &PQclear);
      if (!raw || PQresultStatus(raw) != PGRES_PIPELINE_SYNC) {
        Close(Status(Code::kUnavailable, "database pipeline out of step"));
        return;
      }
      std::shared_ptr<Request> request = std::move(front.request);
      queue_.pop_front();
      BOX_ASSERT(in_flight_ > 0);  // one Sync queued per statement counted in flight
      --in_flight_;
      NewHead();
      request->done.Set(request->result ? std::move(*request->result)
                                        : Result<PgResultPtr>(
                                              Status(Code::kInternal, "statement without result")));
      continue;
    }
    if (!raw) {  // the end of this statement's results
      queue_.pop_front();
      continue;
    }
    PgResultPtr result(raw, &PQclear);
    Request& request = *front.request;
    switch (PQresultStatus(raw)) {
      case PGRES_TUPLES_OK:
      case PGRES_COMMAND_OK:
        if (front.kind == Item::Kind::kQuery) request.result.emplace(std::move(result));
        break;
      case PGRES_PIPELINE_ABORTED:
        // Skipped after an earlier error of the same request (its prepare failed).
        if (!request.result) {
          request.result.emplace(Status(Code::kInternal, "statement skipped after an error"));
        }
        break;
      default: {
        if (front.kind == Item::Kind::kPrepare) prepared_.erase(std::string(front.name));
        // 26000: a statement sent right behind a prepare that failed; it is prepared again
        // by the next request, so this one may simply be tried again.
        const char* state = PQresultErrorField(raw, PG_DIAG_SQLSTATE);
        Status error = state && std::string_view(state) == "26000"
                           ? Status(Code::kUnavailable, "statement not prepared yet")
                           : PgError(conn_, raw);
        if (!request.result || request.result->ok()) request.result.emplace(std::move(error));
        break;
      }
    }
  }
  if (!queue_.empty()) Arm(/*read=*/true);
}

void PgPipeline::Close(const Status& why) {
  // Every statement it carried is answered with why: an OK status would pass for a result.
  BOX_ASSERT(!why.ok());
  ++generation_;
  ++head_seq_;
  watchdog_.cancel();
  std::deque<Item> items = std::move(queue_);
  queue_.clear();
  in_flight_ = 0;
  prepared_.clear();
  read_armed_ = write_armed_ = flush_pending_ = false;
  if (descriptor_) {
    descriptor_->release();  // PQfinish closes the socket
    descriptor_.reset();
  }
  if (conn_) {
    PQfinish(conn_);
    conn_ = nullptr;
  }
  if (state_ == State::kReady) state_ = State::kDown;
  // What was sent may have been carried out: its answer is lost with the connection.
  Status lost = why;
  lost.MaybeApplied();
  for (auto& item : items) {
    if (item.kind == Item::Kind::kSync) item.request->done.Set(lost);
  }
}

}  // namespace boxoffice
