// `boxoffice serve` and `boxoffice relay`: the service with its per-database jobs, or the
// outbox relay alone, each until SIGTERM.
#include <memory>
#include <string>
#include <vector>

#include "app/config.h"
#include "app/service.h"
#include "app/subcommands.h"
#include "core/log.h"
#include "events/file_sink.h"
#include "events/kafka_sink.h"
#include "jobs/booking_stats.h"
#include "jobs/database_probe.h"
#include "jobs/mailer.h"
#include "jobs/outbox_relay.h"
#include "jobs/reconciler.h"
#include "jobs/refund_worker.h"
#include "jobs/sweeper.h"

namespace boxoffice::app {
namespace {

constexpr Millis kRelayInterval{200};     // how stale an idle relay may let the events file be
constexpr Millis kStatsInterval{10'000};  // how stale /metrics' bookings by status may be
constexpr Millis kRefundInterval{1'000};  // how soon a refund intent reaches the gateway
constexpr Millis kProbeInterval{5'000};   // how often each database is pinged for /metrics
constexpr int kRefundBatchLimit = 100;    // refunds asked for per round
constexpr int kSweepBatchLimit = 1000;    // rows per sweep statement: a short transaction

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
               PaymentService* payments, SeatEvents* seat_events, Metrics* metrics,
               MailTransport* mail, const std::string& public_url, const Clock* clock)
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
        reconciler(db.store, gateway, payments, ReconcileOptions(f), metrics, ShardLabel(db)),
        probe(db.store, kProbeInterval, metrics, ShardLabel(db)) {
    sweeper.Start();
    relay.Start();
    refunds.Start();
    reconciler.Start();
    probe.Start();
    if (mail) {
      MailerOptions options;
      options.lease = f.mail_lease;
      options.max_age = f.mail_max_age;
      mailer = std::make_unique<Mailer>(db.outbox, db.store, mail, TicketSecret(f),
                                        MailSettings{f.mail_from, public_url}, options, metrics,
                                        clock, ShardLabel(db));
      mailer->Start();
    }
  }
  void Stop() {
    if (mailer) mailer->Stop();
    probe.Stop();
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
  DatabaseProbe probe;
  std::unique_ptr<Mailer> mailer;  // with --smtp
};

}  // namespace

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
  // Booking e-mails through one SMTP transport (each send is its own connection).
  std::unique_ptr<MailTransport> mail;
  if (!f.smtp.empty()) mail = std::make_unique<SmtpTransport>(f.smtp, f.mail_lease * 2 / 3);
  std::vector<std::unique_ptr<DatabaseJobs>> jobs;
  for (size_t i = 0; i < service.stores().databases.size(); ++i) {
    jobs.push_back(std::make_unique<DatabaseJobs>(
        service.stores().databases[i], f, sinks.value().For(i), service.gateway(),
        service.payments(), service.seat_events(), service.metrics(), mail.get(),
        service.public_url(), &clock));
  }
  BookingStats stats(service.store(), kStatsInterval, service.metrics());
  stats.Start();
  LogInfo("listening", {{"host", service.server_options().host},
                        {"port", service.port()},
                        {"db", StoreKind(f.common.store)},
                        {"ioThreads", service.server_options().io_threads},
                        {"workers", service.server_options().worker_threads},
                        {"gate", service.has_redis() ? "redis" : "none"},
                        {"events", f.kafka.empty() ? "file" : "kafka"},
                        {"mail", f.smtp.empty() ? "none" : "smtp"}});
  if (f.gateway_secret.empty())
    LogWarn("no --gateway-secret: every payment callback will be refused");
  WaitForStopSignal(signals);
  service.Stop();
  for (auto& j : jobs) j->Stop();
  LogInfo("stopped");
  return 0;
}

// `boxoffice relay`.
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

}  // namespace boxoffice::app
