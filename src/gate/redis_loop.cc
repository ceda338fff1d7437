// The Redis client's loop transport: hiredis's async context on each I/O loop (and the
// client's construction and end, which own the loops' connections).
#include "gate/redis_client.h"

#include "core/status.h"
#include "gate/redis_parts.h"

namespace boxoffice {

// One loop's connection. Everything here runs on that loop's thread.
//
// hiredis drives the protocol and asks, through its ev hooks, to be told when the socket
// is readable or writable; an Asio descriptor on the same socket waits for that and calls
// redisAsyncHandleRead/Write. The descriptor never owns the socket (hiredis closes it): it
// is released in the cleanup hook, which hiredis calls before freeing the context, on
// every path (an error it read, a failed connect, our Drop). Each context gets a new
// generation, so a wait armed for a context that is gone does nothing when it fires.
//
// hiredis is only ever handed a numeric address. The node's name, if it has one, is
// resolved by the client's resolver thread (RedisResolver); calls sent meanwhile wait in
// `waiting_`, in order, and leave together once the connection opens. Answers of the
// resolver and the deadline's timer come back as loop callbacks that check `alive_`, so
// they do nothing once the connection is gone (the loop ended).
// Answers a call with an error. Out of line: inlined into a loop, GCC 12 takes the
// Result's empty RedisReply for uninitialized (-Wmaybe-uninitialized).
[[gnu::noinline]] void FailCall(const RedisPending& call, const Status& why) {
  call->reply.Set(Result<RedisReply>(why));
}

class RedisLoopConnection {
 public:
  // Calls held while the node's name resolves; past that, kUnavailable at once. A loop
  // sends a few calls per request, and they wait at most the connect timeout.
  static constexpr size_t kMaxWaiting = 10'000;

  RedisLoopConnection(io::asio::io_context& context, const RedisOptions& options,
                      RedisResolver* resolver, std::shared_ptr<io::LoopHandle> loop)
      : context_(context),
        options_(options),
        resolver_(resolver),
        loop_(std::move(loop)),
        numeric_(IsNumericHost(options.host)),
        deadline_(context) {
    if (numeric_) addresses_ = {options_.host};
  }
  ~RedisLoopConnection() {
    FailWaiting("redis: connection closed");
    Drop(generation_);
  }
  RedisLoopConnection(const RedisLoopConnection&) = delete;
  RedisLoopConnection& operator=(const RedisLoopConnection&) = delete;

  io::asio::io_context& context() { return context_; }

  // Queues the call on the connection (opening one if needed, after resolving the node's
  // name if it has one); its reply completes it.
  void Send(const RedisPending& call) {
    if (!ac_) {
      // A refused connect (or a name that did not resolve) is retried no sooner than the
      // connect timeout, not on every call.
      if (std::chrono::steady_clock::now() < retry_at_) {
        call->reply.Set(Status(Code::kUnavailable, "redis: cannot connect: " + last_error_));
        return;
      }
      if (addresses_.empty()) {  // a name, not resolved yet: the call waits for its address
        Wait(call);
        return;
      }
      BOX_ASSERT(waiting_.empty());  // they left when the addresses came
      if (!Connect()) {
        call->reply.Set(Status(Code::kUnavailable, "redis: cannot connect: " + last_error_));
        return;
      }
    }
    Write(call);
  }

  // Drops the context that carried `generation`, if it is still the current one: every
  // call on it fails with kUnavailable.
  void Drop(uint64_t generation) {
    if (ac_ && generation == generation_) redisAsyncFree(ac_);  // calls Cleanup
  }

 private:
  void Write(const RedisPending& call) {
    BOX_ASSERT(ac_ != nullptr);
    std::vector<const char*> args;
    std::vector<size_t> lengths;
    args.reserve(call->argv.size());
    lengths.reserve(call->argv.size());
    for (const auto& a : call->argv) {
      args.push_back(a.data());
      lengths.push_back(a.size());
    }
    BOX_ASSERT(args.size() == call->argv.size() && lengths.size() == args.size());
    auto* owner = new RedisPending(call);
    call->connection = this;
    call->generation = generation_;
    if (redisAsyncCommandArgv(ac_, &RedisLoopConnection::OnReply, owner,
                              static_cast<int>(args.size()), args.data(),
                              lengths.data()) != REDIS_OK) {
      delete owner;
      call->reply.Set(Status(Code::kUnavailable, "redis: connection closing"));
    }
  }

  // Holds the call until the node's name resolves (starting the resolve if none runs),
  // for at most the connect timeout.
  void Wait(const RedisPending& call) {
    if (waiting_.size() >= kMaxWaiting) {
      call->reply.Set(
          Status(Code::kUnavailable, "redis: too many calls wait for " + options_.host));
      return;
    }
    call->connection = this;
    call->generation = generation_;  // no context: a Drop for it does nothing
    waiting_.push_back(call);
    BOX_ASSERT(waiting_.size() <= kMaxWaiting);
    if (waiting_.size() == 1) ArmDeadline();
    if (resolving_) return;
    resolving_ = true;
    resolver_->Resolve(
        options_.host, loop_,
        [this, alive = std::weak_ptr<char>(alive_)](Result<std::vector<std::string>> found) {
          if (alive.expired()) return;  // the connection is gone
          Resolved(std::move(found));
        });
  }

  void ArmDeadline() {
    deadline_.expires_after(options_.connect_timeout);
    deadline_.async_wait([this, alive = std::weak_ptr<char>(alive_),
                          epoch = ++deadline_epoch_](const boost::system::error_code&) {
      if (alive.expired() || epoch != deadline_epoch_) return;
      // The name did not resolve within the connect timeout: what waits for it fails, and
      // calls fail at once for another connect timeout. The resolve goes on; its answer
      // serves the next connect.
      last_error_ = "resolving " + options_.host + " takes longer than " +
                    std::to_string(options_.connect_timeout.count()) + " ms";
      retry_at_ = std::chrono::steady_clock::now() + options_.connect_timeout;
      FailWaiting("redis: cannot connect: " + last_error_);
    });
  }

  void Resolved(Result<std::vector<std::string>> found) {
    resolving_ = false;
    BOX_ASSERT(ac_ == nullptr && addresses_.empty());  // only a connection with neither asks
    if (found.ok()) {
      addresses_ = std::move(found.value());
      next_address_ = 0;
    } else {
      last_error_ = found.status().message();
      retry_at_ = std::chrono::steady_clock::now() + options_.connect_timeout;
    }
    ++deadline_epoch_;
    deadline_.cancel();
    if (waiting_.empty()) return;  // their deadline passed: the address is kept for the next
    if (addresses_.empty() || !Connect()) {
      FailWaiting("redis: cannot connect: " + last_error_);
      return;
    }
    std::vector<RedisPending> waiting = std::exchange(waiting_, {});
    for (const RedisPending& call : waiting) {
      // A call whose caller stopped waiting (Await timed out) is never sent.
      if (!call->reply.done()) Write(call);
    }
  }

  void FailWaiting(const std::string& why) {
    std::vector<RedisPending> waiting = std::exchange(waiting_, {});
    const Status failed(Code::kUnavailable, why);
    for (const RedisPending& call : waiting) FailCall(call, failed);
  }

  // A connect that failed: the next one, no sooner than the connect timeout, tries the
  // name's next address; when all have failed, the name is resolved again (it may have
  // moved to another address).
  void ConnectFailed() {
    retry_at_ = std::chrono::steady_clock::now() + options_.connect_timeout;
    if (!numeric_ && ++next_address_ >= addresses_.size()) {
      addresses_.clear();
      next_address_ = 0;
    }
    // The next connect has an address to try, or resolves the name again.
    BOX_ASSERT(addresses_.empty() ? next_address_ == 0 : next_address_ < addresses_.size());
  }

  bool Connect() {
    BOX_ASSERT(ac_ == nullptr && next_address_ < addresses_.size());
    // A numeric address: hiredis asks no resolver, so nothing here waits on one.
    redisAsyncContext* ac = redisAsyncConnect(addresses_[next_address_].c_str(), options_.port);
    if (!ac || ac->err) {
      last_error_ = ac ? ac->errstr : "out of memory";
      if (ac) redisAsyncFree(ac);
      ConnectFailed();
      return false;
    }
    ++generation_;
    ac_ = ac;
    ac->ev.data = this;
    ac->ev.addRead = [](void* self) { static_cast<RedisLoopConnection*>(self)->Want(true, true); };
    ac->ev.delRead = [](void* self) { static_cast<RedisLoopConnection*>(self)->Want(true, false); };
    ac->ev.addWrite = [](void* self) {
      static_cast<RedisLoopConnection*>(self)->Want(false, true);
    };
    ac->ev.delWrite = [](void* self) {
      static_cast<RedisLoopConnection*>(self)->Want(false, false);
    };
    ac->ev.cleanup = [](void* self) { static_cast<RedisLoopConnection*>(self)->Cleanup(); };
    redisAsyncSetConnectCallback(ac, [](const redisAsyncContext* c, int status) {
      auto* self = static_cast<RedisLoopConnection*>(c->ev.data);
      if (status != REDIS_OK) {
        self->last_error_ = c->errstr;
        self->ConnectFailed();
      }
    });
    descriptor_ = std::make_unique<io::asio::posix::stream_descriptor>(context_, ac->c.fd);
    want_read_ = want_write_ = read_armed_ = write_armed_ = false;
    return true;
  }

  void Want(bool read, bool on) {
    (read ? want_read_ : want_write_) = on;
    if (on) Arm(read);
  }

  void Arm(bool read) {
    bool& armed = read ? read_armed_ : write_armed_;
    if (armed || !descriptor_) return;
    armed = true;
    const auto wait = read ? io::asio::posix::stream_descriptor::wait_read
                           : io::asio::posix::stream_descriptor::wait_write;
    descriptor_->async_wait(
        wait, [this, read, generation = generation_](const boost::system::error_code& ec) {
          if (generation != generation_) return;  // a context that is gone
          (read ? read_armed_ : write_armed_) = false;
          if (ec || !ac_) return;
          if (read ? !want_read_ : !want_write_) return;
          if (read) {
            redisAsyncHandleRead(ac_);  // may free the context (Cleanup runs)
          } else {
            redisAsyncHandleWrite(ac_);
          }
          if (ac_ && generation == generation_ && (read ? want_read_ : want_write_)) Arm(read);
        });
  }

  void Cleanup() {
    if (descriptor_) {
      descriptor_->release();  // hiredis closes the socket
      descriptor_.reset();
    }
    ac_ = nullptr;
    ++generation_;  // waits armed for this context do nothing now
  }

  static void OnReply(redisAsyncContext*, void* raw, void* privdata) {
    std::unique_ptr<RedisPending> owner(static_cast<RedisPending*>(privdata));
    BOX_ASSERT(owner != nullptr && *owner != nullptr);  // Write's, one per command
    const auto* reply = static_cast<const redisReply*>(raw);
    RedisCall& call = **owner;
    if (!reply) {
      call.reply.Set(Status(Code::kUnavailable, "redis: connection lost"));
    } else if (reply->type == REDIS_REPLY_ERROR) {
      call.reply.Set(Status(Code::kInternal, std::string(reply->str, reply->len)));
    } else {
      call.reply.Set(ConvertRedisReply(reply));
    }
  }

  io::asio::io_context& context_;
  const RedisOptions options_;
  RedisResolver* resolver_;               // the client's; outlives the loops
  std::shared_ptr<io::LoopHandle> loop_;  // where the resolver answers
  const bool numeric_;                    // the host is an address: never resolved
  redisAsyncContext* ac_ = nullptr;
  std::unique_ptr<io::asio::posix::stream_descriptor> descriptor_;
  uint64_t generation_ = 0;
  bool want_read_ = false;
  bool want_write_ = false;
  bool read_armed_ = false;
  bool write_armed_ = false;
  std::chrono::steady_clock::time_point retry_at_{};
  std::string last_error_;
  // Numeric addresses to connect to: the host itself when numeric, else what the resolver
  // said (emptied when all of them failed, so the name is resolved again).
  std::vector<std::string> addresses_;
  size_t next_address_ = 0;            // the one the next connect tries
  bool resolving_ = false;             // a resolve of the host is under way
  std::vector<RedisPending> waiting_;  // calls sent while resolving, in order
  io::asio::steady_timer deadline_;    // the first waiting call's connect timeout
  uint64_t deadline_epoch_ = 0;        // a deadline armed for an earlier wait is void
  std::shared_ptr<char> alive_ = std::make_shared<char>();  // expires with the connection
};

// A loop's connections, one per node it has sent to. Bounded by the cluster's size: nodes
// come from CLUSTER SLOTS and redirects, never from requests.
struct RedisLoopConnections {
  RedisLoopConnections(io::asio::io_context& context, const RedisOptions& options,
                       RedisResolver* resolver, std::shared_ptr<io::LoopHandle> loop)
      : context(context), options(options), resolver(resolver), loop(std::move(loop)) {}
  RedisLoopConnection* For(const RedisEndpoint& node) {
    std::unique_ptr<RedisLoopConnection>& c = by_node[node.Name()];
    if (!c) {
      RedisOptions o = options;
      o.host = node.host;
      o.port = node.port;
      c = std::make_unique<RedisLoopConnection>(context, o, resolver, loop);
    }
    return c.get();
  }
  io::asio::io_context& context;
  const RedisOptions options;
  RedisResolver* resolver;
  std::shared_ptr<io::LoopHandle> loop;
  std::map<std::string, std::unique_ptr<RedisLoopConnection>> by_node;
};

RedisPending RedisClient::SendTo(const RedisEndpoint& node, std::vector<std::string> argv,
                                 const RedisScript* script, bool asking, int redirects) {
  // Await follows a redirect only below the limit; PING goes out at it (none followed).
  BOX_ASSERT(redirects >= 0 && redirects <= kMaxRedirects);
  auto call = std::make_shared<RedisCall>();
  call->script = script;
  call->argv = std::move(argv);
  call->node = node;
  call->asking = asking;
  call->redirects = redirects;
  RedisLoopConnections* loop = loop_connections_.Get([this](io::asio::io_context& context) {
    return std::make_unique<RedisLoopConnections>(context, options_, resolver_.get(),
                                                  io::Loop::Current()->handle());
  });
  if (loop) {
    RedisLoopConnection* connection = loop->For(node);
    if (asking) {
      // ASKING goes first on the same connection; its +OK needs no one to wait for it.
      auto ask = std::make_shared<RedisCall>();
      ask->argv = {"ASKING"};
      connection->Send(ask);
    }
    connection->Send(call);
  } else {
    // Off the loops: the blocking call, which follows redirects and reloads scripts itself.
    call->reply.Set(Call(call->argv, script));
  }
  return call;
}

RedisPending RedisClient::Send(std::vector<std::string> argv) {
  RedisEndpoint node = NodeFor(argv);
  return SendTo(node, std::move(argv), nullptr, false, 0);
}

RedisPending RedisClient::SendEval(const RedisScript& script, const std::vector<std::string>& keys,
                                   const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"EVALSHA", script.sha1, std::to_string(keys.size())};
  argv.insert(argv.end(), keys.begin(), keys.end());
  argv.insert(argv.end(), args.begin(), args.end());
  RedisEndpoint node = NodeFor(argv);
  return SendTo(node, std::move(argv), &script, false, 0);
}

io::asio::awaitable<Result<RedisReply>> RedisClient::Await(RedisPending call) {
  auto reply = co_await call->reply.Wait(options_.command_timeout);
  if (!reply) {
    // No answer in time: the call counts as answered (if it still waits for its node's
    // address, it is never sent), and the connection's state is unknown, so it is never
    // used again.
    call->reply.Set(Status(Code::kUnavailable, "redis: the caller stopped waiting"));
    if (call->connection) call->connection->Drop(call->generation);
    if (cluster()) RequestRefresh();
    co_return Status(
        Code::kUnavailable,
        "redis: no answer within " + std::to_string(options_.command_timeout.count()) + " ms");
  }
  if (!call->connection || reply->ok()) co_return std::move(*reply);
  // The loop transport's redirects and lost scripts (the blocking one handled its own).
  if (auto redirect = RedirectOf(reply->status())) {
    if (!redirect->ask) RequestRefresh();
    if (call->redirects >= kMaxRedirects) {
      co_return Status(Code::kUnavailable,
                       "redis: too many redirects (" + reply->status().message() + ")");
    }
    auto again = SendTo(redirect->to, call->argv, call->script, redirect->ask, call->redirects + 1);
    co_return co_await Await(std::move(again));
  }
  if (call->script && IsNoScript(reply->status())) {
    // Redis lost its script cache (restart, failover, SCRIPT FLUSH): load it, call again.
    // Both go out in one write; the second runs after the first, without its script kept,
    // so a second NOSCRIPT is answered as it is (one reload per call).
    auto load =
        SendTo(call->node, {"SCRIPT", "LOAD", call->script->body}, nullptr, false, call->redirects);
    auto again = SendTo(call->node, call->argv, nullptr, call->asking, call->redirects);
    if (auto loaded = co_await Await(load); !loaded.ok()) co_return loaded.status();
    co_return co_await Await(std::move(again));
  }
  if (reply->status().code() == Code::kUnavailable && cluster()) RequestRefresh();
  co_return std::move(*reply);
}

io::asio::awaitable<Status> RedisClient::PingAsync() {
  auto map = Slots();
  std::vector<RedisPending> calls;
  if (!map) {
    calls.push_back(Send({"PING"}));
  } else {
    for (const RedisEndpoint& master : map->masters)
      calls.push_back(SendTo(master, {"PING"}, nullptr, false, kMaxRedirects));
  }
  BOX_ASSERT(!calls.empty());  // a cluster's map has a master (ParseClusterSlots)
  Status last(Code::kUnavailable, "redis: no master");
  bool any = false;
  for (RedisPending& call : calls) {
    auto r = co_await Await(std::move(call));
    if (r.ok()) {
      any = true;
    } else {
      last = r.status();
    }
  }
  co_return any ? Status::Ok() : last;
}

io::asio::awaitable<void> RedisClient::AwaitAside(RedisPending call,
                                                  std::function<void(Result<RedisReply>)> done) {
  auto reply = co_await Await(std::move(call));
  if (done) done(std::move(reply));
}

void RedisClient::Aside(RedisPending call, std::function<void(Result<RedisReply>)> done) {
  io::Loop* loop = io::Loop::Current();
  if (!loop) {  // answered already (the blocking transport)
    auto reply = io::RunSync(Await(std::move(call)));
    if (done) done(std::move(reply));
    return;
  }
  io::asio::co_spawn(loop->context(), AwaitAside(std::move(call), std::move(done)),
                     io::asio::detached);
}

RedisClient::RedisClient(RedisOptions options) : options_(std::move(options)) {
  if (!options_.resolve) options_.resolve = ResolveRedisHost;
  seed_ = RedisEndpoint{options_.host, options_.port};
  resolver_ = std::make_unique<RedisResolver>(options_.resolve);
  // A cluster node answers CLUSTER SLOTS; a lone Redis refuses it. A node that does not
  // answer now is taken for a lone Redis until one answers MOVED.
  auto slots = CommandOn(seed_, {"CLUSTER", "SLOTS"}, false);
  if (slots.ok()) {
    if (auto map = ParseClusterSlots(slots.value()); map.ok()) {
      {
        MutexLock lock(mu_);
        slots_ = std::make_shared<const RedisSlotMap>(std::move(map.value()));
      }
      RequestRefresh();  // starts the refresher
    }
  }
}

RedisClient::~RedisClient() {
  {
    std::lock_guard lock(refresh_mu_);
    stopping_ = true;
  }
  refresh_cv_.notify_all();
  if (refresher_.joinable()) refresher_.join();
}

}  // namespace boxoffice