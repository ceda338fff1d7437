#include "app/service.h"

#include "api/handlers.h"
#include "core/log.h"
#include "core/text.h"
#include "core/ticket_code.h"
#include "http/client.h"
#include "jobs/mailer.h"

namespace boxoffice::app {
namespace {

constexpr Millis kSeatMapMaxAge{1'000};  // API.md's Cache-Control max-age; 2 s staleness bound
// The oldest seat map a refused hold's alternatives (and a dispute of the gate's "no" under
// the seat rules) are taken from; a map read reloads it every second while customers look.
constexpr Millis kAlternativesMaxAge{10'000};
constexpr Millis kWaitingRoomInterval{1'000};  // rooms advance and settings refresh this often

// Redis from --redis (nullopt without it); false (logged) when the URL is malformed.
bool RedisFromFlags(const ServeFlags& f, std::optional<RedisOptions>* redis) {
  if (f.redis_url.empty()) return true;
  *redis = ParseRedisUrl(f.redis_url);
  if (!*redis) {
    LogError("--redis must be redis://HOST:PORT");
    return false;
  }
  // Blocking connections (the loops have their own): one per worker, and a few for the
  // jobs that call the gate and the waiting room (admission rounds, the reconciler's
  // confirmations), so no worker waits for one.
  (*redis)->pool_size = f.workers + 4;
  (*redis)->connect_timeout = (*redis)->command_timeout = (*redis)->acquire_timeout =
      f.redis_timeout;
  return true;
}

// The HTTP server's options from the flags; false (logged) when --listen is malformed.
bool ServerOptionsFromFlags(const ServeFlags& f, http::ServerOptions* options) {
  if (!ParseListen(f.listen, options)) return false;
  options->io_threads = f.io_threads;
  options->worker_threads = f.workers;
  options->max_connections = f.max_connections;
  options->stream_heartbeat = f.sse_heartbeat;
  return true;
}

CheckoutOptions CheckoutOptionsFromFlags(const ServeFlags& f) {
  CheckoutOptions checkout;
  checkout.hold_ttl = f.hold_ttl;
  checkout.hold_max_lifetime = f.hold_max_lifetime;
  checkout.payment_ttl = PaymentTtl(f);
  checkout.key_lease = f.checkout_lease;
  if (const char* crash_at = std::getenv("BOXOFFICE_TEST_CRASH_AT")) {
    checkout.crash_at = crash_at;  // test-only fault injection (tests/e2e)
  }
  return checkout;
}

}  // namespace

Millis PaymentTtl(const ServeFlags& f) {
  return f.payment_ttl > Millis(0) ? f.payment_ttl
                                   : std::min(Millis(8 * 60'000), f.hold_ttl * 4 / 5);
}

std::string TicketSecret(const ServeFlags& f) {
  return f.ticket_secret.empty() ? TicketSigner::DeriveSecret(f.common.jwt_secret)
                                 : f.ticket_secret;
}

std::string ServeFlagsError(const ServeFlags& f) {
  if (f.common.jwt_secret.size() < kMinJwtSecretLength) {
    return "--jwt-secret must be at least 32 characters";
  }
  if (!f.ticket_secret.empty() && f.ticket_secret.size() < kMinTicketSecretLength) {
    return "--ticket-secret must be at least 32 characters";
  }
  if (!f.smtp.empty() && !SmtpTransport::IsSmtpUrl(f.smtp)) {
    return "--smtp must be smtp://HOST:PORT or smtps://HOST:PORT";
  }
  if (!IsValidEmail(f.mail_from)) return "--mail-from must be an e-mail address";
  if (f.mail_lease < Millis(2'000)) return "--mail-lease must be at least 2s";
  if (f.mail_max_age < Millis(60'000)) return "--mail-max-age must be at least 1m";
  if (!f.gateway_secret.empty() && f.gateway_secret.size() < kMinGatewaySecretLength) {
    return "--gateway-secret must be at least 16 characters";
  }
  if (f.sweep_interval <= Millis(0) || f.reconcile_interval <= Millis(0)) {
    return "--sweep-interval and --reconcile-interval must be positive";
  }
  if (!http::ParseHttpUrl(f.gateway_url)) {
    return "--gateway-url must be http://HOST:PORT[/PATH]";
  }
  if (f.hold_ttl <= Millis(0) || f.hold_max_lifetime < f.hold_ttl) {
    return "--hold-ttl must be positive and at most --hold-max-lifetime";
  }
  const Millis payment_ttl = PaymentTtl(f);
  if (payment_ttl <= Millis(0) || payment_ttl > f.hold_ttl) {
    return "--payment-ttl must be positive and at most --hold-ttl";
  }
  if (f.sse_heartbeat < Millis(100)) {
    return "--sse-heartbeat must be at least 100ms";
  }
  if (f.outbox_lease < Millis(2'000)) {
    return "--outbox-lease must be at least 2s";
  }
  if (f.checkout_lease < Millis(1'000)) {
    return "--checkout-lease must be at least 1s";
  }
  if (!f.public_url.empty() && !http::ParseHttpUrl(f.public_url)) {
    return "--public-url must be http://HOST:PORT[/PATH]";
  }
  return "";
}

bool ParseListen(const std::string& listen, http::ServerOptions* options) {
  const size_t colon = listen.rfind(':');
  try {
    if (colon == std::string::npos) throw std::invalid_argument("listen");
    const int port = std::stoi(listen.substr(colon + 1));
    if (port < 0 || port > 65535) throw std::out_of_range("port");
    options->host = listen.substr(0, colon);
    options->port = static_cast<unsigned short>(port);
    return true;
  } catch (const std::exception&) {
    LogError("--listen must be HOST:PORT");
    return false;
  }
}

Result<std::unique_ptr<Service>> Service::Open(const ServeFlags& f, const Clock* clock) {
  if (std::string why = ServeFlagsError(f); !why.empty()) {
    LogError(why);
    return Status(Code::kInvalid, why);
  }
  std::optional<RedisOptions> redis;
  if (!RedisFromFlags(f, &redis)) return Status(Code::kInvalid, "bad --redis");
  http::ServerOptions options;
  if (!ServerOptionsFromFlags(f, &options)) return Status(Code::kInvalid, "bad --listen");
  auto stores = OpenAndMigrate(f.common.store, clock);
  if (!stores.ok()) return stores.status();
  std::unique_ptr<Service> service(new Service(f, clock, std::move(stores.value())));
  service->server_options_ = options;
  Service& s = *service;
  Store* store = s.store();
  Metrics* metrics = &s.metrics_;
  if (redis) {
    s.redis_ = std::make_unique<RedisClient>(*redis);
    s.gate_ = std::make_unique<RedisSeatGate>(s.redis_.get(), RedisGateOptions{}, metrics);
    s.limiter_ =
        std::make_unique<RedisRateLimiter>(f.holds_per_minute, s.redis_.get(), clock, metrics);
    s.seat_events_ = std::make_unique<RedisSeatEvents>(*redis, metrics);
    s.room_ = std::make_unique<RedisWaitingRoom>(s.redis_.get());
  } else {
    s.limiter_ = std::make_unique<InProcessRateLimiter>(f.holds_per_minute, clock);
    s.seat_events_ = std::make_unique<InProcessSeatEvents>();
    s.room_ = std::make_unique<InProcessWaitingRoom>();
  }
  SeatGate* gate = s.gate_.get();
  s.admission_ =
      std::make_unique<Admission>(s.room_.get(), store, f.common.jwt_secret, clock, metrics);
  s.seat_maps_ = std::make_unique<api::SeatMapCache>(
      [store](int64_t id) { return store->GetSeatMap(id); }, clock, kSeatMapMaxAge, metrics,
      [store](int64_t id) { return store->GetSeatMapAsync(id); }, f.seat_map_cache_bytes);
  api::SeatMapCache* seat_maps = s.seat_maps_.get();
  s.seat_map_view_ = std::make_unique<api::SeatMapCacheView>(seat_maps, clock, kAlternativesMaxAge);
  s.cache_subscription_ =
      s.seat_events_->Subscribe([seat_maps](const SeatChange& change) { seat_maps->Hear(change); });
  HoldServiceDeps hold_deps;
  hold_deps.store = store;
  hold_deps.metrics = metrics;
  hold_deps.gate = gate;
  hold_deps.limiter = s.limiter_.get();
  hold_deps.holds_per_minute = f.holds_per_minute;
  hold_deps.events = s.seat_events_.get();
  hold_deps.admission = s.admission_.get();
  hold_deps.maps = s.seat_map_view_.get();
  s.holds_ = std::make_unique<HoldService>(hold_deps, HoldPolicy{f.hold_ttl, f.hold_max_lifetime});
  HttpGatewayOptions gateway_options;
  gateway_options.base_url = f.gateway_url;
  gateway_options.max_in_flight = f.gateway_calls;
  s.gateway_ = std::make_unique<HttpGateway>(gateway_options);
  s.checkout_ = std::make_unique<CheckoutService>(store, s.gateway_.get(),
                                                  CheckoutOptionsFromFlags(f), metrics, gate);
  // Callbacks and the reconciler settle payments alike; a confirmed booking's seats stay
  // behind the gate and the hold path hears of it.
  HoldService* holds = s.holds_.get();
  s.payments_ = std::make_unique<PaymentService>(
      store, metrics,
      [holds](const Booking& booking, bool first) { holds->BookingConfirmed(booking, first); });
  s.seat_streams_ =
      std::make_unique<api::SeatStreams>(s.seat_events_.get(), f.max_streams, metrics);
  api::ApiDeps deps;
  deps.store = store;
  deps.holds = holds;
  deps.checkout = s.checkout_.get();
  deps.payments = s.payments_.get();
  deps.gate = gate;
  deps.seat_maps = seat_maps;
  deps.seat_streams = s.seat_streams_.get();
  deps.admission = s.admission_.get();
  deps.metrics = metrics;
  deps.clock = clock;
  deps.jwt_secret = f.common.jwt_secret;
  deps.gateway_secret = f.gateway_secret;
  deps.ticket_secret = TicketSecret(f);
  api::RegisterRoutes(&s.router_, deps);
  s.web_app_.Register(&s.router_);
  s.server_ = std::make_unique<http::Server>(options, &s.router_, metrics);
  return service;
}

Service::Service(const ServeFlags& f, const Clock* clock, Stores stores)
    : flags_(f), clock_(clock), stores_(std::move(stores)) {}

Service::~Service() { Stop(); }

bool Service::Start() {
  admission_->Start(kWaitingRoomInterval);
  started_ = true;
  if (!server_->Start()) return false;
  // Where the gateway posts payment outcomes and sends the browser back: --public-url, or
  // this listener.
  public_url_ = flags_.public_url.empty()
                    ? "http://" + server_options_.host + ":" + std::to_string(port())
                    : flags_.public_url;
  checkout_->SetPublicUrl(public_url_);
  return true;
}

void Service::Stop() {
  if (stopped_) return;
  stopped_ = true;
  server_->Stop();
  seat_events_->Unsubscribe(cache_subscription_);
  if (started_) admission_->Stop();
}

}  // namespace boxoffice::app
