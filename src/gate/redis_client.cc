#include "gate/redis_client.h"

#include <arpa/inet.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <netdb.h>
#include <openssl/sha.h>

#include <algorithm>
#include <charconv>
#include <exception>

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

// The loops' resolver: a thread of the client's, started by the first name a loop must
// resolve, that runs the blocking resolve and hands the answer back to the loop that
// asked. One thread serves every loop: names are few (the node given and the cluster's
// nodes), each resolved once per loop and again only after its addresses failed.
// Destroying it abandons the resolves not started and waits for the one running.
class RedisResolver {
 public:
  using Done = std::function<void(Result<std::vector<std::string>>)>;
  explicit RedisResolver(RedisResolve resolve) : resolve_(std::move(resolve)) {}

  // From a loop: resolves `host` off it, then calls done(addresses) on that loop (never,
  // if the loop has ended by then).
  void Resolve(std::string host, std::shared_ptr<io::LoopHandle> loop, Done done);

 private:
  const RedisResolve resolve_;
  std::mutex mu_;  // a leaf: guards the thread's start
  std::unique_ptr<io::asio::thread_pool> thread_;
};

namespace {

// Whether `host` is an address already (IPv4 or IPv6): then no resolver is asked.
bool IsNumericHost(const std::string& host) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

// The addresses to connect to for `host`: itself when numeric, else what `resolve` says.
// Blocks for a name: off the loops only.
Result<std::vector<std::string>> AddressesOf(const RedisResolve& resolve, const std::string& host) {
  if (IsNumericHost(host)) return std::vector<std::string>{host};
  Result<std::vector<std::string>> found = std::vector<std::string>{};
  try {
    found = resolve(host);
  } catch (const std::exception& e) {  // a resolver's failure is the node's, never the loop's
    found = Status(Code::kUnavailable, "redis: cannot resolve " + host + ": " + e.what());
  }
  if (found.ok() && found->empty())
    return Status(Code::kUnavailable, "redis: no address for " + host);
  if (found.ok() && found->size() > kMaxRedisAddresses) found->resize(kMaxRedisAddresses);
  return found;
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

void RedisResolver::Resolve(std::string host, std::shared_ptr<io::LoopHandle> loop, Done done) {
  io::asio::thread_pool* thread = nullptr;
  {
    std::lock_guard lock(mu_);
    if (!thread_) thread_ = std::make_unique<io::asio::thread_pool>(1);
    thread = thread_.get();
  }
  io::asio::post(*thread, [resolve = resolve_, host = std::move(host), loop = std::move(loop),
                           done = std::move(done)]() mutable {
    auto found = AddressesOf(resolve, host);
    loop->Post(
        [done = std::move(done), found = std::move(found)]() mutable { done(std::move(found)); });
  });
}

Result<std::vector<std::string>> ResolveRedisHost(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found); rc != 0 || !found) {
    return Status(Code::kUnavailable, "redis: cannot resolve " + host + ": " +
                                          (rc != 0 ? gai_strerror(rc) : "no address"));
  }
  std::vector<std::string> v4, v6;
  for (const addrinfo* a = found; a; a = a->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    const void* addr = nullptr;
    if (a->ai_family == AF_INET) {
      addr = &reinterpret_cast<const sockaddr_in*>(a->ai_addr)->sin_addr;
    } else if (a->ai_family == AF_INET6) {
      addr = &reinterpret_cast<const sockaddr_in6*>(a->ai_addr)->sin6_addr;
    } else {
      continue;
    }
    if (!inet_ntop(a->ai_family, addr, text, sizeof text)) continue;
    std::vector<std::string>& list = a->ai_family == AF_INET ? v4 : v6;
    if (std::find(list.begin(), list.end(), text) == list.end()) list.emplace_back(text);
  }
  freeaddrinfo(found);
  v4.insert(v4.end(), v6.begin(), v6.end());
  if (v4.empty()) return Status(Code::kUnavailable, "redis: no address for " + host);
  if (v4.size() > kMaxRedisAddresses) v4.resize(kMaxRedisAddresses);
  return v4;
}

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
    pool = std::make_unique<Pool<RedisConnection>>(options_.pool_size, options_.acquire_timeout,
                                                   [this, node] { return ConnectBlocking(node); });
  }
  return *pool;
}

Result<std::unique_ptr<RedisConnection>> RedisClient::ConnectBlocking(const RedisEndpoint& node) {
  // Off the loops (jobs, tests, the refresher, the blocking pool): a name is resolved
  // inline, through the same resolve function as the loops use.
  auto addresses = AddressesOf(options_.resolve, node.host);
  if (!addresses.ok()) return addresses.status();
  Status last(Code::kUnavailable, "redis: no address for " + node.host);
  for (const std::string& address : addresses.value()) {
    // Numeric: hiredis asks no resolver.
    redisContext* c =
        redisConnectWithTimeout(address.c_str(), node.port, ToTimeval(options_.connect_timeout));
    auto conn = std::make_unique<RedisConnection>(c);
    if (!c) return Status(Code::kUnavailable, "redis: out of memory");
    if (c->err) {
      last = Status(Code::kUnavailable, std::string("redis: ") + c->errstr);
      continue;
    }
    if (redisSetTimeout(c, ToTimeval(options_.command_timeout)) != REDIS_OK)
      return Status(Code::kUnavailable, "redis: cannot set timeout");
    return conn;
  }
  return last;
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
