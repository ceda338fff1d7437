// RedisClient: the few Redis calls boxoffice makes, over a small pool of blocking hiredis
// connections with short timeouts.
//
// Why blocking connections in a pool rather than async hiredis on the Asio loop: every
// Redis call boxoffice makes sits on the path of a hold, which already runs on a worker
// thread (it goes on to the store's conditional UPDATE on the same thread). The worker
// does one EVALSHA round trip (tens of microseconds on loopback) and continues; no thread
// is added per request, and the pool is as large as the worker pool, so a worker never
// waits for a connection. An async client would free the worker during that round trip
// only to have it block on the database right after.
//
// Every call is bounded: connect and command timeouts (50 ms by default). A connection
// that failed is discarded and a fresh one is opened by the next call.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/pool.h"
#include "core/status.h"

struct redisContext;

namespace boxoffice {

struct RedisOptions {
  std::string host = "127.0.0.1";
  int port = 6379;
  Millis connect_timeout{50};
  Millis command_timeout{50};
  size_t pool_size = 8;
  Millis acquire_timeout{50};
};

// redis://HOST:PORT (no credentials, no database number).
std::optional<RedisOptions> ParseRedisUrl(const std::string& url);

// A reply, reduced to what the scripts return: integers, strings, nil and arrays of them.
struct RedisReply {
  enum class Type { kNil, kInteger, kString, kArray };
  Type type = Type::kNil;
  int64_t integer = 0;
  std::string text;
  std::vector<RedisReply> elements;
};

// A Lua script, called by its SHA1 (EVALSHA) and loaded again when Redis answers NOSCRIPT
// (after a restart, a failover or SCRIPT FLUSH).
struct RedisScript {
  explicit RedisScript(std::string body);
  std::string body;
  std::string sha1;
};

class RedisConnection;

class RedisClient {
 public:
  explicit RedisClient(RedisOptions options);
  ~RedisClient();

  // A command; kUnavailable when Redis does not answer in time or the connection broke,
  // kInternal for an error reply.
  Result<RedisReply> Command(const std::vector<std::string>& argv);
  Result<RedisReply> Eval(const RedisScript& script, const std::vector<std::string>& keys,
                          const std::vector<std::string>& args);

  const RedisOptions& options() const { return options_; }

 private:
  RedisOptions options_;
  Pool<RedisConnection> pool_;
};

}  // namespace boxoffice
