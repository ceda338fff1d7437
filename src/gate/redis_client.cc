#include "gate/redis_client.h"

#include <arpa/inet.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <netdb.h>
#include <openssl/sha.h>

#include <charconv>

namespace boxoffice {

class RedisConnection {
 public:
  explicit RedisConnection(redisContext* c) : c_(c) {}
  ~RedisConnection() {
    if (c_) redisFree(c_);
  }
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;
  redisContext* get() const { return c_; }

 private:
  redisContext* c_;
};

namespace {

// The host as a numeric address, resolved here (off the loops) when it is a name: hiredis
// resolves a name synchronously on every connect, which on a loop would stall every
// request of it. A name that does not resolve now is kept (and resolved at connect).
std::string NumericHost(const std::string& host) {
  // IPv4 first, as hiredis itself tries it, then any.
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0 || !found) {
    hints.ai_family = AF_UNSPEC;
    found = nullptr;
    if (getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0 || !found) return host;
  }
  char text[INET6_ADDRSTRLEN] = {};
  const void* addr =
      found->ai_family == AF_INET
          ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(found->ai_addr)->sin_addr)
          : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(found->ai_addr)->sin6_addr);
  const bool ok = inet_ntop(found->ai_family, addr, text, sizeof text) != nullptr;
  freeaddrinfo(found);
  return ok ? std::string(text) : host;
}

timeval ToTimeval(Millis ms) {
  return timeval{static_cast<time_t>(ms.count() / 1000),
                 static_cast<suseconds_t>((ms.count() % 1000) * 1000)};
}

RedisReply Convert(const redisReply* r) {
  RedisReply out;
  switch (r->type) {
    case REDIS_REPLY_INTEGER:
      out.type = RedisReply::Type::kInteger;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
      out.type = RedisReply::Type::kString;
      out.text.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ARRAY:
      out.type = RedisReply::Type::kArray;
      for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(Convert(r->element[i]));
      break;
    default:
      break;
  }
  return out;
}

}  // namespace

std::optional<RedisOptions> ParseRedisUrl(const std::string& url) {
  constexpr std::string_view kScheme = "redis://";
  if (url.rfind(kScheme, 0) != 0) return std::nullopt;
  std::string rest = url.substr(kScheme.size());
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  const size_t colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0 || rest.find('@') != std::string::npos)
    return std::nullopt;
  int port = 0;
  const std::string port_text = rest.substr(colon + 1);
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port <= 0 || port > 65535)
    return std::nullopt;
  RedisOptions o;
  o.host = rest.substr(0, colon);
  o.port = port;
  return o;
}

RedisScript::RedisScript(std::string text) : body(std::move(text)) {
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(body.data()), body.size(), digest);
  static constexpr char kHex[] = "0123456789abcdef";
  for (unsigned char b : digest) {
    sha1 += kHex[b >> 4];
    sha1 += kHex[b & 15];
  }
}

RedisClient::RedisClient(RedisOptions options)
    : options_(std::move(options)), seed_{NumericHost(options_.host), options_.port} {
  // A cluster node answers CLUSTER SLOTS; a lone Redis refuses it. A node that does not
  // answer now is taken for a lone Redis until one answers MOVED.
  auto slots = CommandOn(seed_, {"CLUSTER", "SLOTS"}, false);
  if (slots.ok()) {
    if (auto map = ParseClusterSlots(slots.value()); map.ok()) {
      {
        std::lock_guard lock(mu_);
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

bool RedisClient::cluster() const { return Slots() != nullptr; }

std::shared_ptr<const RedisSlotMap> RedisClient::Slots() const {
  std::lock_guard lock(mu_);
  return slots_;
}

std::vector<RedisEndpoint> RedisClient::Nodes() const {
  std::vector<RedisEndpoint> out = {seed_};
  if (auto map = Slots()) {
    for (const RedisEndpoint& node : map->nodes)
      if (!(node == seed_)) out.push_back(node);
  }
  return out;
}

RedisEndpoint RedisClient::NodeFor(const std::vector<std::string>& argv) const {
  auto map = Slots();
  if (!map) return seed_;
  if (auto key = RedisRoutingKey(argv)) {
    const int16_t master = map->master_of[RedisKeySlot(*key)];
    if (master >= 0) return map->masters[master];
    return seed_;  // a slot no master serves: the node answers CLUSTERDOWN or MOVED
  }
  return map->masters.front();  // a command without keys: any master
}

Pool<RedisConnection>& RedisClient::PoolFor(const RedisEndpoint& node) {
  std::lock_guard lock(mu_);
  std::unique_ptr<Pool<RedisConnection>>& pool = pools_[node.Name()];
  if (!pool) {
    pool = std::make_unique<Pool<RedisConnection>>(
        options_.pool_size, options_.acquire_timeout,
        [this, node]() -> Result<std::unique_ptr<RedisConnection>> {
          redisContext* c = redisConnectWithTimeout(node.host.c_str(), node.port,
                                                    ToTimeval(options_.connect_timeout));
          auto conn = std::make_unique<RedisConnection>(c);
          if (!c) return Status(Code::kUnavailable, "redis: out of memory");
          if (c->err) return Status(Code::kUnavailable, std::string("redis: ") + c->errstr);
          if (redisSetTimeout(c, ToTimeval(options_.command_timeout)) != REDIS_OK)
            return Status(Code::kUnavailable, "redis: cannot set timeout");
          return conn;
        });
  }
  return *pool;
}

Result<RedisReply> RedisClient::CommandOn(const RedisEndpoint& node,
                                          const std::vector<std::string>& argv, bool asking) {
  auto lease = PoolFor(node).Acquire();
  if (!lease.ok()) return lease.status();
  redisContext* c = lease.value()->get();
  if (asking) {
    auto* ok = static_cast<redisReply*>(redisCommand(c, "ASKING"));
    if (!ok) {
      const std::string why = c->errstr;
      lease.value().Discard();
      return Status(Code::kUnavailable, "redis: " + why);
    }
    freeReplyObject(ok);
  }
  std::vector<const char*> args;
  std::vector<size_t> lengths;
  for (const auto& a : argv) {
    args.push_back(a.data());
    lengths.push_back(a.size());
  }
  auto* reply = static_cast<redisReply*>(
      redisCommandArgv(c, static_cast<int>(args.size()), args.data(), lengths.data()));
  if (!reply) {
    // Timeout or broken connection: its state is unknown, so it is never reused.
    const std::string why = c->errstr;
    lease.value().Discard();
    return Status(Code::kUnavailable, "redis: " + why);
  }
  std::unique_ptr<redisReply, decltype(&freeReplyObject)> owned(reply, &freeReplyObject);
  if (reply->type == REDIS_REPLY_ERROR)
    return Status(Code::kInternal, std::string(reply->str, reply->len));
  return Convert(reply);
}

namespace {

bool IsNoScript(const Status& s) {
  return s.code() == Code::kInternal && s.message().rfind("NOSCRIPT", 0) == 0;
}

std::optional<RedisRedirect> RedirectOf(const Status& s) {
  if (s.code() != Code::kInternal) return std::nullopt;
  return ParseRedisRedirect(s.message());
}

}  // namespace

Result<RedisReply> RedisClient::Call(const std::vector<std::string>& argv,
                                     const RedisScript* script) {
  RedisEndpoint node = NodeFor(argv);
  bool asking = false;
  bool reloaded = false;
  for (int redirects = 0;; ++redirects) {
    auto r = CommandOn(node, argv, asking);
    if (r.ok()) return r;
    if (auto redirect = RedirectOf(r.status())) {
      if (!redirect->ask) RequestRefresh();  // the slot moved for good: learn the map again
      if (redirects >= kMaxRedirects)
        return Status(Code::kUnavailable,
                      "redis: too many redirects (" + r.status().message() + ")");
      node = redirect->to;
      asking = redirect->ask;
      continue;
    }
    if (script && IsNoScript(r.status()) && !reloaded) {
      // This node lost its script cache (restart, failover, SCRIPT FLUSH): load it there,
      // once per call.
      reloaded = true;
      auto loaded = CommandOn(node, {"SCRIPT", "LOAD", script->body}, false);
      if (!loaded.ok()) return loaded.status();
      continue;
    }
    if (r.status().code() == Code::kUnavailable && cluster()) RequestRefresh();
    return r;
  }
}

Result<RedisReply> RedisClient::Command(const std::vector<std::string>& argv) {
  return Call(argv, nullptr);
}

Result<RedisReply> RedisClient::Eval(const RedisScript& script,
                                     const std::vector<std::string>& keys,
                                     const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"EVALSHA", script.sha1, std::to_string(keys.size())};
  argv.insert(argv.end(), keys.begin(), keys.end());
  argv.insert(argv.end(), args.begin(), args.end());
  return Call(argv, &script);
}

Status RedisClient::Ping() {
  auto map = Slots();
  if (!map) {
    auto r = Command({"PING"});
    return r.ok() ? Status::Ok() : r.status();
  }
  Status last(Code::kUnavailable, "redis: no master");
  for (const RedisEndpoint& master : map->masters) {
    auto r = CommandOn(master, {"PING"}, false);
    if (r.ok()) return Status::Ok();
    last = r.status();
  }
  RequestRefresh();
  return last;
}

void RedisClient::RequestRefresh() {
  std::lock_guard lock(refresh_mu_);
  if (stopping_) return;
  refresh_wanted_ = true;
  if (!refresher_.joinable()) refresher_ = std::thread([this] { RefreshLoop(); });
  refresh_cv_.notify_all();
}

void RedisClient::RefreshLoop() {
  std::unique_lock lock(refresh_mu_);
  while (!stopping_) {
    refresh_cv_.wait_for(lock, kRefreshInterval, [this] { return stopping_ || refresh_wanted_; });
    if (stopping_) return;
    refresh_wanted_ = false;
    lock.unlock();
    (void)RefreshSlots();  // a failure keeps the map it had; the next request tries again
    lock.lock();
    refresh_cv_.wait_for(lock, kMinRefreshGap, [this] { return stopping_; });
  }
}

Status RedisClient::RefreshSlots() {
  Status last(Code::kUnavailable, "redis: no node to ask");
  for (const RedisEndpoint& node : Nodes()) {
    auto reply = CommandOn(node, {"CLUSTER", "SLOTS"}, false);
    if (!reply.ok()) {
      last = reply.status();
      continue;
    }
    auto map = ParseClusterSlots(reply.value());
    if (!map.ok()) {
      last = map.status();
      continue;
    }
    std::lock_guard lock(mu_);
    slots_ = std::make_shared<const RedisSlotMap>(std::move(map.value()));
    return Status::Ok();
  }
  return last;
}

}  // namespace boxoffice

// ---------------------------------------------------------------------------------------
// The loop transport: hiredis's async context on the loop.

namespace boxoffice {

// One loop's connection. Everything here runs on that loop's thread.
//
// hiredis drives the protocol and asks, through its ev hooks, to be told when the socket
// is readable or writable; an Asio descriptor on the same socket waits for that and calls
// redisAsyncHandleRead/Write. The descriptor never owns the socket (hiredis closes it): it
// is released in the cleanup hook, which hiredis calls before freeing the context, on
// every path (an error it read, a failed connect, our Drop). Each context gets a new
// generation, so a wait armed for a context that is gone does nothing when it fires.
class RedisLoopConnection {
 public:
  RedisLoopConnection(io::asio::io_context& context, const RedisOptions& options)
      : context_(context), options_(options) {}
  ~RedisLoopConnection() { Drop(generation_); }
  RedisLoopConnection(const RedisLoopConnection&) = delete;
  RedisLoopConnection& operator=(const RedisLoopConnection&) = delete;

  io::asio::io_context& context() { return context_; }

  // Queues the call on the connection (opening one if needed); its reply completes it.
  void Send(const RedisPending& call) {
    if (!ac_ && !Connect()) {
      call->reply.Set(Status(Code::kUnavailable, "redis: cannot connect: " + last_error_));
      return;
    }
    std::vector<const char*> args;
    std::vector<size_t> lengths;
    args.reserve(call->argv.size());
    lengths.reserve(call->argv.size());
    for (const auto& a : call->argv) {
      args.push_back(a.data());
      lengths.push_back(a.size());
    }
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

  // Drops the context that carried `generation`, if it is still the current one: every
  // call on it fails with kUnavailable.
  void Drop(uint64_t generation) {
    if (ac_ && generation == generation_) redisAsyncFree(ac_);  // calls Cleanup
  }

 private:
  bool Connect() {
    // A refused connect is retried no sooner than the connect timeout, not on every call.
    const auto now = std::chrono::steady_clock::now();
    if (now < retry_at_) return false;
    redisAsyncContext* ac = redisAsyncConnect(options_.host.c_str(), options_.port);
    if (!ac || ac->err) {
      last_error_ = ac ? ac->errstr : "out of memory";
      if (ac) redisAsyncFree(ac);
      retry_at_ = now + options_.connect_timeout;
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
        self->retry_at_ = std::chrono::steady_clock::now() + self->options_.connect_timeout;
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
    const auto* reply = static_cast<const redisReply*>(raw);
    RedisCall& call = **owner;
    if (!reply) {
      call.reply.Set(Status(Code::kUnavailable, "redis: connection lost"));
    } else if (reply->type == REDIS_REPLY_ERROR) {
      call.reply.Set(Status(Code::kInternal, std::string(reply->str, reply->len)));
    } else {
      call.reply.Set(Convert(reply));
    }
  }

  io::asio::io_context& context_;
  const RedisOptions options_;
  redisAsyncContext* ac_ = nullptr;
  std::unique_ptr<io::asio::posix::stream_descriptor> descriptor_;
  uint64_t generation_ = 0;
  bool want_read_ = false;
  bool want_write_ = false;
  bool read_armed_ = false;
  bool write_armed_ = false;
  std::chrono::steady_clock::time_point retry_at_{};
  std::string last_error_;
};

// A loop's connections, one per node it has sent to. Bounded by the cluster's size: nodes
// come from CLUSTER SLOTS and redirects, never from requests.
struct RedisLoopConnections {
  RedisLoopConnections(io::asio::io_context& context, const RedisOptions& options)
      : context(context), options(options) {}
  RedisLoopConnection* For(const RedisEndpoint& node) {
    std::unique_ptr<RedisLoopConnection>& c = by_node[node.Name()];
    if (!c) {
      RedisOptions o = options;
      o.host = node.host;
      o.port = node.port;
      c = std::make_unique<RedisLoopConnection>(context, o);
    }
    return c.get();
  }
  io::asio::io_context& context;
  const RedisOptions options;
  std::map<std::string, std::unique_ptr<RedisLoopConnection>> by_node;
};

RedisPending RedisClient::SendTo(const RedisEndpoint& node, std::vector<std::string> argv,
                                 const RedisScript* script, bool asking, int redirects) {
  auto call = std::make_shared<RedisCall>();
  call->script = script;
  call->argv = std::move(argv);
  call->node = node;
  call->asking = asking;
  call->redirects = redirects;
  RedisLoopConnections* loop = loop_connections_.Get([this](io::asio::io_context& context) {
    return std::make_unique<RedisLoopConnections>(context, options_);
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
    // No answer in time: the connection's state is unknown, so it is never used again.
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

}  // namespace boxoffice
