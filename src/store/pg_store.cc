#include "store/pg_store.h"

#include <libpq-fe.h>

#include <algorithm>
#include <optional>
#include <unordered_set>

#include "core/crypto.h"
#include "core/log.h"
#include "core/pool.h"
#include "core/seats.h"
#include "store/migrations.h"
#include "store/pg_common.h"
#include "store/pg_hold_batch.h"
#include "store/pg_pipeline.h"
#include "store/money.h"

namespace boxoffice {
namespace {

// A deadlock or serialization failure is retried this often before it reaches a caller.
constexpr int kMaxTxAttempts = 3;


// $1 of every statement that needs the time: NULL for the database clock, or epoch ms.
#define BOX_NOW "COALESCE(to_timestamp($1::bigint / 1000.0), statement_timestamp())"
#define BOX_MS(x) "(extract(epoch FROM " x ") * 1000)::bigint"
#define BOX_TS(p) "to_timestamp(" p "::bigint / 1000.0)"
// Locks the requested seats of a showtime in seat-code order before anything changes them.
#define BOX_LOCK_SEATS(showtime, seats)                                                        \
  "WITH locked AS MATERIALIZED (SELECT seat_code FROM show_seat WHERE showtime_id = " showtime \
  " AND seat_code = ANY(" seats "::text[]) ORDER BY seat_code FOR UPDATE) "

constexpr const char* kMigrationLock = "SELECT pg_advisory_xact_lock(7283945012)";
constexpr const char* kCreateMigrationTable =
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT "
    "NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())";
constexpr Sql kAppliedVersions{"applied_versions", "SELECT version FROM schema_migrations"};
constexpr Sql kRecordMigration{"record_migration",
                               "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)"};

constexpr Sql kInsertShowtime{"insert_showtime",
                              "INSERT INTO showtime (title, cinema, hall, starts_at, seat_count)"
                              " VALUES ($1, $2, $3, " BOX_TS("$4") ", $5) RETURNING showtime_id"};
constexpr Sql kInsertPrices{"insert_prices",
                            "INSERT INTO price (showtime_id, category, amount, currency)"
                            " SELECT $1, * FROM unnest($2::text[], $3::bigint[], $4::text[])"};
constexpr Sql kInsertSeats{
    "insert_seats",
    "INSERT INTO show_seat (showtime_id, seat_code, row_label, seat_number, seat_order, category)"
    " SELECT $1, * FROM unnest($2::text[], $3::text[], $4::int[], $5::int[], $6::text[])"};
constexpr Sql kSelectShowtime{
    "select_showtime",
    "SELECT showtime_id, title, cinema, hall, " BOX_MS("starts_at") ", seat_count"
    "  FROM showtime WHERE showtime_id = $1"};
constexpr Sql kSelectPrices{"select_prices",
                            "SELECT showtime_id, category, amount, currency FROM price"
                            " WHERE showtime_id = ANY($1::bigint[])"};
constexpr Sql kListShowtimes{
    "list_showtimes",
    "SELECT showtime_id, title, cinema, hall, " BOX_MS("starts_at") ", seat_count FROM showtime"
    " WHERE ($1::bigint IS NULL OR starts_at >= " BOX_TS("$1") ")"
    "   AND ($2::bigint IS NULL OR starts_at < " BOX_TS("$2") ")"
    "   AND ($3::text IS NULL OR cinema = $3::text)"
    "   AND ($4::bigint IS NULL OR (starts_at, showtime_id) > (" BOX_TS("$4") ", $5::bigint))"
    " ORDER BY starts_at, showtime_id LIMIT $6"};
constexpr Sql kCountShowtimes{"count_showtimes", "SELECT count(*) FROM showtime"};
constexpr Sql kPing{"ping", "SELECT 1"};
constexpr Sql kAudit{
    "audit",
    "SELECT"
    " (SELECT count(*) FROM show_seat s LEFT JOIN booking b ON b.booking_id = s.booking_id"
    "   WHERE s.status = 'BOOKED' AND (b.booking_id IS NULL OR b.status <> 'CONFIRMED'"
    "         OR b.showtime_id <> s.showtime_id OR NOT s.seat_code = ANY(b.seats))),"
    " (SELECT count(*) FROM booking b WHERE b.status = 'CONFIRMED' AND cardinality(b.seats) <>"
    "   (SELECT count(*) FROM show_seat s WHERE s.showtime_id = b.showtime_id"
    "     AND s.booking_id = b.booking_id AND s.status = 'BOOKED' AND s.seat_code = ANY(b.seats))),"
    " (SELECT count(*) FROM payment p WHERE p.status = 'SUCCEEDED' AND"
    "   (EXISTS (SELECT 1 FROM booking b WHERE b.payment_id = p.payment_id"
    "            AND b.status = 'CONFIRMED'))::int"
    "   + (EXISTS (SELECT 1 FROM refund r WHERE r.payment_id = p.payment_id))::int <> 1),"
    " (SELECT count(*) FROM refund WHERE status = 'PENDING'),"
    " (SELECT count(*) FROM show_seat WHERE status = 'BOOKED'),"
    " (SELECT count(*) FROM booking WHERE status = 'CONFIRMED'),"
    " (SELECT count(*) FROM payment WHERE status = 'SUCCEEDED')"};
constexpr Sql kSetWaitingRoom{
    "set_waiting_room",
    "INSERT INTO waiting_room (showtime_id, enabled, active_limit, admission_ttl_ms, updated_at)"
    " SELECT showtime_id, $3, $4, $5, " BOX_NOW
    " FROM showtime WHERE showtime_id = $2"
    " ON CONFLICT (showtime_id) DO UPDATE SET enabled = excluded.enabled,"
    "   active_limit = excluded.active_limit, admission_ttl_ms = excluded.admission_ttl_ms,"
    "   updated_at = excluded.updated_at"};
constexpr Sql kEnabledWaitingRooms{
    "enabled_waiting_rooms",
    "SELECT showtime_id, active_limit, admission_ttl_ms FROM waiting_room WHERE enabled"
    " ORDER BY showtime_id"};

constexpr Sql kSelectSeatMap{
    "select_seat_map",
    "SELECT seat_code, row_label, seat_number, category,"
    "       CASE WHEN status = 'HELD' AND hold_expires_at < " BOX_NOW
    " THEN 'AVAILABLE'"
    "            ELSE status END,"
    "       " BOX_MS(BOX_NOW) "  FROM show_seat WHERE showtime_id = $2 ORDER BY seat_order"};
constexpr Sql kSelectSeatOwners{
    "select_seat_owners",
    "SELECT seat_code, expired, CASE WHEN expired THEN 'AVAILABLE' ELSE status END,"
    "       CASE WHEN expired THEN NULL ELSE hold_id::text END,"
    "       CASE WHEN expired THEN NULL ELSE customer_id END"
    "  FROM (SELECT *, (status = 'HELD' AND hold_expires_at < " BOX_NOW
    ") AS expired"
    "          FROM show_seat WHERE showtime_id = $2) s ORDER BY seat_order"};

constexpr Sql kInsertHold{
    "insert_hold",
    "INSERT INTO seat_hold (hold_id, showtime_id, customer_id, seats, status, created_at,"
    " expires_at) VALUES ($1::uuid, $2, $3, $4::text[], 'HELD', " BOX_TS("$5") ", " BOX_TS(
        "$6") ")"};
#define BOX_HOLD_COLUMNS                                                                       \
  "SELECT hold_id::text, showtime_id, customer_id, seats, status, " BOX_MS(                    \
      "created_at") ", " BOX_MS("expires_at") ", expires_at < " BOX_NOW                        \
                                              "  FROM seat_hold WHERE hold_id = $2::uuid AND " \
                                              "customer_id = $3"
constexpr Sql kSelectHold{"select_hold", BOX_HOLD_COLUMNS};
constexpr Sql kLockHold{"lock_hold", BOX_HOLD_COLUMNS " FOR UPDATE"};
constexpr Sql kReleaseSeats{
    "release_seats",
    BOX_LOCK_SEATS("$1", "$2")
    "UPDATE show_seat s SET status = 'AVAILABLE', hold_id = NULL, customer_id = NULL,"
    "       hold_expires_at = NULL"
    "  FROM locked"
    " WHERE s.showtime_id = $1 AND s.seat_code = locked.seat_code"
    "   AND s.hold_id = $3::uuid AND s.status = 'HELD'"};
constexpr Sql kMarkHoldReleased{
    "mark_hold_released",
    "UPDATE seat_hold SET status = 'RELEASED' WHERE hold_id = $1::uuid AND status = 'HELD'"};
constexpr Sql kNowMs{"now_ms", "SELECT " BOX_MS(BOX_NOW)};
constexpr Sql kPendingBookingOfHold{
    "pending_booking_of_hold",
    "SELECT booking_id FROM booking WHERE hold_id = $1::uuid AND status = 'PENDING'"};
constexpr Sql kRearmSeats{
    "rearm_seats",
    BOX_LOCK_SEATS("$2", "$3")
    "UPDATE show_seat s SET hold_expires_at = " BOX_TS("$5")
    "  FROM locked"
    " WHERE s.showtime_id = $2 AND s.seat_code = locked.seat_code"
    "   AND s.hold_id = $4::uuid AND s.status = 'HELD' AND s.hold_expires_at >= " BOX_NOW};
constexpr Sql kSeatPrices{
    "seat_prices",
    "SELECT p.amount, p.currency"
    "  FROM show_seat s JOIN price p ON p.showtime_id = s.showtime_id AND p.category = s.category"
    " WHERE s.showtime_id = $1 AND s.seat_code = ANY($2::text[])"};
constexpr Sql kInsertBooking{
    "insert_booking",
    "INSERT INTO booking (hold_id, showtime_id, customer_id, seats, status, amount, currency,"
    " created_at, updated_at) VALUES ($1::uuid, $2, $3, $4::text[], 'PENDING', $5, $6, " BOX_TS(
        "$7") ", " BOX_TS("$7") ") RETURNING booking_id"};
constexpr Sql kAttachSession{
    "attach_session",
    "UPDATE booking SET session_id = $1, payment_url = $2, payment_expires_at = " BOX_TS("$3") ","
    "       updated_at = statement_timestamp()"
    " WHERE booking_id = $4 AND status = 'PENDING' AND (session_id IS NULL OR session_id = $1)"};
#define BOX_BOOKING_COLUMNS                                                                      \
  "SELECT booking_id, hold_id::text, showtime_id, customer_id, seats, status, amount, currency," \
  " session_id, payment_url, " BOX_MS("payment_expires_at") ", payment_id, " BOX_MS(             \
      "created_at") " FROM booking WHERE booking_id = $1"
constexpr Sql kSelectBooking{"select_booking", BOX_BOOKING_COLUMNS};
constexpr Sql kLockBooking{"lock_booking", BOX_BOOKING_COLUMNS " FOR UPDATE"};
constexpr Sql kInsertPayment{"insert_payment",
                             "INSERT INTO payment (payment_id, session_id, booking_id, status, "
                             "amount, currency, received_at)"
                             " VALUES ($1, $2, $3, $4, $5, $6, " BOX_TS(
                                 "$7") ") ON CONFLICT (payment_id) DO NOTHING RETURNING 1"};
// The seeds' confirm statement, with the lock order explicit: HELD → BOOKED only where the
// seat is this hold's and the hold has not expired, for all of the booking's seats or none
// (read under the lock: in READ COMMITTED an UPDATE tests its WHERE clause against the
// statement's snapshot and re-tests only rows that passed, so a seat changed by a
// transaction that committed while we waited for its lock would be judged on stale data).
constexpr Sql kConfirmSeats{
    "confirm_seats",
    "WITH locked AS MATERIALIZED ("
    "  SELECT seat_code,"
    "         (status = 'HELD' AND hold_id = $4::uuid AND hold_expires_at >= " BOX_NOW
    ") AS ours"
    "    FROM show_seat WHERE showtime_id = $2 AND seat_code = ANY($3::text[])"
    "   ORDER BY seat_code FOR NO KEY UPDATE),"
    " verdict AS (SELECT count(*) FILTER (WHERE ours) = $6::int AS all_ours FROM locked),"
    " upd AS ("
    "  UPDATE show_seat s SET status = 'BOOKED', booking_id = $5, hold_expires_at = NULL"
    "    FROM locked, verdict"
    "   WHERE verdict.all_ours AND locked.ours"
    "     AND s.showtime_id = $2 AND s.seat_code = locked.seat_code"
    "  RETURNING 1)"
    " SELECT count(*), boxoffice_assert(count(*) IN (0, $6::int), 'partial confirm') FROM upd"};
constexpr Sql kMarkHoldBooked{"mark_hold_booked",
                              "UPDATE seat_hold SET status = 'BOOKED' WHERE hold_id = $1::uuid"};
constexpr Sql kUpdateBooking{
    "update_booking",
    "UPDATE booking SET status = $1, payment_id = COALESCE($2, payment_id), updated_at = " BOX_TS(
        "$3") " WHERE booking_id = $4"};
constexpr Sql kInsertRefund{
    "insert_refund",
    "INSERT INTO refund (refund_id, payment_id, booking_id, amount, currency, status, created_at,"
    " next_attempt_at) VALUES ($1::uuid, $2, $3, $4, $5, 'PENDING', " BOX_TS("$6") ", " BOX_TS(
        "$6") ")"};
constexpr Sql kInsertEvent{"insert_event",
                           "INSERT INTO outbox (event_id, type, key, payload, created_at)"
                           " VALUES ($1::uuid, $2, $3, $4, " BOX_TS("$5") ")"};
constexpr Sql kPendingEvents{
    "pending_events",
    "SELECT id, event_id::text, type, key, payload, " BOX_MS("created_at") " FROM outbox"
    " WHERE published_at IS NULL AND id > $1 ORDER BY id LIMIT $2"};
// Fenced: the lease row is share-locked by the mark, so a takeover waits for it, and the
// mark happens only while the lease is this owner's and unexpired. Returns 1 if it was.
constexpr Sql kMarkPublished{
    "mark_published",
    "WITH fence AS MATERIALIZED (SELECT 1 FROM relay_lease"
    "  WHERE name = $3 AND owner = $4 AND until >= " BOX_NOW " FOR SHARE),"
    " upd AS (UPDATE outbox SET published_at = " BOX_NOW
    "  WHERE published_at IS NULL AND id = ANY($2::bigint[]) AND EXISTS (SELECT 1 FROM fence)"
    "  RETURNING 1)"
    " SELECT (SELECT count(*) FROM fence), (SELECT count(*) FROM upd)"};
constexpr Sql kRefundBooking{"refund_booking",
                             "SELECT booking_id FROM refund WHERE refund_id = $1::uuid"};
constexpr Sql kMarkRefundIssued{
    "mark_refund_issued",
    "UPDATE refund SET status = 'ISSUED', gateway_refund_id = $1, issued_at = " BOX_TS(
        "$2") " WHERE refund_id = $3::uuid AND status = 'PENDING' RETURNING 1"};
// SKIP LOCKED: instances claiming at once take disjoint rows and never wait on each other.
constexpr Sql kClaimStale{
    "claim_stale",
    "WITH stale AS MATERIALIZED (SELECT booking_id FROM booking"
    "  WHERE status = 'PENDING' AND (payment_expires_at <= " BOX_NOW
    "        OR created_at < " BOX_NOW " - $2::bigint * interval '1 ms')"
    "    AND (claimed_until IS NULL OR claimed_until < " BOX_NOW
    ")"
    "  ORDER BY claimed_until NULLS FIRST, created_at LIMIT $4 FOR UPDATE SKIP LOCKED) "
    "UPDATE booking b SET claimed_until = " BOX_NOW
    " + $3::bigint * interval '1 ms'"
    "  FROM stale WHERE b.booking_id = stale.booking_id RETURNING b.booking_id"};
constexpr Sql kReleaseClaims{
    "release_claims",
    "UPDATE booking SET claimed_until = NULL WHERE booking_id = ANY($1::bigint[])"
    " AND status = 'PENDING'"};
constexpr Sql kLockKey{
    "lock_key",
    "SELECT fingerprint, state, lock_token::text, " BOX_MS("locked_until") ", booking_id, "
    BOX_MS("hold_expiry_before") ", " BOX_MS("hold_expiry_after") ", response_status,"
    " response_body FROM idempotency_key WHERE customer_id = $1 AND key = $2 FOR UPDATE"};
constexpr Sql kInsertKey{
    "insert_key",
    "INSERT INTO idempotency_key (customer_id, key, fingerprint, state, lock_token, locked_until,"
    " created_at, updated_at)"
    " VALUES ($1, $2, $3, $4, $5::uuid, " BOX_TS("$6") ", " BOX_TS("$7") ", " BOX_TS("$7") ")"
    " ON CONFLICT (customer_id, key) DO NOTHING RETURNING 1"};
constexpr Sql kUpdateKey{
    "update_key",
    "UPDATE idempotency_key SET state = $3, lock_token = $4::uuid, locked_until = " BOX_TS("$5") ","
    "       booking_id = $6, hold_expiry_before = " BOX_TS("$7") ","
    "       hold_expiry_after = " BOX_TS("$8") ", response_status = $9, response_body = $10,"
    "       updated_at = " BOX_TS("$11")
    " WHERE customer_id = $1 AND key = $2"};
constexpr Sql kDeleteKey{"delete_key",
                         "DELETE FROM idempotency_key WHERE customer_id = $1 AND key = $2"};
constexpr Sql kPurgeKeys{"purge_keys",
                         "DELETE FROM idempotency_key WHERE (customer_id, key) IN"
                         " (SELECT customer_id, key FROM idempotency_key"
                         "   WHERE created_at < " BOX_NOW
                         " - $2::bigint * interval '1 ms'"
                         "   LIMIT $3 FOR UPDATE SKIP LOCKED)"};
// Checkout undone: the seats this hold still has until `from` get `to` back.
constexpr Sql kResetSeatsExpiry{
    "reset_seats_expiry",
    BOX_LOCK_SEATS("$1", "$2")
    "UPDATE show_seat s SET hold_expires_at = " BOX_TS("$5")
    "  FROM locked"
    " WHERE s.showtime_id = $1 AND s.seat_code = locked.seat_code"
    "   AND s.hold_id = $3::uuid AND s.status = 'HELD' AND s.hold_expires_at = " BOX_TS("$4")};
constexpr Sql kCountRecentBookings{"count_recent_bookings",
                                   "SELECT status, count(*) FROM booking"
                                   " WHERE created_at >= " BOX_NOW
                                   " - $2::bigint * interval '1 ms' GROUP BY status"};
constexpr Sql kAcquireLease{
    "acquire_lease",
    "INSERT INTO relay_lease (name, owner, until)"
    " VALUES ($2, $3, " BOX_NOW
    " + $4::bigint * interval '1 ms')"
    " ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, until = excluded.until"
    " WHERE relay_lease.owner = excluded.owner OR relay_lease.until < " BOX_NOW " RETURNING owner"};
constexpr Sql kPendingRefunds{
    "pending_refunds",
    "SELECT refund_id::text, payment_id, booking_id, amount, currency, attempts FROM refund"
    " WHERE status = 'PENDING' AND next_attempt_at <= " BOX_NOW
    " ORDER BY next_attempt_at LIMIT $2"};
constexpr Sql kRefundAttemptFailed{
    "refund_attempt_failed",
    "UPDATE refund SET attempts = attempts + 1, refused = $2, last_error = $3,"
    "       next_attempt_at = " BOX_NOW " + $4::bigint * interval '1 ms'"
    " WHERE refund_id = $5::uuid AND status = 'PENDING'"};
constexpr Sql kRefundBacklog{
    "refund_backlog",
    "SELECT count(*) FILTER (WHERE NOT refused), count(*) FILTER (WHERE refused)"
    "  FROM refund WHERE status = 'PENDING'"};
constexpr Sql kSetHoldExpiry{"set_hold_expiry", "UPDATE seat_hold SET expires_at = " BOX_TS(
                                                    "$1") " WHERE hold_id = $2::uuid"};
// The seeds' sweeper, batched; SKIP LOCKED means it never waits, on any number of instances.
constexpr Sql kSweepExpired{
    "sweep_expired",
    "WITH expired AS MATERIALIZED (SELECT showtime_id, seat_code FROM show_seat"
    "  WHERE status = 'HELD' AND hold_expires_at < " BOX_NOW
    " LIMIT $2 FOR UPDATE SKIP LOCKED) "
    "UPDATE show_seat s SET status = 'AVAILABLE', hold_id = NULL, customer_id = NULL,"
    "       hold_expires_at = NULL"
    "  FROM expired"
    " WHERE s.showtime_id = expired.showtime_id AND s.seat_code = expired.seat_code"
    "   AND s.status = 'HELD' AND s.hold_expires_at < " BOX_NOW
    " RETURNING s.showtime_id, s.seat_code"};

}  // namespace

// One libpq connection with the statements it has prepared; used by one thread at a time.
class PgConnection {
 public:
  explicit PgConnection(PGconn* conn) : conn_(conn) {}
  ~PgConnection() { PQfinish(conn_); }

  bool broken() const { return PQstatus(conn_) != CONNECTION_OK; }
  PGconn* raw() const { return conn_; }
  const std::string& last_sqlstate() const { return last_sqlstate_; }

  Status Simple(const char* command) {
    PgResultPtr res(PQexec(conn_, command), &PQclear);
    const auto st = PQresultStatus(res.get());
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return Status::Ok();
    return Fail(res.get());
  }

  Result<PgResultPtr> Exec(const Sql& sql, const std::vector<Param>& params) {
    if (!prepared_.count(sql.name)) {
      PgResultPtr prep(
          PQprepare(conn_, sql.name, sql.text, static_cast<int>(params.size()), nullptr), &PQclear);
      if (PQresultStatus(prep.get()) != PGRES_COMMAND_OK) return Fail(prep.get());
      prepared_.insert(sql.name);
    }
    std::vector<const char*> values;
    values.reserve(params.size());
    for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
    PgResultPtr res(PQexecPrepared(conn_, sql.name, static_cast<int>(values.size()), values.data(),
                                   nullptr, nullptr, 0),
                    &PQclear);
    const auto st = PQresultStatus(res.get());
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return res;
    return Fail(res.get());
  }

  void ResetError() { last_sqlstate_.clear(); }

 private:
  Status Fail(const PGresult* res) {
    const char* state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
    last_sqlstate_ = state ? state : "";
    return PgError(conn_, res);
  }

  PGconn* conn_;
  std::unordered_set<const char*> prepared_;
  std::string last_sqlstate_;
};

// Deadlock detected, serialization failure: the transaction may simply run again.
bool IsRetryable(const std::string& sqlstate) { return sqlstate == "40P01" || sqlstate == "40001"; }

struct PgStore::Impl {
  // Each I/O loop's pipelined connection and the hold batcher on it.
  struct LoopState {
    LoopState(io::asio::io_context& context, Impl* impl)
        : pipeline(context, PgPipelineOptions{impl->options.url, impl->options.connect_timeout,
                                              impl->options.statement_timeout,
                                              impl->options.lock_timeout}),
          batcher(&pipeline, [impl] { return impl->Now(); }, impl->options.statement_timeout,
                  &impl->hold_counts) {}
    PgPipeline pipeline;
    PgHoldBatcher batcher;
  };

  PgOptions options;
  Pool<PgConnection> pool;
  PgHoldBatcher::Counts hold_counts;
  io::PerLoop<LoopState> loops;

  // The current loop's state, made at first use; null off the loops.
  LoopState* Loop() {
    return loops.Get([this](io::asio::io_context& context) {
      return std::make_unique<LoopState>(context, this);
    });
  }

  explicit Impl(PgOptions o)
      : options(std::move(o)),
        pool(options.pool_size, options.acquire_timeout, [this] { return Connect(); }) {}

  Result<std::unique_ptr<PgConnection>> Connect() {
    const std::string timeout_s =
        std::to_string(std::max<int64_t>(1, options.connect_timeout.count() / 1000));
    const char* keys[] = {"dbname", "connect_timeout", "application_name", nullptr};
    const char* values[] = {options.url.c_str(), timeout_s.c_str(), "boxoffice", nullptr};
    auto conn = std::make_unique<PgConnection>(PQconnectdbParams(keys, values, 1));
    if (conn->broken()) {
      return Status(Code::kUnavailable, "cannot connect to postgresql");
    }
    // Server notices become JSON log lines like everything else on stderr.
    PQsetNoticeProcessor(
        conn->raw(),
        [](void*, const char* message) {
          std::string text = message;
          while (!text.empty() && text.back() == '\n') text.pop_back();
          LogInfo("postgresql notice", {{"detail", text}});
        },
        nullptr);
    const std::string setup =
        "SET statement_timeout = " + std::to_string(options.statement_timeout.count()) +
        "; SET lock_timeout = " + std::to_string(options.lock_timeout.count()) +
        "; SET idle_in_transaction_session_timeout = 60000";
    if (Status s = conn->Simple(setup.c_str()); !s.ok()) return s;
    return conn;
  }

  Param Now() const {
    return options.test_clock ? P(ToEpochMs(options.test_clock->Now())) : Param();
  }

  // Runs body(connection) with no transaction, on a pooled connection: each statement is
  // its own transaction. Retried like InTx after a deadlock or serialization failure.
  template <class T, class F>
  Result<T> Run(std::atomic<uint64_t>* retried, F body) {
    for (int attempt = 1;; ++attempt) {
      auto lease = pool.Acquire();
      if (!lease.ok()) return lease.status();
      PgConnection& c = *lease.value();
      c.ResetError();
      Result<T> r = body(c);
      const std::string state = c.last_sqlstate();
      if (c.broken()) lease.value().Discard();
      if (!r.ok() && IsRetryable(state) && attempt < kMaxTxAttempts) {
        retried->fetch_add(1);
        LogWarn("statement retried", {{"sqlstate", state}, {"attempt", attempt}});
        continue;
      }
      return r;
    }
  }

  // Runs body(connection) inside BEGIN … COMMIT. A failed body or an error status rolls
  // back. Deadlocks and serialization failures are retried up to kMaxTxAttempts times.
  template <class T, class F>
  Result<T> InTx(std::atomic<uint64_t>* retried, F body) {
    for (int attempt = 1;; ++attempt) {
      auto lease = pool.Acquire();
      if (!lease.ok()) return lease.status();
      PgConnection& c = *lease.value();
      c.ResetError();
      Status s = c.Simple("BEGIN");
      std::optional<Result<T>> r;
      if (s.ok()) {
        r.emplace(body(c));
        if (r->ok()) {
          s = c.Simple("COMMIT");
          if (s.ok()) return std::move(*r);
        }
        c.Simple("ROLLBACK");
      }
      const std::string state = c.last_sqlstate();
      if (c.broken()) lease.value().Discard();
      if (IsRetryable(state) && attempt < kMaxTxAttempts) {
        retried->fetch_add(1);
        LogWarn("transaction retried", {{"sqlstate", state}, {"attempt", attempt}});
        continue;
      }
      if (!s.ok()) return s;
      return std::move(*r);
    }
  }
};

PgStore::PgStore(PgOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
PgStore::~PgStore() = default;

namespace {


SeatStatus ParseSeatStatus(std::string_view s) {
  if (s == "HELD") return SeatStatus::kHeld;
  if (s == "BOOKED") return SeatStatus::kBooked;
  return SeatStatus::kAvailable;
}

Showtime ReadShowtime(const PGresult* r, int row) {
  Showtime s;
  s.id = Int(r, row, 0);
  s.title = Text(r, row, 1);
  s.cinema = Text(r, row, 2);
  s.hall = Text(r, row, 3);
  s.starts_at = FromEpochMs(Int(r, row, 4));
  s.seat_count = static_cast<int>(Int(r, row, 5));
  return s;
}

Hold ReadHold(const PGresult* r) {
  Hold h;
  h.hold_id = Text(r, 0, 0);
  h.showtime_id = Int(r, 0, 1);
  h.customer_id = Int(r, 0, 2);
  h.seats = ParseArray(Text(r, 0, 3));
  const std::string status = Text(r, 0, 4);
  h.created_at = FromEpochMs(Int(r, 0, 5));
  h.expires_at = FromEpochMs(Int(r, 0, 6));
  if (status == "RELEASED") {
    h.state = HoldState::kReleased;
  } else if (status == "BOOKED") {
    h.state = HoldState::kBooked;
  } else {
    h.state = Bool(r, 0, 7) ? HoldState::kExpired : HoldState::kHeld;
  }
  return h;
}

Status LoadPrices(PgConnection& c, std::vector<Showtime>* list) {
  if (list->empty()) return Status::Ok();
  std::vector<int64_t> ids;
  for (const auto& s : *list) ids.push_back(s.id);
  auto res = c.Exec(kSelectPrices, {IntArrayLiteral(ids)});
  if (!res.ok()) return res.status();
  const PGresult* r = res.value().get();
  for (int i = 0; i < PQntuples(r); ++i) {
    const int64_t id = Int(r, i, 0);
    for (auto& s : *list) {
      if (s.id == id) s.prices[Text(r, i, 1)] = Price{Int(r, i, 2), Text(r, i, 3)};
    }
  }
  return Status::Ok();
}

Booking ReadBooking(const PGresult* r) {
  Booking b;
  b.id = Int(r, 0, 0);
  b.hold_id = Text(r, 0, 1);
  b.showtime_id = Int(r, 0, 2);
  b.customer_id = Int(r, 0, 3);
  b.seats = ParseArray(Text(r, 0, 4));
  b.status = ParseBookingStatus(Text(r, 0, 5)).value_or(BookingStatus::kFailed);
  b.amount = Price{Int(r, 0, 6), Text(r, 0, 7)};
  b.session_id = Text(r, 0, 8);
  b.payment_url = Text(r, 0, 9);
  if (!PQgetisnull(r, 0, 10)) b.payment_expires_at = FromEpochMs(Int(r, 0, 10));
  b.payment_id = Text(r, 0, 11);
  b.created_at = FromEpochMs(Int(r, 0, 12));
  return b;
}

Status Done(const Result<PgResultPtr>& r) { return r.ok() ? Status::Ok() : r.status(); }

Param OptMs(const std::optional<Instant>& t) { return t ? P(ToEpochMs(*t)) : Param(); }

// The money rules' primitives over an open transaction. `now` is read once from the
// database clock (or the test clock) and passed to every statement as $1 where it counts.
class PgMoneyTx final : public MoneyTx {
 public:
  PgMoneyTx(PgConnection& c, Param clock_override) : c_(c), clock_(std::move(clock_override)) {}

  Result<Instant> Now() override {
    auto r = c_.Exec(kNowMs, {clock_});
    if (!r.ok()) return r.status();
    return FromEpochMs(Int(r.value().get(), 0, 0));
  }
  Result<Hold> LockHold(const std::string& hold_id, int64_t customer_id, Instant now) override {
    if (!IsUuid(hold_id)) return HoldNotFound(hold_id);
    auto r = c_.Exec(kLockHold, {P(ToEpochMs(now)), hold_id, P(customer_id)});
    if (!r.ok()) return r.status();
    if (PQntuples(r.value().get()) == 0) return HoldNotFound(hold_id);
    return ReadHold(r.value().get());
  }
  Result<int64_t> PendingBookingOf(const std::string& hold_id) override {
    auto r = c_.Exec(kPendingBookingOfHold, {hold_id});
    if (!r.ok()) return r.status();
    return PQntuples(r.value().get()) == 0 ? int64_t{0} : Int(r.value().get(), 0, 0);
  }
  Result<int> RearmSeats(const Hold& hold, Instant expires_at, Instant now) override {
    auto r = c_.Exec(kRearmSeats, {P(ToEpochMs(now)), P(hold.showtime_id), ArrayLiteral(hold.seats),
                                   hold.hold_id, P(ToEpochMs(expires_at))});
    if (!r.ok()) return r.status();
    return std::atoi(PQcmdTuples(r.value().get()));
  }
  Status SetHoldExpiry(const std::string& hold_id, Instant expires_at) override {
    return Done(c_.Exec(kSetHoldExpiry, {P(ToEpochMs(expires_at)), hold_id}));
  }
  Result<std::vector<Price>> SeatPrices(int64_t showtime_id,
                                        const std::vector<std::string>& seats) override {
    auto r = c_.Exec(kSeatPrices, {P(showtime_id), ArrayLiteral(seats)});
    if (!r.ok()) return r.status();
    const PGresult* g = r.value().get();
    std::vector<Price> prices;
    for (int i = 0; i < PQntuples(g); ++i) prices.push_back(Price{Int(g, i, 0), Text(g, i, 1)});
    return prices;
  }
  Result<int64_t> InsertBooking(const Booking& b, Instant now) override {
    auto r = c_.Exec(kInsertBooking,
                     {b.hold_id, P(b.showtime_id), P(b.customer_id), ArrayLiteral(b.seats),
                      P(b.amount.amount), b.amount.currency, P(ToEpochMs(now))});
    if (!r.ok()) return r.status();
    return Int(r.value().get(), 0, 0);
  }
  Result<std::optional<Booking>> LockBooking(int64_t booking_id) override {
    auto r = c_.Exec(kLockBooking, {P(booking_id)});
    if (!r.ok()) return r.status();
    if (PQntuples(r.value().get()) == 0) return std::optional<Booking>();
    return std::optional<Booking>(ReadBooking(r.value().get()));
  }
  Result<bool> InsertPayment(const PaymentReport& p, int64_t booking_id, Instant now) override {
    auto r =
        c_.Exec(kInsertPayment, {p.payment_id, p.session_id, booking_id ? P(booking_id) : Param(),
                                 std::string(p.succeeded ? "SUCCEEDED" : "FAILED"), P(p.amount),
                                 p.currency, P(ToEpochMs(now))});
    if (!r.ok()) return r.status();
    return PQntuples(r.value().get()) == 1;
  }
  Result<bool> ConfirmSeats(const Booking& b, Instant now) override {
    auto r = c_.Exec(kConfirmSeats, {P(ToEpochMs(now)), P(b.showtime_id), ArrayLiteral(b.seats),
                                     b.hold_id, P(b.id), P(static_cast<int64_t>(b.seats.size()))});
    if (!r.ok()) return r.status();
    return static_cast<size_t>(Int(r.value().get(), 0, 0)) == b.seats.size();
  }
  Status MarkHoldBooked(const std::string& hold_id) override {
    return Done(c_.Exec(kMarkHoldBooked, {hold_id}));
  }
  Status UpdateBooking(int64_t booking_id, BookingStatus status, const std::string& payment_id,
                       Instant now) override {
    return Done(c_.Exec(kUpdateBooking, {std::string(BookingStatusName(status)),
                                         payment_id.empty() ? Param() : Param(payment_id),
                                         P(ToEpochMs(now)), P(booking_id)}));
  }
  Status InsertRefund(const Refund& refund, Instant now) override {
    return Done(c_.Exec(
        kInsertRefund,
        {refund.refund_id, refund.payment_id, refund.booking_id ? P(refund.booking_id) : Param(),
         P(refund.amount.amount), refund.amount.currency, P(ToEpochMs(now))}));
  }
  Result<bool> MarkRefundIssued(const std::string& refund_id, const std::string& gateway_refund_id,
                                Instant now) override {
    auto r = c_.Exec(kMarkRefundIssued, {gateway_refund_id, P(ToEpochMs(now)), refund_id});
    if (!r.ok()) return r.status();
    return PQntuples(r.value().get()) == 1;
  }
  Result<std::optional<int64_t>> RefundBooking(const std::string& refund_id) override {
    if (!IsUuid(refund_id)) return std::optional<int64_t>();
    auto r = c_.Exec(kRefundBooking, {refund_id});
    if (!r.ok()) return r.status();
    if (PQntuples(r.value().get()) == 0) return std::optional<int64_t>();
    return std::optional<int64_t>(PQgetisnull(r.value().get(), 0, 0) ? 0
                                                                     : Int(r.value().get(), 0, 0));
  }
  Result<std::optional<IdempotencyRecord>> LockKey(int64_t customer_id,
                                                   const std::string& key) override {
    auto res = c_.Exec(kLockKey, {P(customer_id), key});
    if (!res.ok()) return res.status();
    const PGresult* r = res.value().get();
    if (PQntuples(r) == 0) return std::optional<IdempotencyRecord>();
    auto opt_ms = [r](int col) -> std::optional<Instant> {
      if (PQgetisnull(r, 0, col)) return std::nullopt;
      return FromEpochMs(Int(r, 0, col));
    };
    IdempotencyRecord rec;
    rec.key = IdempotencyKey{customer_id, key, Text(r, 0, 0)};
    auto phase = ParseKeyPhase(Text(r, 0, 1));
    if (!phase) return Status(Code::kInternal, "unknown idempotency key state " + Text(r, 0, 1));
    rec.phase = *phase;
    rec.token = Text(r, 0, 2);
    rec.locked_until = opt_ms(3);
    rec.booking_id = PQgetisnull(r, 0, 4) ? 0 : Int(r, 0, 4);
    rec.hold_expiry_before = opt_ms(5);
    rec.hold_expiry_after = opt_ms(6);
    rec.response_status = PQgetisnull(r, 0, 7) ? 0 : static_cast<int>(Int(r, 0, 7));
    rec.response_body = Text(r, 0, 8);
    return std::optional<IdempotencyRecord>(std::move(rec));
  }
  Result<bool> InsertKey(const IdempotencyRecord& rec, Instant now) override {
    auto res = c_.Exec(kInsertKey, {P(rec.key.customer_id), rec.key.key, rec.key.fingerprint,
                                    std::string(KeyPhaseName(rec.phase)), rec.token,
                                    OptMs(rec.locked_until), P(ToEpochMs(now))});
    if (!res.ok()) return res.status();
    return PQntuples(res.value().get()) == 1;
  }
  Status UpdateKey(const IdempotencyRecord& rec, Instant now) override {
    return Done(c_.Exec(
        kUpdateKey, {P(rec.key.customer_id), rec.key.key, std::string(KeyPhaseName(rec.phase)),
                     rec.token.empty() ? Param() : Param(rec.token), OptMs(rec.locked_until),
                     rec.booking_id ? P(rec.booking_id) : Param(), OptMs(rec.hold_expiry_before),
                     OptMs(rec.hold_expiry_after),
                     rec.response_status ? P(int64_t{rec.response_status}) : Param(),
                     rec.response_status ? Param(rec.response_body) : Param(), P(ToEpochMs(now))}));
  }
  Status DeleteKey(int64_t customer_id, const std::string& key) override {
    return Done(c_.Exec(kDeleteKey, {P(customer_id), key}));
  }
  Status ResetSeatsExpiry(const Hold& hold, Instant from, Instant to) override {
    return Done(c_.Exec(kResetSeatsExpiry, {P(hold.showtime_id), ArrayLiteral(hold.seats),
                                            hold.hold_id, P(ToEpochMs(from)), P(ToEpochMs(to))}));
  }
  Result<bool> AttachSession(int64_t booking_id, const std::string& session_id,
                             const std::string& url, Instant expires_at, Instant) override {
    auto res = c_.Exec(kAttachSession, {session_id, url, P(ToEpochMs(expires_at)), P(booking_id)});
    if (!res.ok()) return res.status();
    return std::atoi(PQcmdTuples(res.value().get())) == 1;
  }
  Status InsertEvent(const std::string& event_id, const std::string& type, const std::string& key,
                     const std::string& payload, Instant now) override {
    return Done(c_.Exec(kInsertEvent, {event_id, type, key, payload, P(ToEpochMs(now))}));
  }

 private:
  PgConnection& c_;
  Param clock_;
};

}  // namespace

Status PgStore::Migrate() {
  auto r = impl_->InTx<bool>(&retried_, [](PgConnection& c) -> Result<bool> {
    // Several instances may start at once: one migrates, the others wait, then see it done.
    if (Status s = c.Simple(kMigrationLock); !s.ok()) return s;
    if (Status s = c.Simple(kCreateMigrationTable); !s.ok()) return s;
    auto applied = c.Exec(kAppliedVersions, {});
    if (!applied.ok()) return applied.status();
    std::unordered_set<int64_t> done;
    for (int i = 0; i < PQntuples(applied.value().get()); ++i)
      done.insert(Int(applied.value().get(), i, 0));
    for (const Migration& m : PostgresMigrations()) {
      if (done.count(m.version)) continue;
      if (Status s = c.Simple(std::string(m.sql).c_str()); !s.ok()) {
        return Status(Code::kInternal,
                      "migration " + std::to_string(m.version) + ": " + s.message());
      }
      if (auto rec = c.Exec(kRecordMigration, {P(int64_t{m.version}), std::string(m.name)});
          !rec.ok()) {
        return rec.status();
      }
      LogInfo("migration applied",
              {{"version", m.version}, {"name", m.name}, {"store", "postgresql"}});
    }
    return true;
  });
  return r.ok() ? Status::Ok() : r.status();
}

Status PgStore::Ping() {
  auto r = impl_->Run<bool>(&retried_, [](PgConnection& c) -> Result<bool> {
    auto res = c.Exec(kPing, {});
    if (!res.ok()) return res.status();
    return true;
  });
  return r.ok() ? Status::Ok() : r.status();
}

Result<int64_t> PgStore::CreateShowtime(const NewShowtime& st) {
  return impl_->InTx<int64_t>(&retried_, [&](PgConnection& c) -> Result<int64_t> {
    int64_t seat_count = 0;
    for (const auto& r : st.rows) seat_count += r.seats;
    auto ins = c.Exec(kInsertShowtime,
                      {st.title, st.cinema, st.hall, P(ToEpochMs(st.starts_at)), P(seat_count)});
    if (!ins.ok()) return ins.status();
    const int64_t id = Int(ins.value().get(), 0, 0);
    std::vector<std::string> categories, currencies;
    std::vector<int64_t> amounts;
    for (const auto& [category, price] : st.prices) {
      categories.push_back(category);
      amounts.push_back(price.amount);
      currencies.push_back(price.currency);
    }
    auto prices = c.Exec(kInsertPrices, {P(id), ArrayLiteral(categories), IntArrayLiteral(amounts),
                                         ArrayLiteral(currencies)});
    if (!prices.ok()) return prices.status();
    std::vector<std::string> codes, rows, seat_categories;
    std::vector<int64_t> numbers, orders;
    for (const auto& row : st.rows) {
      for (int n = 1; n <= row.seats; ++n) {
        orders.push_back(static_cast<int64_t>(codes.size()));
        codes.push_back(row.row + std::to_string(n));
        rows.push_back(row.row);
        numbers.push_back(n);
        seat_categories.push_back(row.category);
      }
    }
    auto seats = c.Exec(kInsertSeats,
                        {P(id), ArrayLiteral(codes), ArrayLiteral(rows), IntArrayLiteral(numbers),
                         IntArrayLiteral(orders), ArrayLiteral(seat_categories)});
    if (!seats.ok()) return seats.status();
    return id;
  });
}

Result<Showtime> PgStore::GetShowtime(int64_t showtime_id) {
  return impl_->Run<Showtime>(&retried_, [&](PgConnection& c) -> Result<Showtime> {
    auto res = c.Exec(kSelectShowtime, {P(showtime_id)});
    if (!res.ok()) return res.status();
    if (PQntuples(res.value().get()) == 0) {
      return ShowtimeNotFound(showtime_id);
    }
    std::vector<Showtime> one{ReadShowtime(res.value().get(), 0)};
    if (Status s = LoadPrices(c, &one); !s.ok()) return s;
    return one[0];
  });
}

Result<std::vector<Showtime>> PgStore::ListShowtimes(const ShowtimeQuery& q) {
  return impl_->Run<std::vector<Showtime>>(
      &retried_, [&](PgConnection& c) -> Result<std::vector<Showtime>> {
        auto opt = [](const std::optional<Instant>& t) { return t ? P(ToEpochMs(*t)) : Param(); };
        auto res =
            c.Exec(kListShowtimes, {opt(q.from), opt(q.to), q.cinema ? P(*q.cinema) : Param(),
                                    q.after ? P(ToEpochMs(q.after->first)) : Param(),
                                    q.after ? P(q.after->second) : Param(), P(int64_t{q.limit})});
        if (!res.ok()) return res.status();
        std::vector<Showtime> out;
        for (int i = 0; i < PQntuples(res.value().get()); ++i)
          out.push_back(ReadShowtime(res.value().get(), i));
        if (Status s = LoadPrices(c, &out); !s.ok()) return s;
        return out;
      });
}

Result<int64_t> PgStore::CountShowtimes() {
  return impl_->Run<int64_t>(&retried_, [&](PgConnection& c) -> Result<int64_t> {
    auto res = c.Exec(kCountShowtimes, {});
    if (!res.ok()) return res.status();
    return Int(res.value().get(), 0, 0);
  });
}

Result<AuditReport> PgStore::Audit() {
  return impl_->Run<AuditReport>(&retried_, [&](PgConnection& c) -> Result<AuditReport> {
    auto res = c.Exec(kAudit, {});
    if (!res.ok()) return res.status();
    const PGresult* r = res.value().get();
    return AuditReport{Int(r, 0, 0), Int(r, 0, 1), Int(r, 0, 2), Int(r, 0, 3),
                       Int(r, 0, 4), Int(r, 0, 5), Int(r, 0, 6)};
  });
}

Status PgStore::SetWaitingRoom(int64_t showtime_id, const WaitingRoomConfig& config) {
  return impl_
      ->Run<bool>(&retried_,
                  [&](PgConnection& c) -> Result<bool> {
                    auto res =
                        c.Exec(kSetWaitingRoom,
                               {impl_->Now(), P(showtime_id), config.enabled ? "true" : "false",
                                P(int64_t{config.active_limit}), P(config.admission_ttl.count())});
                    if (!res.ok()) return res.status();
                    if (std::atoi(PQcmdTuples(res.value().get())) == 0)
                      return ShowtimeNotFound(showtime_id);
                    return true;
                  })
      .status();
}

Result<std::vector<std::pair<int64_t, WaitingRoomConfig>>> PgStore::EnabledWaitingRooms() {
  using Rooms = std::vector<std::pair<int64_t, WaitingRoomConfig>>;
  return impl_->Run<Rooms>(&retried_, [&](PgConnection& c) -> Result<Rooms> {
    auto res = c.Exec(kEnabledWaitingRooms, {});
    if (!res.ok()) return res.status();
    const PGresult* r = res.value().get();
    Rooms out;
    for (int i = 0; i < PQntuples(r); ++i) {
      out.emplace_back(Int(r, i, 0), WaitingRoomConfig{true, static_cast<int>(Int(r, i, 1)),
                                                       Millis(Int(r, i, 2))});
    }
    return out;
  });
}

Result<SeatMap> PgStore::GetSeatMap(int64_t showtime_id) {
  return impl_->Run<SeatMap>(&retried_, [&](PgConnection& c) -> Result<SeatMap> {
    auto res = c.Exec(kSelectSeatMap, {impl_->Now(), P(showtime_id)});
    if (!res.ok()) return res.status();
    const PGresult* r = res.value().get();
    if (PQntuples(r) == 0) {
      return ShowtimeNotFound(showtime_id);
    }
    SeatMap map;
    map.showtime_id = showtime_id;
    map.as_of = FromEpochMs(Int(r, 0, 5));
    map.seats.reserve(static_cast<size_t>(PQntuples(r)));
    for (int i = 0; i < PQntuples(r); ++i) {
      map.seats.push_back(SeatView{Text(r, i, 0), Text(r, i, 1), static_cast<int>(Int(r, i, 2)),
                                   Text(r, i, 3), ParseSeatStatus(PQgetvalue(r, i, 4))});
    }
    return map;
  });
}

Result<std::vector<SeatOwner>> PgStore::GetSeatOwners(int64_t showtime_id) {
  return impl_->Run<std::vector<SeatOwner>>(
      &retried_, [&](PgConnection& c) -> Result<std::vector<SeatOwner>> {
        auto res = c.Exec(kSelectSeatOwners, {impl_->Now(), P(showtime_id)});
        if (!res.ok()) return res.status();
        const PGresult* r = res.value().get();
        std::vector<SeatOwner> out;
        for (int i = 0; i < PQntuples(r); ++i) {
          out.push_back(SeatOwner{Text(r, i, 0), ParseSeatStatus(PQgetvalue(r, i, 2)),
                                  PQgetisnull(r, i, 3) ? "" : Text(r, i, 3),
                                  PQgetisnull(r, i, 4) ? 0 : Int(r, i, 4)});
        }
        return out;
      });
}

Result<Hold> PgStore::HoldSeats(const HoldRequest& req) {
  // The batch statement with one request: one statement, its own transaction.
  const std::vector<Param> params = HoldBatchParams(impl_->Now(), {&req});
  return impl_->Run<Hold>(&retried_, [&](PgConnection& c) -> Result<Hold> {
    auto res = c.Exec(kHoldBatch, params);
    if (!res.ok()) return res.status();
    auto rows = ReadHoldRows(res.value().get(), 1);
    if (!rows.ok()) return rows.status();
    if (auto outcome = HoldOutcome(req, rows->front())) return std::move(*outcome);
    // Some codes are not seats of this showtime, or there is no such showtime (rare path).
    auto map = c.Exec(kExistingSeats, {P(req.showtime_id), ArrayLiteral(req.seats)});
    if (!map.ok()) return map.status();
    const PGresult* m = map.value().get();
    std::vector<std::string> found;
    for (int i = 0; i < PQntuples(m); ++i) found.push_back(Text(m, i, 0));
    bool exists = true;
    if (found.empty()) {
      auto showtime = c.Exec(kShowtimeExists, {P(req.showtime_id)});
      if (!showtime.ok()) return showtime.status();
      exists = PQntuples(showtime.value().get()) > 0;
    }
    return ExplainUnknown(req, found, exists);
  });
}

uint64_t PgStore::hold_statements() const {
  return impl_->hold_counts.statements.load(std::memory_order_relaxed);
}
uint64_t PgStore::batched_holds() const {
  return impl_->hold_counts.requests.load(std::memory_order_relaxed);
}

io::asio::awaitable<Result<Hold>> PgStore::HoldSeatsAsync(HoldRequest request) {
  Impl::LoopState* loop = impl_->Loop();
  if (!loop) co_return HoldSeats(request);  // off the loops
  co_return co_await loop->batcher.Decide(std::move(request));
}

Result<Hold> PgStore::GetHold(const std::string& hold_id, int64_t customer_id) {
  if (!IsUuid(hold_id)) return HoldNotFound(hold_id);
  return impl_->Run<Hold>(&retried_, [&](PgConnection& c) -> Result<Hold> {
    auto res = c.Exec(kSelectHold, {impl_->Now(), hold_id, P(customer_id)});
    if (!res.ok()) return res.status();
    if (PQntuples(res.value().get()) == 0) return HoldNotFound(hold_id);
    return ReadHold(res.value().get());
  });
}

Result<Hold> PgStore::ReleaseHold(const std::string& hold_id, int64_t customer_id) {
  if (!IsUuid(hold_id)) return HoldNotFound(hold_id);
  return impl_->InTx<Hold>(&retried_, [&](PgConnection& c) -> Result<Hold> {
    auto res = c.Exec(kLockHold, {impl_->Now(), hold_id, P(customer_id)});
    if (!res.ok()) return res.status();
    if (PQntuples(res.value().get()) == 0) return HoldNotFound(hold_id);
    const Hold hold = ReadHold(res.value().get());
    if (hold.state == HoldState::kBooked) return Status(Code::kNotActive, "hold is booked");
    if (hold.state == HoldState::kReleased) return hold;
    // Only rows this hold id still owns change: a newer hold on the same seats is untouched.
    auto rel = c.Exec(kReleaseSeats, {P(hold.showtime_id), ArrayLiteral(hold.seats), hold_id});
    if (!rel.ok()) return rel.status();
    auto mark = c.Exec(kMarkHoldReleased, {hold_id});
    if (!mark.ok()) return mark.status();
    return hold;
  });
}

Result<Hold> PgStore::ExtendHold(const std::string& hold_id, int64_t customer_id, Millis ttl,
                                 Millis max_lifetime) {
  return impl_->InTx<Hold>(&retried_, [&](PgConnection& c) {
    PgMoneyTx tx(c, impl_->Now());
    return ExtendHoldIn(tx, hold_id, customer_id, ttl, max_lifetime);
  });
}

Result<Booking> PgStore::StartCheckout(const std::string& hold_id, int64_t customer_id, Millis ttl,
                                       Millis max_lifetime) {
  return impl_->InTx<Booking>(&retried_, [&](PgConnection& c) {
    PgMoneyTx tx(c, impl_->Now());
    return StartCheckoutIn(tx, nullptr, hold_id, customer_id, ttl, max_lifetime);
  });
}

Result<Settlement> PgStore::SettlePayment(const PaymentReport& report) {
  return impl_->InTx<Settlement>(&retried_, [&](PgConnection& c) {
    PgMoneyTx tx(c, impl_->Now());
    return SettlePaymentIn(tx, report);
  });
}

Status PgStore::AttachPaymentSession(int64_t booking_id, const std::string& session_id,
                                     const std::string& url, Instant expires_at) {
  auto r = impl_->Run<bool>(&retried_, [&](PgConnection& c) -> Result<bool> {
    PgMoneyTx tx(c, impl_->Now());
    return tx.AttachSession(booking_id, session_id, url, expires_at, Instant());
  });
  if (!r.ok()) return r.status();
  if (!r.value()) return Status(Code::kNotActive, "booking is not pending or has another session");
  return Status::Ok();
}

Result<Booking> PgStore::StartCheckout(const KeyLock& lock, const std::string& hold_id, Millis ttl,
                                       Millis max_lifetime) {
  return impl_->InTx<Booking>(&retried_, [&](PgConnection& c) {
    PgMoneyTx tx(c, impl_->Now());
    return StartCheckoutIn(tx, &lock, hold_id, lock.customer_id, ttl, max_lifetime);
  });
}

Result<IdempotencyRecord> PgStore::ClaimCheckoutKey(const IdempotencyKey& key, Millis lease) {
  return impl_->InTx<IdempotencyRecord>(&retried_, [&](PgConnection& c) {
    PgMoneyTx tx(c, impl_->Now());
    return ClaimCheckoutKeyIn(tx, key, lease);
  });
}

Result<bool> PgStore::FinishCheckout(const KeyLock& lock, const std::string& session_id,
                                     const std::string& url, Instant expires_at,
                                     int response_status, const std::string& response_body) {
  return impl_->InTx<bool>(&retried_, [&](PgConnection& c) {
    PgMoneyTx tx(c, impl_->Now());
    return FinishCheckoutIn(tx, lock, session_id, url, expires_at, response_status, response_body);
  });
}

Status PgStore::AbortCheckout(const KeyLock& lock) {
  auto r = impl_->InTx<bool>(&retried_, [&](PgConnection& c) -> Result<bool> {
    PgMoneyTx tx(c, impl_->Now());
    if (Status s = AbortCheckoutIn(tx, lock); !s.ok()) return s;
    return true;
  });
  return r.ok() ? Status::Ok() : r.status();
}

Result<int> PgStore::PurgeCheckoutKeys(Millis older_than, int limit) {
  return impl_->Run<int>(&retried_, [&](PgConnection& c) -> Result<int> {
    auto res = c.Exec(kPurgeKeys, {impl_->Now(), P(older_than.count()), P(int64_t{limit})});
    if (!res.ok()) return res.status();
    return std::atoi(PQcmdTuples(res.value().get()));
  });
}

namespace {

// The booking kSelectBooking found, if it is the customer's (or kAnyCustomer's).
Result<Booking> BookingOf(const PGresult* r, int64_t booking_id, int64_t customer_id) {
  if (PQntuples(r) == 0) return BookingNotFound(booking_id);
  Booking b = ReadBooking(r);
  if (customer_id != Store::kAnyCustomer && b.customer_id != customer_id) {
    return BookingNotFound(booking_id);
  }
  return b;
}

}  // namespace

Result<Booking> PgStore::GetBooking(int64_t booking_id, int64_t customer_id) {
  return impl_->Run<Booking>(&retried_, [&](PgConnection& c) -> Result<Booking> {
    auto res = c.Exec(kSelectBooking, {P(booking_id)});
    if (!res.ok()) return res.status();
    return BookingOf(res.value().get(), booking_id, customer_id);
  });
}

io::asio::awaitable<Result<Booking>> PgStore::GetBookingAsync(int64_t booking_id,
                                                              int64_t customer_id) {
  Impl::LoopState* loop = impl_->Loop();
  if (!loop) co_return GetBooking(booking_id, customer_id);  // off the loops
  std::vector<Param> params = {P(booking_id)};
  auto res = co_await loop->pipeline.Exec(kSelectBooking, std::move(params));
  if (!res.ok()) co_return res.status();
  co_return BookingOf(res->get(), booking_id, customer_id);
}

Result<std::vector<OutboxEvent>> PgStore::PendingEvents(int64_t after_id, int limit) {
  return impl_->Run<std::vector<OutboxEvent>>(
      &retried_, [&](PgConnection& c) -> Result<std::vector<OutboxEvent>> {
        auto res = c.Exec(kPendingEvents, {P(after_id), P(int64_t{limit})});
        if (!res.ok()) return res.status();
        const PGresult* r = res.value().get();
        std::vector<OutboxEvent> out;
        for (int i = 0; i < PQntuples(r); ++i) {
          out.push_back(OutboxEvent{Int(r, i, 0), Text(r, i, 1), Text(r, i, 2), Text(r, i, 3),
                                    Text(r, i, 4), FromEpochMs(Int(r, i, 5))});
        }
        return out;
      });
}

Result<std::vector<Booking>> PgStore::ClaimStaleCheckouts(Millis older_than, Millis lease,
                                                          int limit) {
  return impl_->Run<std::vector<Booking>>(
      &retried_, [&](PgConnection& c) -> Result<std::vector<Booking>> {
        auto claimed = c.Exec(kClaimStale, {impl_->Now(), P(older_than.count()), P(lease.count()),
                                            P(int64_t{limit})});
        if (!claimed.ok()) return claimed.status();
        std::vector<Booking> out;
        for (int i = 0; i < PQntuples(claimed.value().get()); ++i) {
          auto b = c.Exec(kSelectBooking, {P(Int(claimed.value().get(), i, 0))});
          if (!b.ok()) return b.status();
          if (PQntuples(b.value().get()) == 1) out.push_back(ReadBooking(b.value().get()));
        }
        return out;
      });
}

Status PgStore::ReleaseCheckoutClaims(const std::vector<int64_t>& booking_ids) {
  if (booking_ids.empty()) return Status::Ok();
  auto r = impl_->Run<bool>(&retried_, [&](PgConnection& c) -> Result<bool> {
    auto res = c.Exec(kReleaseClaims, {IntArrayLiteral(booking_ids)});
    if (!res.ok()) return res.status();
    return true;
  });
  return r.ok() ? Status::Ok() : r.status();
}

Result<bool> PgStore::AbandonCheckout(int64_t booking_id) {
  return impl_->InTx<bool>(&retried_, [&](PgConnection& c) {
    PgMoneyTx tx(c, impl_->Now());
    return AbandonCheckoutIn(tx, booking_id);
  });
}

Status PgStore::CompleteRefund(const std::string& refund_id, const std::string& gateway_refund_id) {
  auto r = impl_->InTx<bool>(&retried_, [&](PgConnection& c) -> Result<bool> {
    PgMoneyTx tx(c, impl_->Now());
    Status s = CompleteRefundIn(tx, refund_id, gateway_refund_id);
    if (!s.ok()) return s;
    return true;
  });
  return r.ok() ? Status::Ok() : r.status();
}

Result<std::map<BookingStatus, int64_t>> PgStore::CountRecentBookings(Millis window) {
  return impl_->Run<std::map<BookingStatus, int64_t>>(
      &retried_, [&](PgConnection& c) -> Result<std::map<BookingStatus, int64_t>> {
        auto res = c.Exec(kCountRecentBookings, {impl_->Now(), P(window.count())});
        if (!res.ok()) return res.status();
        std::map<BookingStatus, int64_t> out;
        for (int i = 0; i < PQntuples(res.value().get()); ++i) {
          if (auto status = ParseBookingStatus(Text(res.value().get(), i, 0)))
            out[*status] = Int(res.value().get(), i, 1);
        }
        return out;
      });
}

Result<bool> PgStore::AcquireLease(const std::string& name, const std::string& owner,
                                   Millis lease) {
  return impl_->Run<bool>(&retried_, [&](PgConnection& c) -> Result<bool> {
    auto res = c.Exec(kAcquireLease, {impl_->Now(), name, owner, P(lease.count())});
    if (!res.ok()) return res.status();
    return PQntuples(res.value().get()) == 1;
  });
}

Status PgStore::MarkEventsPublished(const std::vector<int64_t>& ids, const std::string& lease_name,
                                    const std::string& owner) {
  if (ids.empty()) return Status::Ok();
  auto r = impl_->Run<bool>(&retried_, [&](PgConnection& c) -> Result<bool> {
    auto res = c.Exec(kMarkPublished, {impl_->Now(), IntArrayLiteral(ids), lease_name, owner});
    if (!res.ok()) return res.status();
    return Int(res.value().get(), 0, 0) == 1;
  });
  if (!r.ok()) return r.status();
  if (!r.value()) return Status(Code::kNotActive, "the lease " + lease_name + " was lost");
  return Status::Ok();
}

Result<std::vector<Refund>> PgStore::PendingRefunds(int limit) {
  return impl_->Run<std::vector<Refund>>(
      &retried_, [&](PgConnection& c) -> Result<std::vector<Refund>> {
        auto res = c.Exec(kPendingRefunds, {impl_->Now(), P(int64_t{limit})});
        if (!res.ok()) return res.status();
        const PGresult* r = res.value().get();
        std::vector<Refund> out;
        for (int i = 0; i < PQntuples(r); ++i) {
          out.push_back(Refund{Text(r, i, 0), Text(r, i, 1),
                               PQgetisnull(r, i, 2) ? 0 : Int(r, i, 2),
                               Price{Int(r, i, 3), Text(r, i, 4)}, false,
                               static_cast<int>(Int(r, i, 5))});
        }
        return out;
      });
}

Status PgStore::RefundAttemptFailed(const std::string& refund_id, bool refused,
                                    const std::string& error, Millis retry_after) {
  if (!IsUuid(refund_id)) return Status(Code::kNotFound, "refund " + refund_id + " not found");
  auto r = impl_->Run<bool>(&retried_, [&](PgConnection& c) -> Result<bool> {
    auto res = c.Exec(kRefundAttemptFailed, {impl_->Now(), refused ? "true" : "false",
                                             error, P(retry_after.count()),
                                             refund_id});
    if (!res.ok()) return res.status();
    return true;
  });
  return r.ok() ? Status::Ok() : r.status();
}

Result<RefundBacklog> PgStore::CountRefundBacklog() {
  return impl_->Run<RefundBacklog>(&retried_, [&](PgConnection& c) -> Result<RefundBacklog> {
    auto res = c.Exec(kRefundBacklog, {});
    if (!res.ok()) return res.status();
    return RefundBacklog{Int(res.value().get(), 0, 0), Int(res.value().get(), 0, 1)};
  });
}

Result<int> PgStore::SweepExpired(int batch_limit, std::vector<SeatRef>* freed) {
  return impl_->Run<int>(&retried_, [&](PgConnection& c) -> Result<int> {
    auto res = c.Exec(kSweepExpired, {impl_->Now(), P(int64_t{batch_limit})});
    if (!res.ok()) return res.status();
    const PGresult* r = res.value().get();
    if (freed) {
      for (int i = 0; i < PQntuples(r); ++i) freed->push_back(SeatRef{Int(r, i, 0), Text(r, i, 1)});
    }
    return PQntuples(r);
  });
}

}  // namespace boxoffice
