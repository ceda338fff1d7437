#include "gate/redis_client.h"

#include "core/status.h"
#include "gate/redis_parts.h"

namespace boxoffice {

bool IsNumericHost(const std::string& host) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

RedisReply ConvertRedisReply(const redisReply* r) {
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
      for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(ConvertRedisReply(r->element[i]));
      break;
    default:
      break;
  }
  return out;
}

namespace {

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
  // Whatever the resolver said: a connection has 1..kMaxRedisAddresses addresses to try.
  BOX_ASSERT(!found.ok() || (!found->empty() && found->size() <= kMaxRedisAddresses));
  return found;
}

timeval ToTimeval(Millis ms) {
  return timeval{static_cast<time_t>(ms.count() / 1000),
                 static_cast<suseconds_t>((ms.count() % 1000) * 1000)};
}

}  // namespace

void RedisResolver::Resolve(std::string host, std::shared_ptr<io::LoopHandle> loop, Done done) {
  io::asio::thread_pool* thread = nullptr;
  {
    MutexLock lock(mu_);
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

bool RedisClient::cluster() const { return Slots() != nullptr; }

std::shared_ptr<const RedisSlotMap> RedisClient::Slots() const {
  MutexLock lock(mu_);
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
    if (master >= 0) {
      // ParseClusterSlots stores indices it took from masters (an index past int16 wraps
      // to a negative or a smaller one, never a larger one).
      BOX_ASSERT(static_cast<size_t>(master) < map->masters.size());
      return map->masters[master];
    }
    return seed_;  // a slot no master serves: the node answers CLUSTERDOWN or MOVED
  }
  BOX_ASSERT(!map->masters.empty());  // ParseClusterSlots refuses a map without a master
  return map->masters.front();        // a command without keys: any master
}

Pool<RedisConnection>& RedisClient::PoolFor(const RedisEndpoint& node) {
  MutexLock lock(mu_);
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
  BOX_ASSERT(args.size() == argv.size() && lengths.size() == argv.size());
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
  return ConvertRedisReply(reply);
}

bool IsNoScript(const Status& s) {
  return s.code() == Code::kInternal && s.message().rfind("NOSCRIPT", 0) == 0;
}

std::optional<RedisRedirect> RedirectOf(const Status& s) {
  if (s.code() != Code::kInternal) return std::nullopt;
  return ParseRedisRedirect(s.message());
}

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
    MutexLock lock(mu_);
    slots_ = std::make_shared<const RedisSlotMap>(std::move(map.value()));
    return Status::Ok();
  }
  return last;
}

}  // namespace boxoffice
