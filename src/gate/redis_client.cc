#include "gate/redis_client.h"

#include <hiredis/hiredis.h>
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
    : options_(std::move(options)),
      pool_(options_.pool_size, options_.acquire_timeout,
            [this]() -> Result<std::unique_ptr<RedisConnection>> {
              redisContext* c = redisConnectWithTimeout(options_.host.c_str(), options_.port,
                                                        ToTimeval(options_.connect_timeout));
              auto conn = std::make_unique<RedisConnection>(c);
              if (!c) return Status(Code::kUnavailable, "redis: out of memory");
              if (c->err) return Status(Code::kUnavailable, std::string("redis: ") + c->errstr);
              if (redisSetTimeout(c, ToTimeval(options_.command_timeout)) != REDIS_OK)
                return Status(Code::kUnavailable, "redis: cannot set timeout");
              return conn;
            }) {}

RedisClient::~RedisClient() = default;

Result<RedisReply> RedisClient::Command(const std::vector<std::string>& argv) {
  auto lease = pool_.Acquire();
  if (!lease.ok()) return lease.status();
  std::vector<const char*> args;
  std::vector<size_t> lengths;
  for (const auto& a : argv) {
    args.push_back(a.data());
    lengths.push_back(a.size());
  }
  redisContext* c = lease.value()->get();
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

Result<RedisReply> RedisClient::Eval(const RedisScript& script,
                                     const std::vector<std::string>& keys,
                                     const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"EVALSHA", script.sha1, std::to_string(keys.size())};
  argv.insert(argv.end(), keys.begin(), keys.end());
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = Command(argv);
  if (r.ok() || r.status().code() != Code::kInternal ||
      r.status().message().rfind("NOSCRIPT", 0) != 0) {
    return r;
  }
  // Redis lost its script cache (restart, failover, SCRIPT FLUSH): load it and call again.
  auto loaded = Command({"SCRIPT", "LOAD", script.body});
  if (!loaded.ok()) return loaded.status();
  return Command(argv);
}

}  // namespace boxoffice
