// RedisClient: the few Redis calls boxoffice makes, in two transports behind one client.
//
// On an I/O loop (io/loop.h), calls go out on that loop's own connection: hiredis's async
// context driven by the loop (an Asio descriptor on its socket), awaited by the request's
// coroutine. Every call sent before the coroutine next waits leaves in the same write
// (Redis pipelining): the hold path sends the rate limit and the gate claim together and
// pays one round trip for both. One connection per loop multiplexes every request of it;
// no thread waits on Redis.
//
// Off the loops (jobs, tests, command-line tools), calls use a small pool of blocking
// hiredis connections, so code written against Send/Await runs there unchanged.
//
// Every call is bounded: connect and command timeouts (50 ms by default). A connection
// that failed or let a call time out is dropped, failing what it carried with
// kUnavailable, and a fresh one is opened by the next call.
//
// Host names: no loop ever resolves one. hiredis resolves a name given to redisAsyncConnect
// synchronously (getaddrinfo), which on a loop would stall every request of it for as long
// as the resolver takes; so a loop's connection is only ever handed a numeric address. A
// name (the node given, a node CLUSTER SLOTS or a MOVED/ASK names) is resolved by the
// client's resolver thread, and the calls sent meanwhile wait in their connection, in
// order, for at most the connect timeout (then kUnavailable; the resolve goes on, and its
// answer serves the next connect). A numeric address is used as it is, without asking any
// resolver. A failed connect tries the name's next address; when all have failed the name
// is resolved again, so a node whose name moves is followed. The blocking transport runs
// off the loops and resolves inline, through the same resolve function.
//
// Redis Cluster: when the node given answers CLUSTER SLOTS (or any node answers MOVED),
// the client routes each call to the master of its key's slot (gate/redis_cluster.h),
// with a connection per master in each transport. MOVED sends the call on to the node it
// names and has the slot map read again (by a thread of the client, at most every
// kMinRefreshGap, and every kRefreshInterval anyway); ASK asks the node it names once,
// after ASKING. A node that does not answer fails its calls with kUnavailable, as a lone
// Redis would, and has the map read again: after a failover the promoted replica is found
// within a refresh. A script's keys must share a slot (the callers' keys carry hash tags).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/pool.h"
#include "core/status.h"
#include "core/sync.h"
#include "gate/redis_cluster.h"
#include "io/loop.h"

struct redisContext;

namespace boxoffice {

// Blocking: the numeric addresses of a host name, IPv4 first (as hiredis tries them).
using RedisResolve = std::function<Result<std::vector<std::string>>(const std::string& host)>;

struct RedisOptions {
  std::string host = "127.0.0.1";
  int port = 6379;
  Millis connect_timeout{50};
  Millis command_timeout{50};
  size_t pool_size = 8;
  Millis acquire_timeout{50};
  // How a name becomes addresses, in both transports; never called for a numeric address,
  // never on a loop thread, possibly from several threads at once. Empty:
  // ResolveRedisHost. Tests swap in a slow or failing one.
  RedisResolve resolve;
};

// redis://HOST:PORT (no credentials, no database number).
std::optional<RedisOptions> ParseRedisUrl(const std::string& url);

// getaddrinfo: at most kMaxRedisAddresses addresses of `host`, IPv4 first, then IPv6;
// kUnavailable when it has none. Blocks: call it off the loops.
constexpr size_t kMaxRedisAddresses = 4;  // tried in turn, each within the connect timeout
Result<std::vector<std::string>> ResolveRedisHost(const std::string& host);

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
class RedisLoopConnection;
struct RedisLoopConnections;
class RedisResolver;

// A call sent and not yet awaited.
struct RedisCall {
  io::Completion<Result<RedisReply>> reply;
  const RedisScript* script = nullptr;        // an EVALSHA: sent again after NOSCRIPT
  std::vector<std::string> argv;              // kept for that case and for redirects
  RedisLoopConnection* connection = nullptr;  // null: answered by the blocking transport
  uint64_t generation = 0;                    // of the connection's context that carries it
  RedisEndpoint node = {};                    // where it was sent
  bool asking = false;                        // sent after ASKING (an ASK redirect)
  int redirects = 0;                          // MOVED/ASK followed so far
};
using RedisPending = std::shared_ptr<RedisCall>;

class RedisClient {
 public:
  explicit RedisClient(RedisOptions options);
  ~RedisClient();

  // Blocking: a command; kUnavailable when Redis does not answer in time or the connection
  // broke, kInternal for an error reply.
  Result<RedisReply> Command(const std::vector<std::string>& argv);
  Result<RedisReply> Eval(const RedisScript& script, const std::vector<std::string>& keys,
                          const std::vector<std::string>& args);

  // Sends now: on a loop, into this loop's connection (it leaves with whatever else is sent
  // before the caller next waits); off the loops, the blocking call runs at once.
  RedisPending Send(std::vector<std::string> argv);
  RedisPending SendEval(const RedisScript& script, const std::vector<std::string>& keys,
                        const std::vector<std::string>& args);
  // The answer of a sent call, within the command timeout (then kUnavailable, and the
  // connection is dropped: its state is unknown; a call still waiting for its node's
  // address is then never sent). A script Redis lost is loaded and run again.
  io::asio::awaitable<Result<RedisReply>> Await(RedisPending call);
  // Awaits a sent call on the side and hands its answer to `done` (on a loop, from a
  // detached coroutine of that loop; off the loops, at once). For the calls that only tidy
  // up (a gate key's release or rearm) and need not delay the answer.
  void Aside(RedisPending call, std::function<void(Result<RedisReply>)> done);

  const RedisOptions& options() const { return options_; }

  // PING for readiness: a lone Redis, or every master of a cluster at once, OK while any of
  // them answers (a master failing over slows the gate for its slots; it must not make
  // every instance unready at once).
  Status Ping();
  io::asio::awaitable<Status> PingAsync();

  // Whether the node given belongs to a Redis Cluster (learned at construction, or from
  // the first MOVED).
  bool cluster() const;
  // Every node the client knows: the one given, then the cluster's (masters, replicas).
  std::vector<RedisEndpoint> Nodes() const;
  // Reads the slot map now (blocking; tests and the refresher).
  Status RefreshSlots();

  static constexpr int kMaxRedirects = 5;  // MOVED/ASK followed per call, then kUnavailable
  static constexpr Millis kMinRefreshGap{100};
  static constexpr Millis kRefreshInterval{5'000};

 private:
  RedisPending SendTo(const RedisEndpoint& node, std::vector<std::string> argv,
                      const RedisScript* script, bool asking, int redirects);
  io::asio::awaitable<void> AwaitAside(RedisPending call,
                                       std::function<void(Result<RedisReply>)> done);
  // Blocking: the call on `node`, following redirects and reloading a lost script.
  Result<RedisReply> Call(const std::vector<std::string>& argv, const RedisScript* script);
  Result<RedisReply> CommandOn(const RedisEndpoint& node, const std::vector<std::string>& argv,
                               bool asking);
  Pool<RedisConnection>& PoolFor(const RedisEndpoint& node);
  // Blocking (off the loops): one connection to `node`, trying each of its addresses.
  Result<std::unique_ptr<RedisConnection>> ConnectBlocking(const RedisEndpoint& node);
  RedisEndpoint NodeFor(const std::vector<std::string>& argv) const;
  std::shared_ptr<const RedisSlotMap> Slots() const;
  // A MOVED or a node that failed: the map is read again soon (starts the refresher).
  void RequestRefresh();
  void RefreshLoop();

  RedisOptions options_;  // its resolve is never empty (ResolveRedisHost by default)
  RedisEndpoint seed_;    // the node given, as given: a name is resolved at each connect
  std::unique_ptr<RedisResolver> resolver_;  // the loops' names, resolved off the loops

  mutable Mutex mu_;                      // guards the two below; a leaf
  std::shared_ptr<const RedisSlotMap> slots_ BOX_GUARDED_BY(mu_);  // null: standalone
  std::map<std::string, std::unique_ptr<Pool<RedisConnection>>> pools_ BOX_GUARDED_BY(mu_);

  io::PerLoop<RedisLoopConnections> loop_connections_;

  std::mutex refresh_mu_;  // guards the refresher's state; never held with mu_ taken
  std::condition_variable refresh_cv_;
  bool refresh_wanted_ = false;
  bool stopping_ = false;
  std::thread refresher_;  // started when the client learns it talks to a cluster
};

}  // namespace boxoffice
