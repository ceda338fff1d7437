// The Redis client's private parts, shared by its two transports: the blocking one
// (redis_client.cc: pools of hiredis connections, cluster slots) and the loop one
// (redis_loop.cc: hiredis's async context on each I/O loop). Not for other includes.
#pragma once

#include <arpa/inet.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <netdb.h>
#include <openssl/sha.h>

#include <algorithm>
#include <charconv>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/sync.h"
#include "gate/redis_client.h"

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
  Mutex mu_;  // a leaf: guards the thread's start
  std::unique_ptr<io::asio::thread_pool> thread_ BOX_GUARDED_BY(mu_);
};

// Whether `host` is an address already (IPv4 or IPv6): then no resolver is asked.
bool IsNumericHost(const std::string& host);
// A hiredis reply as ours (integers, strings and statuses, arrays of them).
RedisReply ConvertRedisReply(const redisReply* r);
// Whether an error is Redis's NOSCRIPT (the node lost its script cache: load it again).
bool IsNoScript(const Status& s);
// The MOVED or ASK an error says, if it is one.
std::optional<RedisRedirect> RedirectOf(const Status& s);

}  // namespace boxoffice
