#include "app/commands.h"

#include <cstdio>
#include <iostream>

#include "app/config.h"
#include "app/fake_gateway.h"
#include "app/subcommands.h"
#include "core/jwt.h"
#include "core/log.h"
#include "core/text.h"
#include "events/kafka_mock.h"
#include "jobs/outbox_relay.h"

namespace boxoffice::app {

void AddCommands(CLI::App* app, int* exit_code) {
  auto* serve_flags = ForTheProcess<ServeFlags>();
  auto* serve = app->add_subcommand("serve", "Run the HTTP service");
  AddDbFlag(serve, &serve_flags->common);
  Flag(serve, "listen", &serve_flags->listen, "HOST:PORT to listen on (port 0: any)");
  Flag(serve, "jwt-secret", &serve_flags->common.jwt_secret,
       "HS256 secret for customer tokens (32+ chars)");
  Flag(serve, "ticket-secret", &serve_flags->ticket_secret,
       "Key that signs ticket codes (32+ chars; default: derived from --jwt-secret)");
  Flag(serve, "smtp", &serve_flags->smtp,
       "smtp://HOST:PORT of the mail server booking e-mails go through (unset: none are sent)");
  Flag(serve, "mail-from", &serve_flags->mail_from, "The sender address of booking e-mails");
  DurationFlag(serve, "mail-max-age", &serve_flags->mail_max_age, "24h",
               "Booking e-mail not sent this long after its event is dropped unsent");
  DurationFlag(serve, "mail-lease", &serve_flags->mail_lease, "45s",
               "The e-mail sender's claim; another instance takes over this long after it died");
  Flag(serve, "gateway-secret", &serve_flags->gateway_secret,
       "Secret the payment gateway signs callbacks with (16+ chars; empty refuses all callbacks)");
  Flag(serve, "events-file", &serve_flags->events_file,
       "Where booking events go, one JSON object per line (embedded profile)");
  Flag(serve, "gateway-url", &serve_flags->gateway_url, "Base URL of the payment gateway");
  DurationFlag(serve, "hold-ttl", &serve_flags->hold_ttl, "10m", "How long a hold lasts");
  DurationFlag(serve, "hold-max-lifetime", &serve_flags->hold_max_lifetime, "20m",
               "Extensions never keep a hold past this age");
  Flag(serve, "redis", &serve_flags->redis_url,
       "redis://HOST:PORT of the seat gate (production profile; unset: no gate)");
  Flag(serve, "kafka", &serve_flags->kafka,
       "HOST:PORT,... of Kafka brokers for booking events (production profile; unset: "
       "--events-file)");
  Flag(serve, "holds-per-minute", &serve_flags->holds_per_minute,
       "Hold attempts per customer per minute (across instances with --redis); then 429")
      ->check(CLI::Range(1, 100'000));
  DurationFlag(serve, "redis-timeout", &serve_flags->redis_timeout, "50ms",
               "How long a hold waits for the gate before going to the store without it");
  DurationFlag(serve, "outbox-lease", &serve_flags->outbox_lease, "15s",
               "The outbox relay's claim; another instance takes over this long after it died");
  Flag(serve, "public-url", &serve_flags->public_url,
       "Base URL the payment gateway calls back (default: http://LISTEN)");
  DurationFlag(serve, "payment-ttl", &serve_flags->payment_ttl, "8m",
               "How long a checkout's payment session stays open (at most --hold-ttl; "
               "unset with a shorter --hold-ttl: 4/5 of it)");
  DurationFlag(serve, "checkout-lease", &serve_flags->checkout_lease, "30s",
               "How long a checkout request holds its Idempotency-Key before a retry may "
               "carry it on");
  DurationFlag(serve, "reconcile-after", &serve_flags->reconcile_after, "15m",
               "A checkout still pending after this is asked about at the gateway");
  DurationFlag(serve, "reconcile-interval", &serve_flags->reconcile_interval, "1m",
               "How often the reconciler runs");
  DurationFlag(serve, "sweep-interval", &serve_flags->sweep_interval, "15s",
               "How often expired holds are tidied");
  Flag(serve, "io-threads", &serve_flags->io_threads, "I/O threads (one io_context each)")
      ->check(CLI::Range(1, 64));
  Flag(serve, "workers", &serve_flags->workers, "Threads for database work")
      ->check(CLI::Range(1, 256));
  Flag(serve, "gateway-calls", &serve_flags->gateway_calls,
       "Calls waiting on the payment gateway at once per I/O thread (then checkout answers 503)")
      ->check(CLI::Range(1, 100000));
  Flag(serve, "max-connections", &serve_flags->max_connections, "Open connections at most")
      ->check(CLI::Range(1, 1'000'000));
  Flag(serve, "max-streams", &serve_flags->max_streams,
       "Open seat-change streams (SSE) at most; then 503")
      ->check(CLI::Range(0, 1'000'000));
  Flag(serve, "seat-map-cache-bytes", &serve_flags->seat_map_cache_bytes,
       "Bytes of seat maps each instance keeps at most (least recently read go first)")
      ->check(CLI::Range(size_t{1} << 20, size_t{1} << 40));
  DurationFlag(serve, "sse-heartbeat", &serve_flags->sse_heartbeat, "15s",
               "A seat-change stream sends a comment after this much silence");
  serve->callback([=] { *exit_code = Serve(*serve_flags); });

  auto* migrate_common = ForTheProcess<Common>();
  auto* migrate = app->add_subcommand("migrate", "Apply pending database migrations and exit");
  AddDbFlag(migrate, migrate_common);
  migrate->callback([=] {
    SystemClock clock;
    auto store = OpenAndMigrate(migrate_common->store, &clock);
    *exit_code = store.ok() ? 0 : Fail("migration failed", store.status());
    if (store.ok()) LogInfo("migrations up to date");
  });

  auto* audit_common = ForTheProcess<Common>();
  auto* audit = app->add_subcommand(
      "audit", "Check the invariants straight in the database (exit 1 on any violation)");
  AddDbFlag(audit, audit_common);
  audit->callback([=] {
    SystemClock clock;
    auto store = OpenAndMigrate(audit_common->store, &clock);
    if (!store.ok()) {
      *exit_code = Fail("cannot open the database", store.status());
      return;
    }
    // Each shard alone, then the sum (the one line for a single database): the invariants
    // hold per shard, as every showtime, its bookings and their payments live on one.
    auto print = [](const std::string& what, const AuditReport& r) {
      std::printf(
          "result %s violations=%lld booked_seats_without_confirmed_booking=%lld "
          "confirmed_bookings_missing_seats=%lld payments_unaccounted=%lld "
          "confirmed_on_cancelled=%lld refunds_pending=%lld "
          "seats_booked=%lld bookings_confirmed=%lld payments_succeeded=%lld\n",
          what.c_str(), static_cast<long long>(r.violations()),
          static_cast<long long>(r.booked_seats_without_confirmed_booking),
          static_cast<long long>(r.confirmed_bookings_missing_seats),
          static_cast<long long>(r.payments_unaccounted),
          static_cast<long long>(r.confirmed_on_cancelled),
          static_cast<long long>(r.refunds_pending), static_cast<long long>(r.seats_booked),
          static_cast<long long>(r.bookings_confirmed),
          static_cast<long long>(r.payments_succeeded));
    };
    const auto& databases = store.value().databases;
    if (databases.size() > 1) {
      for (const Stores::Database& db : databases) {
        auto report = db.store->Audit();
        if (!report.ok()) {
          *exit_code = Fail("audit failed on " + db.name, report.status());
          return;
        }
        print("audit_shard" + std::to_string(db.number), report.value());
      }
    }
    auto report = store.value().store->Audit();
    if (!report.ok()) {
      *exit_code = Fail("audit failed", report.status());
      return;
    }
    print("audit", report.value());
    *exit_code = report.value().violations() == 0 ? 0 : 1;
  });

  struct RelayFlags {
    Common common;
    std::string kafka;
    std::string events_file = "var/events.jsonl";
    Millis lease = OutboxRelay::kLease;
    int batch = kRelayBatchLimit;
  };
  auto* relay_flags = ForTheProcess<RelayFlags>();
  auto* relay = app->add_subcommand(
      "relay", "Run the outbox relay alone (for deployments that keep it out of serve)");
  AddDbFlag(relay, &relay_flags->common);
  Flag(relay, "kafka", &relay_flags->kafka, "HOST:PORT,... of Kafka brokers (unset: the file)");
  Flag(relay, "events-file", &relay_flags->events_file,
       "Where booking events go without --kafka, one JSON object per line");
  DurationFlag(relay, "outbox-lease", &relay_flags->lease, "15s",
               "A relay's claim on the outbox; another takes over this long after it died");
  Flag(relay, "batch", &relay_flags->batch,
       "Events per delivery: each batch is marked published once all of it is delivered")
      ->check(CLI::Range(1, 10'000));
  relay->callback([=] {
    *exit_code = Relay(relay_flags->common, relay_flags->kafka, relay_flags->events_file,
                       relay_flags->lease, relay_flags->batch);
  });

  auto* mock_brokers = ForTheProcess<int>(3);
  auto* kafka_mock = app->add_subcommand(
      "kafka-mock", "Run librdkafka's mock Kafka cluster with topic booking-events (development)");
  Flag(kafka_mock, "brokers", mock_brokers, "How many brokers")->check(CLI::Range(1, 9));
  kafka_mock->callback([=] {
    const sigset_t signals = BlockStopSignals();
    auto cluster = KafkaMockCluster::Start(*mock_brokers, 4);
    if (!cluster.ok()) {
      *exit_code = Fail("cannot start the mock Kafka cluster", cluster.status());
      return;
    }
    LogInfo("listening", {{"bootstraps", cluster.value()->bootstraps()}, {"role", "kafka-mock"}});
    WaitForStopSignal(signals);
    LogInfo("stopped");
  });

  auto* seed_flags = ForTheProcess<SeedFlags>();
  auto* seed =
      app->add_subcommand("seed", "Load showtimes: --demo, or chain scale with --cinemas …");
  AddDbFlag(seed, &seed_flags->common);
  seed->add_flag("--demo", seed_flags->demo, "A demo cinema (skipped if showtimes exist)")
      ->envname("BOXOFFICE_DEMO");
  Flag(seed, "cinemas", &seed_flags->cinemas, "Cinemas to generate")->check(CLI::Range(1, 10'000));
  Flag(seed, "halls-per-cinema", &seed_flags->halls_per_cinema, "Halls per cinema")
      ->check(CLI::Range(1, 50));
  Flag(seed, "days", &seed_flags->days, "Days of showtimes from tomorrow (or --from)")
      ->check(CLI::Range(1, 365));
  Flag(seed, "from", &seed_flags->from,
       "First day of the chain's showtimes, YYYY-MM-DD (default tomorrow; give the same to "
       "resume an interrupted seed on another day)");
  seed->callback([=] { *exit_code = Seed(*seed_flags); });

  struct GatewayFlags {
    std::string listen = "127.0.0.1:9090";
    int port = 0;
    std::string secret;
    std::string public_url;
    std::vector<std::string> service_urls;
    Millis answer_delay{0};
  };
  auto* gateway_flags = ForTheProcess<GatewayFlags>();
  auto* gateway =
      app->add_subcommand("fake-gateway", "Run a stand-in payment gateway (development and tests)");
  Flag(gateway, "listen", &gateway_flags->listen, "HOST:PORT to listen on (port 0: any)");
  Flag(gateway, "port", &gateway_flags->port, "Port on 127.0.0.1 (overrides --listen)")
      ->check(CLI::Range(1, 65535));
  Flag(gateway, "secret", &gateway_flags->secret, "Secret to sign callbacks with")->required();
  Flag(gateway, "public-url", &gateway_flags->public_url,
       "Base URL of its payment pages (default: its address)");
  Flag(gateway, "service-url", &gateway_flags->service_urls,
       "Base URL of a service it works for (repeatable; BOXOFFICE_SERVICE_URL: separated by "
       "spaces): sessions may call back and return only there. Unset: a returnUrl must have "
       "its callbackUrl's origin")
      ->delimiter(' ');
  DurationFlag(gateway, "answer-delay", &gateway_flags->answer_delay, "0s",
               "Test control: answer session requests this long late, like a slow gateway");
  gateway->callback([=] {
    http::ServerOptions options;
    if (gateway_flags->port)
      gateway_flags->listen = "127.0.0.1:" + std::to_string(gateway_flags->port);
    if (!ParseListen(gateway_flags->listen, &options)) {
      *exit_code = 2;
      return;
    }
    if (gateway_flags->public_url.empty())
      gateway_flags->public_url = "http://" + gateway_flags->listen;
    options.io_threads = 1;
    // A slow gateway still answers many callers at once, each late.
    options.worker_threads = gateway_flags->answer_delay > Millis(0) ? 64 : 2;
    const sigset_t signals = BlockStopSignals();
    SystemClock clock;
    Metrics metrics;
    http::Router router;
    FakeGateway fake(FakeGatewayOptions{gateway_flags->secret, gateway_flags->public_url,
                                        gateway_flags->service_urls},
                     &clock, gateway_flags->answer_delay);
    fake.Register(&router);
    http::Server server(options, &router, &metrics);
    if (!server.Start()) {
      *exit_code = 1;
      return;
    }
    LogInfo("listening",
            {{"host", options.host}, {"port", server.port()}, {"role", "fake-gateway"}});
    WaitForStopSignal(signals);
    server.Stop();
    LogInfo("stopped");
  });

  struct TokenFlags {
    std::string secret;
    int64_t customer = 0;
    bool admin = false;
    bool door = false;
    std::string email;
    Millis ttl{3'600'000};
  };
  auto* token_flags = ForTheProcess<TokenFlags>();
  auto* token = app->add_subcommand("token", "Print a customer token signed with the secret");
  Flag(token, "jwt-secret", &token_flags->secret, "HS256 secret")->required();
  Flag(token, "customer", &token_flags->customer, "Customer id (the sub claim)")
      ->required()
      ->check(CLI::PositiveNumber);
  token->add_flag("--admin", token_flags->admin, "Add scope admin")->envname("BOXOFFICE_ADMIN");
  token->add_flag("--door", token_flags->door, "Add scope door (checks tickets in)")
      ->envname("BOXOFFICE_DOOR");
  Flag(token, "email", &token_flags->email, "Where the customer's tickets are sent (email claim)")
      ->check([](const std::string& v) {
        return IsValidEmail(v) ? std::string() : std::string("not an e-mail address");
      });
  DurationFlag(token, "ttl", &token_flags->ttl, "1h", "Token lifetime");
  token->callback([=] {
    const Instant exp = SystemClock().Now() + token_flags->ttl;
    Principal who{token_flags->customer, token_flags->admin, token_flags->door, token_flags->email};
    std::cout << SignJwt(who, exp, token_flags->secret) << "\n";
  });
}

}  // namespace boxoffice::app
