// Service: what `boxoffice serve` runs, wired from its flags: the store, the hold path's
// engines (Redis or in process), the services, the seat-map cache and streams, the routes
// and the HTTP server. Only this file and commands.cc know the concrete parts.
//
// Open builds everything and listens on nothing; Start listens; Stop ends the server and the
// background rounds the service owns (the waiting rooms). The per-database jobs (sweeper,
// relay, refunds, reconciler) are not part of it: `serve` starts them beside it, and the
// route-level fuzz target (fuzz/fuzz_routes.cc) runs the same service without them.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "api/seat_map_cache.h"
#include "api/seat_streams.h"
#include "api/web_app.h"
#include "app/config.h"
#include "core/clock.h"
#include "core/metrics.h"
#include "gate/rate_limiter.h"
#include "gate/redis_client.h"
#include "gate/seat_events.h"
#include "gate/seat_gate.h"
#include "gate/waiting_room.h"
#include "holds/admission.h"
#include "holds/hold_service.h"
#include "http/router.h"
#include "http/server.h"
#include "jobs/outbox_relay.h"
#include "payments/checkout.h"
#include "payments/gateway.h"
#include "payments/settlement.h"

namespace boxoffice::app {

// Flags every subcommand that opens the database shares.
struct Common {
  StoreConfig store;
  std::string jwt_secret;
};

// A JWT secret shorter than this is refused: HS256 wants at least 256 bits of key, and a
// short secret can be brute-forced offline from any token.
inline constexpr size_t kMinJwtSecretLength = 32;
inline constexpr size_t kMinGatewaySecretLength = 16;  // a guessable secret forges payments

struct ServeFlags {
  Common common;
  std::string listen = "127.0.0.1:8080";
  std::string gateway_secret;
  std::string ticket_secret;  // empty: TicketSigner::DeriveSecret(jwt_secret)
  std::string smtp;           // empty: no e-mail is sent
  std::string mail_from = "boxoffice@localhost";
  Millis mail_lease{45'000};
  Millis mail_max_age{24 * 3'600'000};
  std::string events_file = "var/events.jsonl";
  std::string gateway_url = "http://127.0.0.1:9090";
  std::string public_url;  // empty: http://LISTEN
  std::string redis_url;   // empty: no seat gate (embedded profile)
  Millis redis_timeout{50};
  int holds_per_minute = 5;
  std::string kafka;  // empty: events go to events_file
  Millis outbox_lease = OutboxRelay::kLease;
  Millis payment_ttl{0};  // 0: 8 minutes, or 4/5 of a shorter --hold-ttl
  Millis checkout_lease{30'000};
  Millis reconcile_after{15 * 60'000};
  Millis reconcile_interval{60'000};
  Millis hold_ttl{10 * 60'000};
  Millis hold_max_lifetime{20 * 60'000};
  Millis sweep_interval{15'000};
  size_t io_threads = std::max(1u, std::thread::hardware_concurrency());
  size_t workers = 8;
  size_t gateway_calls = 256;
  size_t max_connections = 10'000;
  size_t max_streams = 1'000;
  size_t seat_map_cache_bytes = api::SeatMapCache::kDefaultMaxBytes;
  Millis sse_heartbeat{15'000};
};

// The payment session's length: the flag, or 8 minutes (4/5 of a shorter hold). The session
// ends before the hold does, so a callback has a margin (API.md: 8 of 10 min).
Millis PaymentTtl(const ServeFlags& f);
// The key of ticket codes: --ticket-secret, or one derived from --jwt-secret.
std::string TicketSecret(const ServeFlags& f);
// What is wrong with serve's flags (the first thing), or "".
std::string ServeFlagsError(const ServeFlags& f);
// Parses HOST:PORT into options; false (logged) when malformed.
bool ParseListen(const std::string& listen, http::ServerOptions* options);

class Service {
 public:
  // Checks the flags, opens and migrates the store, and wires the rest; nothing listens
  // yet. kInvalid for bad flags (logged), else the store's error.
  static Result<std::unique_ptr<Service>> Open(const ServeFlags& f, const Clock* clock);
  ~Service();

  // Listens (and starts the waiting rooms' rounds); false (logged) if it cannot.
  bool Start();
  // Stops listening (in-flight requests finish) and the rounds. Idempotent.
  void Stop();
  unsigned short port() const { return server_->port(); }
  // The base URL the gateway and e-mail links use: --public-url, or this listener (once
  // Start has run).
  const std::string& public_url() const { return public_url_; }
  const http::ServerOptions& server_options() const { return server_options_; }

  Stores& stores() { return stores_; }
  Store* store() { return stores_.store.get(); }
  Metrics* metrics() { return &metrics_; }
  Gateway* gateway() { return gateway_.get(); }
  PaymentService* payments() { return payments_.get(); }
  SeatEvents* seat_events() { return seat_events_.get(); }
  bool has_redis() const { return redis_ != nullptr; }

 private:
  Service(const ServeFlags& f, const Clock* clock, Stores stores);

  const ServeFlags flags_;
  const Clock* clock_;
  std::string public_url_;
  http::ServerOptions server_options_;
  Stores stores_;
  Metrics metrics_;
  // The hold path's engines: in Redis with --redis (shared by every instance), else in
  // process. One Redis client serves the rate limit, the gate and the waiting room: on an
  // I/O loop they share that loop's connection, so a hold's rate limit and claim leave in
  // one write.
  std::unique_ptr<RedisClient> redis_;
  std::unique_ptr<SeatGate> gate_;  // null without Redis
  std::unique_ptr<RateLimiter> limiter_;
  std::unique_ptr<SeatEvents> seat_events_;
  std::unique_ptr<WaitingRoom> room_;
  std::unique_ptr<Admission> admission_;
  std::unique_ptr<api::SeatMapCache> seat_maps_;
  std::unique_ptr<api::SeatMapCacheView> seat_map_view_;
  uint64_t cache_subscription_ = 0;
  // After what it is given (HoldServiceDeps), so it ends, its follow-ups thread joined,
  // before them; before the payments, whose confirmations call into it.
  std::unique_ptr<HoldService> holds_;
  std::unique_ptr<HttpGateway> gateway_;
  std::unique_ptr<CheckoutService> checkout_;
  std::unique_ptr<PaymentService> payments_;
  std::unique_ptr<api::SeatStreams> seat_streams_;
  http::Router router_;
  api::WebApp web_app_;
  std::unique_ptr<http::Server> server_;
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace boxoffice::app
