#include "app/commands.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include "api/handlers.h"
#include "api/web_app.h"
#include "app/config.h"
#include "app/fake_gateway.h"
#include "app/service.h"
#include "core/jwt.h"
#include "core/log.h"
#include "core/time_format.h"
#include "events/file_sink.h"
#include "events/kafka_mock.h"
#include "events/kafka_sink.h"
#include "holds/hold_service.h"
#include "http/client.h"
#include "http/server.h"
#include "jobs/booking_stats.h"
#include "jobs/outbox_relay.h"
#include "jobs/reconciler.h"
#include "jobs/refund_worker.h"
#include "jobs/sweeper.h"
#include "payments/checkout.h"
#include "payments/gateway.h"

namespace boxoffice::app {
namespace {

constexpr Millis kRelayInterval{200};          // how stale an idle relay may let the events file be
constexpr Millis kStatsInterval{10'000};       // how stale /metrics' bookings by status may be
constexpr int kRelayBatchLimit = 500;          // events per delivery: one write and one fsync
constexpr Millis kRefundInterval{1'000};       // how soon a refund intent reaches the gateway
constexpr int kRefundBatchLimit = 100;         // refunds asked for per round
constexpr int kSweepBatchLimit = 1000;         // rows per sweep statement: a short transaction

std::string EnvName(const std::string& flag) {
  std::string env = "BOXOFFICE_";
  for (char c : flag)
    env += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return env;
}

// Every flag is also BOXOFFICE_<FLAG>.
template <class T>
CLI::Option* Flag(CLI::App* cmd, const std::string& name, T* target, const std::string& help) {
  return cmd->add_option("--" + name, *target, help)->envname(EnvName(name))->capture_default_str();
}

// Flag storage lives as long as the process, like the App that writes into it: kept here,
// reachable to the end (so leak checkers see it as what it is, not as lost memory).
template <class T, class... Args>
T* ForTheProcess(Args&&... args) {
  static std::mutex mu;
  static std::vector<std::shared_ptr<void>> kept;
  auto owned = std::make_shared<T>(std::forward<Args>(args)...);
  std::lock_guard lock(mu);
  kept.push_back(owned);
  return owned.get();
}

// A duration flag ("500ms", "15s", "10m", "1h").
CLI::Option* DurationFlag(CLI::App* cmd, const std::string& name, Millis* target,
                          const std::string& text, const std::string& help) {
  auto* storage = ForTheProcess<std::string>(text);
  return cmd
      ->add_option_function<std::string>(
          "--" + name,
          [target, name](const std::string& value) {
            auto d = ParseDuration(value);
            if (!d)
              throw CLI::ValidationError("--" + name,
                                         "expected a duration like 500ms, 15s, 10m, 1h");
            *target = *d;
          },
          help + " (default " + *storage + ")")
      ->envname(EnvName(name));
}

void AddDbFlag(CLI::App* cmd, Common* c) {
  // Several --db (in BOXOFFICE_DB: separated by spaces) are PostgreSQL shards.
  Flag(cmd, "db", &c->store.urls,
       "sqlite:PATH (default) or postgresql://USER@HOST:PORT/DB; repeated: PostgreSQL shards")
      ->delimiter(' ');
  Flag(cmd, "db-pool", &c->store.pool_size, "PostgreSQL connections per process")
      ->check(CLI::Range(1, 256));
}

// Blocks SIGTERM and SIGINT in this thread and every thread started after it, so that
// WaitForStopSignal is the one place that receives them.
sigset_t BlockStopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

void WaitForStopSignal(const sigset_t& signals) {
  int sig = 0;
  sigwait(&signals, &sig);
  LogInfo("stopping", {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
}

int Fail(const std::string& what, const Status& s) {
  LogError(what, {{"error", s.message()}});
  return 1;
}

// The outbox's destination: Kafka when brokers are given, else the events file.
// The sink a relay holding `lease` delivers to: a Kafka delivery gets two thirds of the lease
// (10 s for the default 15 s), so it always ends while the lease runs.
Result<std::unique_ptr<EventSink>> OpenSink(const std::string& kafka, const std::string& file,
                                            Millis lease) {
  if (kafka.empty()) return std::unique_ptr<EventSink>(std::make_unique<FileSink>(file));
  KafkaOptions options{kafka};
  options.delivery_timeout = std::min(Millis(10'000), lease * 2 / 3);
  auto sink = KafkaSink::Create(options);
  if (!sink.ok()) return sink.status();
  return std::unique_ptr<EventSink>(std::move(sink.value()));
}

// The sinks of each database's relay: a Kafka producer each (a delivery never waits behind
// another shard's), or the one events file, shared (FileSink takes one delivery at a time).
struct Sinks {
  std::vector<std::unique_ptr<EventSink>> sinks;
  EventSink* For(size_t database) const {
    return sinks.size() == 1 ? sinks.front().get() : sinks.at(database).get();
  }
};

Result<Sinks> OpenSinks(const std::string& kafka, const std::string& file, Millis lease,
                        size_t databases) {
  Sinks out;
  const size_t count = kafka.empty() ? 1 : databases;
  for (size_t i = 0; i < count; ++i) {
    auto sink = OpenSink(kafka, file, lease);
    if (!sink.ok()) return sink.status();
    out.sinks.push_back(std::move(sink.value()));
  }
  return out;
}

// The jobs of one database (one shard): started on construction, stopped by Stop.
struct DatabaseJobs {
  DatabaseJobs(const Stores::Database& db, const ServeFlags& f, EventSink* sink, Gateway* gateway,
               PaymentService* payments, SeatEvents* seat_events, Metrics* metrics)
      // Seats freed by expiry go out as SeatsReleased once the sweeper commits them (the
      // map already shows them AVAILABLE by then: lazy expiry).
      : sweeper(db.store, f.sweep_interval, kSweepBatchLimit, metrics,
                [seat_events](int64_t showtime_id, std::vector<std::string> seats) {
                  seat_events->Publish({SeatChange::Type::kReleased, showtime_id, std::move(seats),
                                        SystemClock().Now()});
                }),
        relay(db.outbox, sink, kRelayInterval, kRelayBatchLimit, metrics, nullptr, f.outbox_lease,
              ShardLabel(db)),
        refunds(db.store, gateway, kRefundInterval, kRefundBatchLimit, metrics, ShardLabel(db)),
        reconciler(db.store, gateway, payments, ReconcileOptions(f), metrics) {
    sweeper.Start();
    relay.Start();
    refunds.Start();
    reconciler.Start();
  }
  void Stop() {
    sweeper.Stop();
    reconciler.Stop();
    refunds.Stop();
    relay.Stop();
    // Events of the last requests go out now rather than at the next start.
    if (auto last = relay.RunOnce(); !last.ok())
      LogWarn("final outbox round failed", {{"error", last.status().message()}});
  }
  static std::string ShardLabel(const Stores::Database& db) {
    return db.name.empty() ? "" : "shard=\"" + std::to_string(db.number) + "\"";
  }
  static ReconcilerOptions ReconcileOptions(const ServeFlags& f) {
    ReconcilerOptions reconcile;
    reconcile.older_than = f.reconcile_after;
    reconcile.interval = f.reconcile_interval;
    return reconcile;
  }

  Sweeper sweeper;
  OutboxRelay relay;
  RefundWorker refunds;
  Reconciler reconciler;
};

int Serve(const ServeFlags& f) {
  const sigset_t signals = BlockStopSignals();
  SystemClock clock;
  auto opened = Service::Open(f, &clock);
  if (!opened.ok()) {
    return opened.status().code() == Code::kInvalid
               ? 2
               : Fail("cannot open the database", opened.status());
  }
  Service& service = *opened.value();
  if (!service.Start()) return 1;
  auto sinks = OpenSinks(f.kafka, f.events_file, f.outbox_lease, service.stores().databases.size());
  if (!sinks.ok()) return Fail("cannot open the event sink", sinks.status());
  // Each database (each shard) has its own sweeper, outbox relay, refund worker and
  // reconciler: a shard that is down stalls only its own.
  std::vector<std::unique_ptr<DatabaseJobs>> jobs;
  for (size_t i = 0; i < service.stores().databases.size(); ++i) {
    jobs.push_back(std::make_unique<DatabaseJobs>(
        service.stores().databases[i], f, sinks.value().For(i), service.gateway(),
        service.payments(), service.seat_events(), service.metrics()));
  }
  BookingStats stats(service.store(), kStatsInterval, service.metrics());
  stats.Start();
  LogInfo("listening", {{"host", service.server_options().host},
                        {"port", service.port()},
                        {"db", StoreKind(f.common.store)},
                        {"ioThreads", service.server_options().io_threads},
                        {"workers", service.server_options().worker_threads},
                        {"gate", service.has_redis() ? "redis" : "none"},
                        {"events", f.kafka.empty() ? "file" : "kafka"}});
  if (f.gateway_secret.empty())
    LogWarn("no --gateway-secret: every payment callback will be refused");
  WaitForStopSignal(signals);
  service.Stop();
  for (auto& j : jobs) j->Stop();
  LogInfo("stopped");
  return 0;
}

// `boxoffice relay`: the outbox relay alone, until SIGTERM.
int Relay(const Common& common, const std::string& kafka, const std::string& events_file,
          Millis lease, int batch) {
  if (lease < Millis(2'000)) {
    LogError("--outbox-lease must be at least 2s");
    return 2;
  }
  const sigset_t signals = BlockStopSignals();
  SystemClock clock;
  auto store = OpenAndMigrate(common.store, &clock);
  if (!store.ok()) return Fail("cannot open the database", store.status());
  const auto& databases = store.value().databases;
  auto sinks = OpenSinks(kafka, events_file, lease, databases.size());
  if (!sinks.ok()) return Fail("cannot open the event sink", sinks.status());
  Metrics metrics;
  std::vector<std::unique_ptr<OutboxRelay>> relays;  // one per database (shard)
  for (size_t i = 0; i < databases.size(); ++i) {
    relays.push_back(std::make_unique<OutboxRelay>(databases[i].outbox, sinks.value().For(i),
                                                   kRelayInterval, batch, &metrics, nullptr, lease,
                                                   DatabaseJobs::ShardLabel(databases[i])));
    relays.back()->Start();
  }
  LogInfo("relaying", {{"events", kafka.empty() ? "file" : "kafka"}});
  WaitForStopSignal(signals);
  for (auto& relay : relays) {
    relay->Stop();
    if (auto last = relay->RunOnce(); !last.ok())
      LogWarn("final outbox round failed", {{"error", last.status().message()}});
  }
  LogInfo("stopped");
  return 0;
}

// Demo and chain-scale data: cinemas × halls × days.
struct SeedFlags {
  Common common;
  bool demo = false;
  int cinemas = 1;
  int halls_per_cinema = 3;
  int days = 2;
  std::string from;  // the first day (YYYY-MM-DD); empty: tomorrow
};

NewShowtime HallShowtime(int cinema, int hall, Instant starts_at) {
  static const char* kTitles[] = {"Dune: Part Three", "The Last Projectionist",
                                  "Paddington in Peru", "Night Train to Lisbon",
                                  "Coraline (re-release)"};
  NewShowtime s;
  s.title = kTitles[(cinema + hall + ToEpochMs(starts_at) / 3'600'000) % 5];
  s.cinema = cinema == 1 ? "Boxoffice Demo Cinema" : "Boxoffice Cinema " + std::to_string(cinema);
  s.hall = "Screen " + std::to_string(hall);
  s.starts_at = starts_at;
  // Halls grow with their number: 100, 150, 200… seats, the back three rows premium, two
  // aisles a quarter in from each side, four wheelchair places at the ends of the front row.
  const int rows = 8 + 2 * ((hall - 1) % 5);
  const int per_row = 12 + 2 * ((hall - 1) % 5);
  for (int r = 0; r < rows; ++r) {
    s.rows.push_back(
        RowLayout{std::string(1, static_cast<char>('A' + r)),
                  per_row,
                  r >= rows - 3 ? "premium" : "standard",
                  {per_row / 4, per_row - per_row / 4},
                  r == 0 ? std::vector<int>{1, 2, per_row - 1, per_row} : std::vector<int>{}});
  }
  s.prices["standard"] = Price{1250, "EUR"};
  s.prices["premium"] = Price{1650, "EUR"};
  return s;
}

// The demo: one cinema's few showtimes, four a day, created one by one.
int SeedDemo(Store* store, const SeedFlags& f, Instant today) {
  auto count = store->CountShowtimes();
  if (!count.ok()) return Fail("cannot count showtimes", count.status());
  if (count.value() > 0) {
    LogInfo("demo data already present", {{"showtimes", count.value()}});
    return 0;
  }
  using namespace std::chrono;
  int done = 0;
  for (int c = 1; c <= f.cinemas; ++c) {
    for (int h = 1; h <= f.halls_per_cinema; ++h) {
      for (int d = 1; d <= f.days; ++d) {
        for (int slot = 0; slot < 4; ++slot) {
          const Instant starts = time_point_cast<Millis>(today + days{d} + hours{14 + 3 * slot} +
                                                         minutes{15 * (h % 4)});
          auto id = store->CreateShowtime(HallShowtime(c, h, starts));
          if (!id.ok()) return Fail("cannot create showtime", id.status());
          ++done;
        }
      }
    }
  }
  LogInfo("seeded", {{"showtimes", done}, {"demo", true}});
  return 0;
}

// "1h02m", "45s": an ETA for the progress line.
std::string ShortDuration(double seconds) {
  const int64_t s = std::max<int64_t>(0, static_cast<int64_t>(seconds + 0.5));
  char text[32];
  if (s >= 3600) {
    std::snprintf(text, sizeof text, "%lldh%02lldm", static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60));
  } else if (s >= 60) {
    std::snprintf(text, sizeof text, "%lldm%02llds", static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60));
  } else {
    std::snprintf(text, sizeof text, "%llds", static_cast<long long>(s));
  }
  return text;
}

// The chain (the seeds' scale): cinemas × halls × days, kShowtimesPerHallAndDay a day per
// hall, written as one batch per cinema and day (Store::SeedBatch: COPY on PostgreSQL, each
// batch with its name in one transaction), batch i on shard i mod N, one writer per shard.
// A run interrupted and started again with the same flags writes only the batches missing.
constexpr int kShowtimesPerHallAndDay = 5;

int SeedChain(Store* store, size_t databases, const SeedFlags& f, Instant first_day) {
  using namespace std::chrono;
  const int64_t batches = static_cast<int64_t>(f.cinemas) * f.days;
  const std::string day_text = FormatRfc3339(first_day).substr(0, 10);
  // Every batch has the same halls, so the same seats (HallShowtime's layouts).
  int64_t seats_per_batch = 0;
  for (int h = 1; h <= f.halls_per_cinema; ++h) {
    int64_t hall = 0;
    for (const RowLayout& row : HallShowtime(1, h, first_day).rows) hall += row.seats;
    seats_per_batch += hall * kShowtimesPerHallAndDay;
  }
  const int64_t showtimes_per_batch = int64_t{f.halls_per_cinema} * kShowtimesPerHallAndDay;
  std::atomic<int64_t> next{0}, written{0}, skipped{0};
  std::atomic<bool> failed{false};
  std::mutex error_mu;
  Status error = Status::Ok();
  const size_t writers = std::max<size_t>(2, databases);
  auto write = [&](size_t writer) {
    // Writer w takes the batches i with i mod writers == w: each shard has its writers.
    for (int64_t i = static_cast<int64_t>(writer); i < batches && !failed.load();
         i += static_cast<int64_t>(writers)) {
      const int cinema = static_cast<int>(i / f.days) + 1;
      const int day = static_cast<int>(i % f.days);
      std::vector<NewShowtime> showtimes;
      for (int h = 1; h <= f.halls_per_cinema; ++h) {
        for (int slot = 0; slot < kShowtimesPerHallAndDay; ++slot) {
          // 12:00, 14:45, 17:30, 20:15, 23:00, each hall a few minutes after the last.
          const Instant starts = time_point_cast<Millis>(first_day + days{day} + hours{12} +
                                                         minutes{165 * slot + 5 * ((h - 1) % 6)});
          showtimes.push_back(HallShowtime(cinema, h, starts));
        }
      }
      const std::string name = "chain " + std::to_string(f.cinemas) + "x" +
                               std::to_string(f.halls_per_cinema) + "x" + std::to_string(f.days) +
                               " from " + day_text + ": cinema " + std::to_string(cinema) +
                               " day " + std::to_string(day + 1);
      auto r = store->SeedBatch(name, showtimes, i);
      if (!r.ok()) {
        std::lock_guard lock(error_mu);
        if (error.ok()) error = r.status();
        failed = true;
        return;
      }
      (r.value() ? written : skipped).fetch_add(1);
      next.fetch_add(1);
    }
  };
  const auto started = steady_clock::now();
  std::vector<std::thread> threads;
  for (size_t w = 0; w < writers; ++w) threads.emplace_back(write, w);
  const bool tty = isatty(STDERR_FILENO);
  auto last_log = started;
  for (;;) {
    const int64_t done = next.load();
    const bool finished = done >= batches || failed.load();
    const double elapsed = duration<double>(steady_clock::now() - started).count();
    const double rate = elapsed > 0 ? written.load() * seats_per_batch / elapsed : 0;
    const double eta =
        written.load() > 0 ? elapsed / written.load() * static_cast<double>(batches - done) : 0;
    char line[256];
    const int width = 30;
    const int filled = batches ? static_cast<int>(width * done / batches) : width;
    std::snprintf(line, sizeof line,
                  "[%s%s] %lld/%lld cinema-days · %lld showtimes · %.1fM seats · %.0fk seats/s · "
                  "ETA %s",
                  std::string(filled, '#').c_str(), std::string(width - filled, '.').c_str(),
                  static_cast<long long>(done), static_cast<long long>(batches),
                  static_cast<long long>(done * showtimes_per_batch),
                  static_cast<double>(done * seats_per_batch) / 1e6, rate / 1000,
                  ShortDuration(eta).c_str());
    if (tty) {
      std::fprintf(stderr, "\r%s   ", line);
      if (finished) std::fprintf(stderr, "\n");
    } else if (finished || steady_clock::now() - last_log > seconds(10)) {
      std::fprintf(stderr, "seed: %s\n", line);
      last_log = steady_clock::now();
    }
    if (finished) break;
    std::this_thread::sleep_for(milliseconds(250));
  }
  for (auto& t : threads) t.join();
  if (!error.ok()) return Fail("cannot seed (run it again to resume)", error);
  const double seconds_taken = duration<double>(steady_clock::now() - started).count();
  auto size = store->SizeOnDisk();
  LogInfo("seeded", {{"showtimes", batches * showtimes_per_batch},
                     {"seats", batches * seats_per_batch},
                     {"batchesWritten", written.load()},
                     {"batchesAlreadyThere", skipped.load()},
                     {"seconds", seconds_taken},
                     {"databaseBytes", size.ok() ? size.value() : -1},
                     {"cinemas", f.cinemas},
                     {"hallsPerCinema", f.halls_per_cinema},
                     {"days", f.days},
                     {"from", day_text}});
  std::printf(
      "result seed showtimes=%lld seats=%lld seconds=%.1f seats_per_s=%.0f database_bytes=%lld "
      "batches_written=%lld batches_skipped=%lld\n",
      static_cast<long long>(batches * showtimes_per_batch),
      static_cast<long long>(batches * seats_per_batch), seconds_taken,
      seconds_taken > 0 ? written.load() * seats_per_batch / seconds_taken : 0.0,
      static_cast<long long>(size.ok() ? size.value() : -1), static_cast<long long>(written.load()),
      static_cast<long long>(skipped.load()));
  return 0;
}

int Seed(const SeedFlags& f) {
  SystemClock clock;
  auto store = OpenAndMigrate(f.common.store, &clock);
  if (!store.ok()) return Fail("cannot open the database", store.status());
  using namespace std::chrono;
  const Instant today = floor<days>(clock.Now());
  if (f.demo) return SeedDemo(store.value().store.get(), f, today);
  Instant first_day = today + days{1};
  if (!f.from.empty()) {
    auto parsed = ParseRfc3339(f.from + "T00:00:00Z");
    if (!parsed) {
      LogError("--from must be a date YYYY-MM-DD");
      return 2;
    }
    first_day = *parsed;
  }
  return SeedChain(store.value().store.get(), store.value().databases.size(), f, first_day);
}

}  // namespace

void AddCommands(CLI::App* app, int* exit_code) {
  auto* serve_flags = ForTheProcess<ServeFlags>();
  auto* serve = app->add_subcommand("serve", "Run the HTTP service");
  AddDbFlag(serve, &serve_flags->common);
  Flag(serve, "listen", &serve_flags->listen, "HOST:PORT to listen on (port 0: any)");
  Flag(serve, "jwt-secret", &serve_flags->common.jwt_secret,
       "HS256 secret for customer tokens (32+ chars)");
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
          "confirmed_bookings_missing_seats=%lld payments_unaccounted=%lld refunds_pending=%lld "
          "seats_booked=%lld bookings_confirmed=%lld payments_succeeded=%lld\n",
          what.c_str(), static_cast<long long>(r.violations()),
          static_cast<long long>(r.booked_seats_without_confirmed_booking),
          static_cast<long long>(r.confirmed_bookings_missing_seats),
          static_cast<long long>(r.payments_unaccounted), static_cast<long long>(r.refunds_pending),
          static_cast<long long>(r.seats_booked), static_cast<long long>(r.bookings_confirmed),
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
    Millis ttl{3'600'000};
  };
  auto* token_flags = ForTheProcess<TokenFlags>();
  auto* token = app->add_subcommand("token", "Print a customer token signed with the secret");
  Flag(token, "jwt-secret", &token_flags->secret, "HS256 secret")->required();
  Flag(token, "customer", &token_flags->customer, "Customer id (the sub claim)")
      ->required()
      ->check(CLI::PositiveNumber);
  token->add_flag("--admin", token_flags->admin, "Add scope admin")->envname("BOXOFFICE_ADMIN");
  DurationFlag(token, "ttl", &token_flags->ttl, "1h", "Token lifetime");
  token->callback([=] {
    const Instant exp = SystemClock().Now() + token_flags->ttl;
    std::cout << SignJwt(Principal{token_flags->customer, token_flags->admin}, exp,
                         token_flags->secret)
              << "\n";
  });
}

}  // namespace boxoffice::app
