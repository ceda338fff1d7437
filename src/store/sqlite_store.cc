#include "store/sqlite_store.h"

#include <sqlite3.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <variant>

#include "core/log.h"
#include "core/pool.h"
#include "core/seats.h"
#include "store/migrations.h"
#include "store/money.h"

namespace boxoffice {
namespace {

// Named statements. `now` is always a parameter: the store's clock, not SQLite's.
constexpr const char* kPragmaSetup =
    "PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON; PRAGMA temp_store=MEMORY;";
constexpr const char* kCreateMigrationTable =
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT "
    "NULL, applied_at INTEGER NOT NULL)";
constexpr const char* kAppliedVersions = "SELECT version FROM schema_migrations";
constexpr const char* kRecordMigration =
    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)";

constexpr const char* kInsertShowtime =
    "INSERT INTO showtime (title, cinema, hall, starts_at, seat_count) VALUES (?, ?, ?, ?, ?)";
constexpr const char* kInsertPrice =
    "INSERT INTO price (showtime_id, category, amount, currency) VALUES (?, ?, ?, ?)";
constexpr const char* kInsertSeat =
    "INSERT INTO show_seat (showtime_id, seat_code, row_label, seat_number, seat_order, "
    "category) VALUES (?, ?, ?, ?, ?, ?)";
constexpr const char* kSelectShowtime =
    "SELECT showtime_id, title, cinema, hall, starts_at, seat_count FROM showtime "
    "WHERE showtime_id = ?";
constexpr const char* kSelectPrices =
    "SELECT category, amount, currency FROM price WHERE showtime_id = ?";
constexpr const char* kListShowtimes =
    "SELECT showtime_id, title, cinema, hall, starts_at, seat_count FROM showtime "
    " WHERE (?1 IS NULL OR starts_at >= ?1) AND (?2 IS NULL OR starts_at < ?2)"
    "   AND (?3 IS NULL OR cinema = ?3)"
    "   AND (?4 IS NULL OR starts_at > ?4 OR (starts_at = ?4 AND showtime_id > ?5))"
    " ORDER BY starts_at, showtime_id LIMIT ?6";
constexpr const char* kCountShowtimes = "SELECT count(*) FROM showtime";
// Seats are comma-separated: membership is a search of ",A1," in ",A1,A2,".
constexpr const char* kAudit =
    "SELECT"
    " (SELECT count(*) FROM show_seat s LEFT JOIN booking b ON b.booking_id = s.booking_id"
    "   WHERE s.status = 'BOOKED' AND (b.booking_id IS NULL OR b.status <> 'CONFIRMED'"
    "         OR b.showtime_id <> s.showtime_id"
    "         OR instr(',' || b.seats || ',', ',' || s.seat_code || ',') = 0)),"
    " (SELECT count(*) FROM booking b WHERE b.status = 'CONFIRMED'"
    "   AND length(b.seats) - length(replace(b.seats, ',', '')) + 1 <>"
    "   (SELECT count(*) FROM show_seat s WHERE s.showtime_id = b.showtime_id"
    "     AND s.booking_id = b.booking_id AND s.status = 'BOOKED'"
    "     AND instr(',' || b.seats || ',', ',' || s.seat_code || ',') > 0)),"
    " (SELECT count(*) FROM payment p WHERE p.status = 'SUCCEEDED' AND"
    "   EXISTS (SELECT 1 FROM booking b WHERE b.payment_id = p.payment_id"
    "           AND b.status = 'CONFIRMED')"
    "   + EXISTS (SELECT 1 FROM refund r WHERE r.payment_id = p.payment_id) <> 1),"
    " (SELECT count(*) FROM refund WHERE status = 'PENDING'),"
    " (SELECT count(*) FROM show_seat WHERE status = 'BOOKED'),"
    " (SELECT count(*) FROM booking WHERE status = 'CONFIRMED'),"
    " (SELECT count(*) FROM payment WHERE status = 'SUCCEEDED')";
constexpr const char* kSetWaitingRoom =
    "INSERT INTO waiting_room (showtime_id, enabled, active_limit, admission_ttl_ms, updated_at)"
    " SELECT showtime_id, ?2, ?3, ?4, ?5 FROM showtime WHERE showtime_id = ?1"
    " ON CONFLICT (showtime_id) DO UPDATE SET enabled = excluded.enabled,"
    "   active_limit = excluded.active_limit, admission_ttl_ms = excluded.admission_ttl_ms,"
    "   updated_at = excluded.updated_at";
constexpr const char* kEnabledWaitingRooms =
    "SELECT showtime_id, active_limit, admission_ttl_ms FROM waiting_room WHERE enabled"
    " ORDER BY showtime_id";

constexpr const char* kSelectSeatMap =
    "SELECT seat_code, row_label, seat_number, category,"
    "       CASE WHEN status = 'HELD' AND hold_expires_at < ?2 THEN 'AVAILABLE' ELSE status END"
    "  FROM show_seat WHERE showtime_id = ?1 ORDER BY seat_order";
constexpr const char* kSelectSeatOwners =
    "SELECT seat_code,"
    "       CASE WHEN status = 'HELD' AND hold_expires_at < ?2 THEN 'AVAILABLE' ELSE status END,"
    "       CASE WHEN status = 'HELD' AND hold_expires_at < ?2 THEN NULL ELSE hold_id END,"
    "       CASE WHEN status = 'HELD' AND hold_expires_at < ?2 THEN NULL ELSE customer_id END"
    "  FROM show_seat WHERE showtime_id = ?1 ORDER BY seat_order";

// The seeds' conditional UPDATE: the availability check is in the WHERE clause and an
// expired hold counts as free. The caller compares the changed-row count to the seats.
constexpr const char* kHoldSeats =
    "UPDATE show_seat SET status = 'HELD', hold_id = ?1, customer_id = ?2,"
    "       hold_expires_at = ?3, booking_id = NULL"
    " WHERE showtime_id = ?4 AND seat_code IN (SELECT value FROM json_each(?5))"
    "   AND (status = 'AVAILABLE' OR (status = 'HELD' AND hold_expires_at < ?6))";
// Seats of the showtime the customer holds now (API.md's HOLD_LIMIT), read in the hold's
// write transaction: with one writer at a time, the count and the hold are atomic.
constexpr const char* kCustomerHeld =
    "SELECT COALESCE(sum(length(seats) - length(replace(seats, ',', '')) + 1), 0)"
    "  FROM seat_hold WHERE customer_id = ?1 AND showtime_id = ?2 AND status = 'HELD'"
    "   AND expires_at >= ?3";
// Which requested seats exist and which are free (or already ours), to explain a refusal.
constexpr const char* kExplainHold =
    "SELECT seat_code, status = 'AVAILABLE' OR (status = 'HELD' AND hold_expires_at < ?3)"
    "       OR hold_id = ?4"
    "  FROM show_seat WHERE showtime_id = ?1 AND seat_code IN (SELECT value FROM json_each(?2))";
constexpr const char* kShowtimeExists = "SELECT 1 FROM showtime WHERE showtime_id = ?";
constexpr const char* kInsertHold =
    "INSERT INTO seat_hold (hold_id, showtime_id, customer_id, seats, status, created_at,"
    " expires_at) VALUES (?, ?, ?, ?, 'HELD', ?, ?)";
constexpr const char* kSelectHold =
    "SELECT hold_id, showtime_id, customer_id, seats, status, created_at, expires_at"
    "  FROM seat_hold WHERE hold_id = ? AND customer_id = ?";
constexpr const char* kReleaseSeats =
    "UPDATE show_seat SET status = 'AVAILABLE', hold_id = NULL, customer_id = NULL,"
    "       hold_expires_at = NULL"
    " WHERE showtime_id = ? AND hold_id = ? AND status = 'HELD'";
constexpr const char* kMarkHoldReleased =
    "UPDATE seat_hold SET status = 'RELEASED' WHERE hold_id = ? AND status = 'HELD'";
constexpr const char* kSetHoldExpiry = "UPDATE seat_hold SET expires_at = ? WHERE hold_id = ?";
// The seeds' sweeper, batched: only rows whose hold has expired, at most ?2 of them.
constexpr const char* kSweepExpired =
    "UPDATE show_seat SET status = 'AVAILABLE', hold_id = NULL, customer_id = NULL,"
    "       hold_expires_at = NULL"
    " WHERE (showtime_id, seat_code) IN (SELECT showtime_id, seat_code FROM show_seat"
    "                                     WHERE status = 'HELD' AND hold_expires_at < ?1"
    "                                     LIMIT ?2)"
    "   AND status = 'HELD' AND hold_expires_at < ?1"
    " RETURNING showtime_id, seat_code";

constexpr const char* kPendingBookingOfHold =
    "SELECT booking_id FROM booking WHERE hold_id = ? AND status = 'PENDING'";
constexpr const char* kRearmSeats =
    "UPDATE show_seat SET hold_expires_at = ?1"
    " WHERE showtime_id = ?2 AND hold_id = ?3 AND status = 'HELD' AND hold_expires_at >= ?4";
constexpr const char* kSeatPrices =
    "SELECT p.amount, p.currency"
    "  FROM show_seat s JOIN price p ON p.showtime_id = s.showtime_id AND p.category = s.category"
    " WHERE s.showtime_id = ?1 AND s.seat_code IN (SELECT value FROM json_each(?2))";
constexpr const char* kInsertBooking =
    "INSERT INTO booking (hold_id, showtime_id, customer_id, seats, status, amount, currency,"
    " created_at, updated_at) VALUES (?1, ?2, ?3, ?4, 'PENDING', ?5, ?6, ?7, ?7)";
constexpr const char* kAttachSession =
    "UPDATE booking SET session_id = ?1, payment_url = ?2, payment_expires_at = ?3, updated_at = ?4"
    " WHERE booking_id = ?5 AND status = 'PENDING' AND (session_id IS NULL OR session_id = ?1)";
constexpr const char* kSelectBooking =
    "SELECT booking_id, hold_id, showtime_id, customer_id, seats, status, amount, currency,"
    "       session_id, payment_url, payment_expires_at, payment_id, created_at"
    "  FROM booking WHERE booking_id = ?";
constexpr const char* kInsertPayment =
    "INSERT INTO payment (payment_id, session_id, booking_id, status, amount, currency, "
    "received_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (payment_id) DO NOTHING";
// The seeds' confirm statement: only this hold's seats, only while it has not expired.
constexpr const char* kConfirmSeats =
    "UPDATE show_seat SET status = 'BOOKED', booking_id = ?1, hold_expires_at = NULL"
    " WHERE showtime_id = ?2 AND hold_id = ?3 AND status = 'HELD' AND hold_expires_at >= ?4";
constexpr const char* kMarkHoldBooked = "UPDATE seat_hold SET status = 'BOOKED' WHERE hold_id = ?";
constexpr const char* kUpdateBooking =
    "UPDATE booking SET status = ?1, payment_id = COALESCE(?2, payment_id), updated_at = ?3"
    " WHERE booking_id = ?4";
constexpr const char* kInsertRefund =
    "INSERT INTO refund (refund_id, payment_id, booking_id, amount, currency, status, created_at,"
    " next_attempt_at) VALUES (?1, ?2, ?3, ?4, ?5, 'PENDING', ?6, ?6)";
constexpr const char* kInsertEvent =
    "INSERT INTO outbox (event_id, type, key, payload, created_at) VALUES (?, ?, ?, ?, ?)";
constexpr const char* kPendingEvents =
    "SELECT id, event_id, type, key, payload, created_at FROM outbox"
    " WHERE published_at IS NULL AND id > ? ORDER BY id LIMIT ?";
// Fenced: one statement, so the lease is checked atomically with the mark.
constexpr const char* kMarkPublished =
    "UPDATE outbox SET published_at = ?1 WHERE published_at IS NULL"
    "   AND id IN (SELECT value FROM json_each(?2))"
    "   AND EXISTS (SELECT 1 FROM relay_lease WHERE name = ?3 AND owner = ?4 AND until >= ?1)";
constexpr const char* kLeaseHeld =
    "SELECT 1 FROM relay_lease WHERE name = ?1 AND owner = ?2 AND until >= ?3";
constexpr const char* kRefundBooking = "SELECT booking_id FROM refund WHERE refund_id = ?";
constexpr const char* kMarkRefundIssued =
    "UPDATE refund SET status = 'ISSUED', gateway_refund_id = ?1, issued_at = ?2"
    " WHERE refund_id = ?3 AND status = 'PENDING'";
// One writer: claiming is a plain conditional UPDATE; RETURNING gives the claimed rows.
constexpr const char* kClaimStale =
    "UPDATE booking SET claimed_until = ?1"
    " WHERE booking_id IN (SELECT booking_id FROM booking"
    "                       WHERE status = 'PENDING'"
    "                         AND (payment_expires_at <= ?3 OR created_at < ?2)"
    "                         AND (claimed_until IS NULL OR claimed_until < ?3)"
    "                       ORDER BY claimed_until NULLS FIRST, created_at LIMIT ?4)"
    " RETURNING booking_id";
constexpr const char* kReleaseClaims =
    "UPDATE booking SET claimed_until = NULL WHERE status = 'PENDING'"
    "   AND booking_id IN (SELECT value FROM json_each(?1))";
constexpr const char* kSelectKey =
    "SELECT fingerprint, state, lock_token, locked_until, booking_id, hold_expiry_before,"
    "       hold_expiry_after, response_status, response_body"
    "  FROM idempotency_key WHERE customer_id = ? AND key = ?";
constexpr const char* kInsertKey =
    "INSERT INTO idempotency_key (customer_id, key, fingerprint, state, lock_token, locked_until,"
    " created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)"
    " ON CONFLICT (customer_id, key) DO NOTHING";
constexpr const char* kUpdateKey =
    "UPDATE idempotency_key SET state = ?3, lock_token = ?4, locked_until = ?5, booking_id = ?6,"
    "       hold_expiry_before = ?7, hold_expiry_after = ?8, response_status = ?9,"
    "       response_body = ?10, updated_at = ?11"
    " WHERE customer_id = ?1 AND key = ?2";
constexpr const char* kDeleteKey = "DELETE FROM idempotency_key WHERE customer_id = ? AND key = ?";
constexpr const char* kPurgeKeys =
    "DELETE FROM idempotency_key WHERE (customer_id, key) IN"
    " (SELECT customer_id, key FROM idempotency_key WHERE created_at < ?1 LIMIT ?2)";
constexpr const char* kResetSeatsExpiry =
    "UPDATE show_seat SET hold_expires_at = ?4"
    " WHERE showtime_id = ?1 AND hold_id = ?2 AND status = 'HELD' AND hold_expires_at = ?3";
constexpr const char* kCountRecentBookings =
    "SELECT status, count(*) FROM booking WHERE created_at >= ? GROUP BY status";
constexpr const char* kAcquireLease =
    "INSERT INTO relay_lease (name, owner, until) VALUES (?1, ?2, ?3)"
    " ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, until = excluded.until"
    " WHERE relay_lease.owner = excluded.owner OR relay_lease.until < ?4"
    " RETURNING owner";
constexpr const char* kPendingRefunds =
    "SELECT refund_id, payment_id, booking_id, amount, currency, attempts FROM refund"
    " WHERE status = 'PENDING' AND next_attempt_at <= ?1 ORDER BY next_attempt_at LIMIT ?2";
constexpr const char* kRefundAttemptFailed =
    "UPDATE refund SET attempts = attempts + 1, refused = ?1, last_error = ?2,"
    "       next_attempt_at = ?3 WHERE refund_id = ?4 AND status = 'PENDING'";
constexpr const char* kRefundBacklog =
    "SELECT count(*) FILTER (WHERE NOT refused), count(*) FILTER (WHERE refused)"
    "  FROM refund WHERE status = 'PENDING'";

}  // namespace

// One SQLite connection with its prepared statements, used by one thread at a time.
class SqliteConnection {
 public:
  explicit SqliteConnection(sqlite3* db) : db_(db) {}
  ~SqliteConnection() {
    for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
    sqlite3_close_v2(db_);
  }
  sqlite3* db() { return db_; }

  // A cached prepared statement, reset and unbound, or null with the error in *status.
  sqlite3_stmt* Prepare(const char* sql, Status* status) {
    auto it = cache_.find(sql);
    if (it != cache_.end()) return it->second;
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr) != SQLITE_OK) {
      *status = Status(Code::kInternal, std::string("sqlite prepare: ") + sqlite3_errmsg(db_));
      return nullptr;
    }
    cache_[sql] = stmt;
    return stmt;
  }

  Status ExecScript(const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
      Status s = Translate(sqlite3_errcode(db_), err ? err : "exec failed");
      sqlite3_free(err);
      return s;
    }
    return Status::Ok();
  }

  static Status Translate(int rc, const std::string& what) {
    if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) {
      return Status(Code::kUnavailable, "database busy: " + what);
    }
    // A constraint that a concurrent change won (callers validate everything else): the
    // request may be tried again. Never shown to clients (only kInvalid messages are).
    if (rc == SQLITE_CONSTRAINT) return Status(Code::kUnavailable, "concurrent change: " + what);
    return Status(Code::kInternal, "sqlite: " + what);
  }

 private:
  sqlite3* db_;
  std::unordered_map<const char*, sqlite3_stmt*> cache_;
};

namespace {

using Value = std::variant<std::nullptr_t, int64_t, std::string>;

// A statement in use: binds on construction, resets on destruction.
class Query {
 public:
  Query(SqliteConnection& conn, const char* sql, std::initializer_list<Value> params)
      : conn_(conn) {
    stmt_ = conn.Prepare(sql, &status_);
    if (!stmt_) return;
    int i = 1;
    for (const Value& v : params) {
      int rc;
      if (std::holds_alternative<std::nullptr_t>(v)) {
        rc = sqlite3_bind_null(stmt_, i);
      } else if (auto* n = std::get_if<int64_t>(&v)) {
        rc = sqlite3_bind_int64(stmt_, i, *n);
      } else {
        const auto& s = std::get<std::string>(v);
        rc = sqlite3_bind_text(stmt_, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
      }
      if (rc != SQLITE_OK) {
        status_ = SqliteConnection::Translate(rc, sqlite3_errmsg(conn.db()));
        return;
      }
      ++i;
    }
  }
  ~Query() {
    if (stmt_) {
      sqlite3_reset(stmt_);
      sqlite3_clear_bindings(stmt_);
    }
  }

  // Steps once: true with a row, false when done or failed (see status()).
  bool Next() {
    if (!status_.ok()) return false;
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) status_ = SqliteConnection::Translate(rc, sqlite3_errmsg(conn_.db()));
    return false;
  }
  // Runs a statement that returns no rows; the number of rows it changed.
  Result<int> Exec() {
    Next();
    if (!status_.ok()) return status_;
    return sqlite3_changes(conn_.db());
  }
  const Status& status() const { return status_; }

  int64_t Int(int col) { return sqlite3_column_int64(stmt_, col); }
  bool IsNull(int col) { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::string Text(int col) {
    const auto* p = sqlite3_column_text(stmt_, col);
    return p ? std::string(reinterpret_cast<const char*>(p),
                           static_cast<size_t>(sqlite3_column_bytes(stmt_, col)))
             : std::string();
  }

 private:
  SqliteConnection& conn_;
  sqlite3_stmt* stmt_ = nullptr;
  Status status_;
};

// BEGIN IMMEDIATE on construction; ROLLBACK on destruction unless committed.
class WriteTx {
 public:
  explicit WriteTx(SqliteConnection& conn) : conn_(conn) {
    status_ = conn_.ExecScript("BEGIN IMMEDIATE");
  }
  ~WriteTx() {
    if (status_.ok() && !done_) conn_.ExecScript("ROLLBACK");
  }
  const Status& status() const { return status_; }
  Status Commit() {
    done_ = true;
    Status s = conn_.ExecScript("COMMIT");
    if (!s.ok()) conn_.ExecScript("ROLLBACK");
    return s;
  }

 private:
  SqliteConnection& conn_;
  Status status_;
  bool done_ = false;
};

std::string SeatsJson(const std::vector<std::string>& seats) {
  return nlohmann::json(seats).dump();
}

std::string JoinComma(const std::vector<std::string>& seats) {
  std::string out;
  for (const auto& s : seats) {
    if (!out.empty()) out += ',';
    out += s;
  }
  return out;
}

std::vector<std::string> SplitComma(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

Showtime ReadShowtime(Query& q) {
  Showtime s;
  s.id = q.Int(0);
  s.title = q.Text(1);
  s.cinema = q.Text(2);
  s.hall = q.Text(3);
  s.starts_at = FromEpochMs(q.Int(4));
  s.seat_count = static_cast<int>(q.Int(5));
  return s;
}

Hold ReadHold(Query& q, Instant now) {
  Hold h;
  h.hold_id = q.Text(0);
  h.showtime_id = q.Int(1);
  h.customer_id = q.Int(2);
  h.seats = SplitComma(q.Text(3));
  h.created_at = FromEpochMs(q.Int(5));
  h.expires_at = FromEpochMs(q.Int(6));
  h.state = DeriveHoldState(q.Text(4), h.expires_at < now);
  return h;
}

// The hold if it exists and belongs to customer_id; kNotFound otherwise.
Result<Hold> LoadHold(SqliteConnection& conn, const std::string& hold_id, int64_t customer_id,
                      Instant now) {
  Query q(conn, kSelectHold, {hold_id, customer_id});
  if (!q.Next()) {
    if (!q.status().ok()) return q.status();
    return HoldNotFound(hold_id);
  }
  return ReadHold(q, now);
}

Status LoadPrices(SqliteConnection& conn, Showtime* s) {
  Query q(conn, kSelectPrices, {s->id});
  while (q.Next()) s->prices[q.Text(0)] = Price{q.Int(1), q.Text(2)};
  return q.status();
}

Booking ReadBooking(Query& q) {
  Booking b;
  b.id = q.Int(0);
  b.hold_id = q.Text(1);
  b.showtime_id = q.Int(2);
  b.customer_id = q.Int(3);
  b.seats = SplitComma(q.Text(4));
  b.status = ParseBookingStatus(q.Text(5)).value_or(BookingStatus::kFailed);
  b.amount = Price{q.Int(6), q.Text(7)};
  b.session_id = q.Text(8);
  b.payment_url = q.Text(9);
  if (!q.IsNull(10)) b.payment_expires_at = FromEpochMs(q.Int(10));
  b.payment_id = q.Text(11);
  b.created_at = FromEpochMs(q.Int(12));
  return b;
}

Result<std::optional<Booking>> LoadBooking(SqliteConnection& c, int64_t booking_id) {
  Query q(c, kSelectBooking, {booking_id});
  if (!q.Next()) {
    if (!q.status().ok()) return q.status();
    return std::optional<Booking>();
  }
  return std::optional<Booking>(ReadBooking(q));
}

Value OptMs(const std::optional<Instant>& t) { return t ? Value(ToEpochMs(*t)) : Value(nullptr); }
std::optional<Instant> ReadOptMs(Query& q, int col) {
  if (q.IsNull(col)) return std::nullopt;
  return FromEpochMs(q.Int(col));
}

// The money rules' primitives over a write transaction (one writer: no row locks needed).
class SqliteMoneyTx final : public MoneyTx {
 public:
  SqliteMoneyTx(SqliteConnection& c, const Clock* clock) : c_(c), clock_(clock) {}

  Result<Instant> Now() override { return clock_->Now(); }
  Result<Hold> LockHold(const std::string& hold_id, int64_t customer_id, Instant now) override {
    return LoadHold(c_, hold_id, customer_id, now);
  }
  Result<int64_t> PendingBookingOf(const std::string& hold_id) override {
    Query q(c_, kPendingBookingOfHold, {hold_id});
    if (!q.Next())
      return q.status().ok() ? Result<int64_t>(int64_t{0}) : Result<int64_t>(q.status());
    return q.Int(0);
  }
  Result<int> RearmSeats(const Hold& hold, Instant expires_at, Instant now) override {
    return Query(c_, kRearmSeats,
                 {ToEpochMs(expires_at), hold.showtime_id, hold.hold_id, ToEpochMs(now)})
        .Exec();
  }
  Status SetHoldExpiry(const std::string& hold_id, Instant expires_at) override {
    auto r = Query(c_, kSetHoldExpiry, {ToEpochMs(expires_at), hold_id}).Exec();
    return r.ok() ? Status::Ok() : r.status();
  }
  Result<std::vector<Price>> SeatPrices(int64_t showtime_id,
                                        const std::vector<std::string>& seats) override {
    Query q(c_, kSeatPrices, {showtime_id, SeatsJson(seats)});
    std::vector<Price> prices;
    while (q.Next()) prices.push_back(Price{q.Int(0), q.Text(1)});
    if (!q.status().ok()) return q.status();
    return prices;
  }
  Result<int64_t> InsertBooking(const Booking& b, Instant now) override {
    auto r = Query(c_, kInsertBooking,
                   {b.hold_id, b.showtime_id, b.customer_id, JoinComma(b.seats), b.amount.amount,
                    b.amount.currency, ToEpochMs(now)})
                 .Exec();
    if (!r.ok()) return r.status();
    return sqlite3_last_insert_rowid(c_.db());
  }
  Result<std::optional<Booking>> LockBooking(int64_t booking_id) override {
    return LoadBooking(c_, booking_id);
  }
  Result<bool> InsertPayment(const PaymentReport& p, int64_t booking_id, Instant now) override {
    auto r = Query(c_, kInsertPayment,
                   {p.payment_id, p.session_id, booking_id ? Value(booking_id) : Value(nullptr),
                    std::string(p.succeeded ? "SUCCEEDED" : "FAILED"), p.amount, p.currency,
                    ToEpochMs(now)})
                 .Exec();
    if (!r.ok()) return r.status();
    return r.value() == 1;
  }
  Result<bool> ConfirmSeats(const Booking& b, Instant now) override {
    // All or none: a short count is undone back to the savepoint.
    if (Status s = c_.ExecScript("SAVEPOINT confirm_seats"); !s.ok()) return s;
    auto r = Query(c_, kConfirmSeats, {b.id, b.showtime_id, b.hold_id, ToEpochMs(now)}).Exec();
    const bool all = r.ok() && static_cast<size_t>(r.value()) == b.seats.size();
    if (!all) c_.ExecScript("ROLLBACK TO confirm_seats");
    c_.ExecScript("RELEASE confirm_seats");
    if (!r.ok()) return r.status();
    return all;
  }
  Status MarkHoldBooked(const std::string& hold_id) override {
    auto r = Query(c_, kMarkHoldBooked, {hold_id}).Exec();
    return r.ok() ? Status::Ok() : r.status();
  }
  Status UpdateBooking(int64_t booking_id, BookingStatus status, const std::string& payment_id,
                       Instant now) override {
    auto r =
        Query(c_, kUpdateBooking,
              {std::string(BookingStatusName(status)),
               payment_id.empty() ? Value(nullptr) : Value(payment_id), ToEpochMs(now), booking_id})
            .Exec();
    return r.ok() ? Status::Ok() : r.status();
  }
  Status InsertRefund(const Refund& refund, Instant now) override {
    auto r = Query(c_, kInsertRefund,
                   {refund.refund_id, refund.payment_id,
                    refund.booking_id ? Value(refund.booking_id) : Value(nullptr),
                    refund.amount.amount, refund.amount.currency, ToEpochMs(now)})
                 .Exec();
    return r.ok() ? Status::Ok() : r.status();
  }
  Result<bool> MarkRefundIssued(const std::string& refund_id, const std::string& gateway_refund_id,
                                Instant now) override {
    auto r = Query(c_, kMarkRefundIssued, {gateway_refund_id, ToEpochMs(now), refund_id}).Exec();
    if (!r.ok()) return r.status();
    return r.value() == 1;
  }
  Result<std::optional<int64_t>> RefundBooking(const std::string& refund_id) override {
    Query q(c_, kRefundBooking, {refund_id});
    if (!q.Next()) {
      if (!q.status().ok()) return q.status();
      return std::optional<int64_t>();
    }
    return std::optional<int64_t>(q.IsNull(0) ? 0 : q.Int(0));
  }
  Result<std::optional<IdempotencyRecord>> LockKey(int64_t customer_id,
                                                   const std::string& key) override {
    Query q(c_, kSelectKey, {customer_id, key});
    if (!q.Next()) {
      if (!q.status().ok()) return q.status();
      return std::optional<IdempotencyRecord>();
    }
    IdempotencyRecord r;
    r.key = IdempotencyKey{customer_id, key, q.Text(0)};
    auto phase = ParseKeyPhase(q.Text(1));
    if (!phase) return Status(Code::kInternal, "unknown idempotency key state " + q.Text(1));
    r.phase = *phase;
    r.token = q.Text(2);
    r.locked_until = ReadOptMs(q, 3);
    r.booking_id = q.IsNull(4) ? 0 : q.Int(4);
    r.hold_expiry_before = ReadOptMs(q, 5);
    r.hold_expiry_after = ReadOptMs(q, 6);
    r.response_status = q.IsNull(7) ? 0 : static_cast<int>(q.Int(7));
    r.response_body = q.Text(8);
    return std::optional<IdempotencyRecord>(std::move(r));
  }
  Result<bool> InsertKey(const IdempotencyRecord& r, Instant now) override {
    auto n =
        Query(c_, kInsertKey,
              {r.key.customer_id, r.key.key, r.key.fingerprint, std::string(KeyPhaseName(r.phase)),
               r.token, OptMs(r.locked_until), ToEpochMs(now)})
            .Exec();
    if (!n.ok()) return n.status();
    return n.value() == 1;
  }
  Status UpdateKey(const IdempotencyRecord& r, Instant now) override {
    auto n = Query(c_, kUpdateKey,
                   {r.key.customer_id, r.key.key, std::string(KeyPhaseName(r.phase)),
                    r.token.empty() ? Value(nullptr) : Value(r.token), OptMs(r.locked_until),
                    r.booking_id ? Value(r.booking_id) : Value(nullptr),
                    OptMs(r.hold_expiry_before), OptMs(r.hold_expiry_after),
                    r.response_status ? Value(int64_t{r.response_status}) : Value(nullptr),
                    r.response_status ? Value(r.response_body) : Value(nullptr), ToEpochMs(now)})
                 .Exec();
    return n.ok() ? Status::Ok() : n.status();
  }
  Status DeleteKey(int64_t customer_id, const std::string& key) override {
    auto n = Query(c_, kDeleteKey, {customer_id, key}).Exec();
    return n.ok() ? Status::Ok() : n.status();
  }
  Status ResetSeatsExpiry(const Hold& hold, Instant from, Instant to) override {
    auto n = Query(c_, kResetSeatsExpiry,
                   {hold.showtime_id, hold.hold_id, ToEpochMs(from), ToEpochMs(to)})
                 .Exec();
    return n.ok() ? Status::Ok() : n.status();
  }
  Result<bool> AttachSession(int64_t booking_id, const std::string& session_id,
                             const std::string& url, Instant expires_at, Instant now) override {
    auto n = Query(c_, kAttachSession,
                   {session_id, url, ToEpochMs(expires_at), ToEpochMs(now), booking_id})
                 .Exec();
    if (!n.ok()) return n.status();
    return n.value() == 1;
  }
  Status InsertEvent(const std::string& event_id, const std::string& type, const std::string& key,
                     const std::string& payload, Instant now) override {
    auto r = Query(c_, kInsertEvent, {event_id, type, key, payload, ToEpochMs(now)}).Exec();
    return r.ok() ? Status::Ok() : r.status();
  }

 private:
  SqliteConnection& c_;
  const Clock* clock_;
};

}  // namespace

struct SqliteStore::Pools {
  Pools(size_t readers_size, Millis timeout, Pool<SqliteConnection>::Factory open)
      : writer(1, timeout, open), readers(readers_size, timeout, open) {}
  Pool<SqliteConnection> writer;  // exactly one: SQLite has one writer at a time
  Pool<SqliteConnection> readers;
};

std::optional<SqliteOptions> SqliteStore::ParseUrl(const std::string& url) {
  constexpr std::string_view kScheme = "sqlite:";
  if (url.rfind(kScheme, 0) != 0) return std::nullopt;
  SqliteOptions options;
  std::string rest = url.substr(kScheme.size());
  if (const size_t q = rest.find('?'); q != std::string::npos) {
    const std::string query = rest.substr(q + 1);
    rest.resize(q);
    if (query == "synchronous=full") {
      options.synchronous_full = true;
    } else if (query != "synchronous=normal") {
      return std::nullopt;
    }
  }
  if (rest.empty() || rest == ":memory:") return std::nullopt;
  options.path = rest;
  return options;
}

SqliteStore::SqliteStore(SqliteOptions options, const Clock* clock)
    : options_(std::move(options)), clock_(clock) {
  auto open = [this]() -> Result<std::unique_ptr<SqliteConnection>> {
    sqlite3* db = nullptr;
    const int rc =
        sqlite3_open_v2(options_.path.c_str(), &db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    auto conn = std::make_unique<SqliteConnection>(db);
    if (rc != SQLITE_OK) {
      return Status(Code::kUnavailable, "cannot open " + options_.path + ": " + sqlite3_errmsg(db));
    }
    sqlite3_busy_timeout(db, static_cast<int>(options_.busy_timeout.count()));
    Status s = conn->ExecScript(kPragmaSetup);
    if (s.ok()) {
      s = conn->ExecScript(options_.synchronous_full ? "PRAGMA synchronous=FULL"
                                                     : "PRAGMA synchronous=NORMAL");
    }
    if (!s.ok()) return s;
    return conn;
  };
  pools_ = std::make_unique<Pools>(options_.reader_pool_size, options_.acquire_timeout, open);
  holds_ = std::make_unique<HoldQueue>(this);
}

// The thread that feeds the writer with holds (see HoldSeatsAsync).
class SqliteStore::HoldQueue {
 public:
  // A request's state, shared by its coroutine (on a loop) and the queue's thread. Whoever
  // moves it out of kWaiting first decides: the thread takes it (and will answer), or the
  // coroutine abandons it after its wait's bound (and the thread never runs it: no hold
  // is made for a customer who was told 503).
  struct Pending {
    enum : int { kWaiting, kTaken, kAbandoned };
    std::atomic<int> state{kWaiting};
    // The waiting coroutine's completion (in its frame), touched on its loop only: the
    // answer is posted there. Null once the coroutine is gone. Nothing here belongs to a
    // loop, so the queue's thread may drop the last reference after the loop ended.
    io::Completion<Result<Hold>>* waiter = nullptr;
  };

  explicit HoldQueue(SqliteStore* store) : store_(store), thread_([this] { Run(); }) {}
  ~HoldQueue() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }

  bool Push(HoldRequest request, std::shared_ptr<Pending> pending,
            std::shared_ptr<io::LoopHandle> loop) {
    {
      std::lock_guard lock(mu_);
      if (stopping_ || queue_.size() >= kMaxHoldsWaiting) return false;
      queue_.push_back(Entry{std::move(request), std::move(pending), std::move(loop)});
    }
    wake_.notify_one();
    return true;
  }

 private:
  struct Entry {
    HoldRequest request;
    std::shared_ptr<Pending> pending;
    std::shared_ptr<io::LoopHandle> loop;
  };

  void Run() {
    for (;;) {
      std::vector<Entry> batch;
      {
        std::unique_lock lock(mu_);
        wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, nothing left
        while (!queue_.empty() && batch.size() < kMaxHoldBatch) {
          Entry entry = std::move(queue_.front());
          queue_.pop_front();
          int waiting = Pending::kWaiting;
          if (entry.pending->state.compare_exchange_strong(waiting, Pending::kTaken)) {
            batch.push_back(std::move(entry));
          }
        }
      }
      if (batch.empty()) continue;
      std::vector<HoldRequest> requests;
      requests.reserve(batch.size());
      for (const auto& e : batch) requests.push_back(e.request);
      std::vector<Result<Hold>> results;
      try {
        results = store_->HoldBatch(requests);
      } catch (const std::exception& e) {
        // Every request taken is answered whatever happens, and the queue carries on.
        results.assign(batch.size(), Result<Hold>(Status(
                                         Code::kUnavailable, std::string("hold batch failed: ") +
                                                                 e.what())));
      }
      BOX_ASSERT(results.size() == batch.size());
      for (size_t i = 0; i < batch.size(); ++i) {
        // A loop that has ended drops the answer (nobody waits for it any more).
        batch[i].loop->Post([pending = batch[i].pending, r = std::move(results[i])]() mutable {
          if (pending->waiter) pending->waiter->Set(std::move(r));
        });
      }
    }
  }

  SqliteStore* store_;
  std::mutex mu_;  // guards queue_ and stopping_; a leaf: nothing is called under it
  std::condition_variable wake_;
  std::deque<Entry> queue_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts once the rest exists
};

SqliteStore::~SqliteStore() = default;

Status SqliteStore::Migrate() {
  auto conn = pools_->writer.Acquire();
  if (!conn.ok()) return conn.status();
  SqliteConnection& c = *conn.value();
  WriteTx tx(c);
  if (!tx.status().ok()) return tx.status();
  if (Status s = c.ExecScript(kCreateMigrationTable); !s.ok()) return s;
  std::vector<int64_t> applied;
  {
    Query q(c, kAppliedVersions, {});
    while (q.Next()) applied.push_back(q.Int(0));
    if (!q.status().ok()) return q.status();
  }
  for (const Migration& m : SqliteMigrations()) {
    if (std::find(applied.begin(), applied.end(), m.version) != applied.end()) continue;
    if (Status s = c.ExecScript(std::string(m.sql).c_str()); !s.ok()) {
      return Status(Code::kInternal, "migration " + std::to_string(m.version) + ": " + s.message());
    }
    Query q(c, kRecordMigration,
            {int64_t{m.version}, std::string(m.name), ToEpochMs(clock_->Now())});
    if (auto r = q.Exec(); !r.ok()) return r.status();
    LogInfo("migration applied", {{"version", m.version}, {"name", m.name}, {"store", "sqlite"}});
  }
  return tx.Commit();
}

Status SqliteStore::Ping() {
  auto conn = pools_->readers.Acquire();
  if (!conn.ok()) return conn.status();
  Query q(*conn.value(), "SELECT 1", {});
  q.Next();
  return q.status();
}

Result<int64_t> SqliteStore::CreateShowtime(const NewShowtime& st) {
  auto conn = pools_->writer.Acquire();
  if (!conn.ok()) return conn.status();
  SqliteConnection& c = *conn.value();
  WriteTx tx(c);
  if (!tx.status().ok()) return tx.status();
  int64_t seat_count = 0;
  for (const auto& r : st.rows) seat_count += r.seats;
  {
    Query q(c, kInsertShowtime,
            {st.title, st.cinema, st.hall, ToEpochMs(st.starts_at), seat_count});
    if (auto r = q.Exec(); !r.ok()) return r.status();
  }
  const int64_t id = sqlite3_last_insert_rowid(c.db());
  for (const auto& [category, price] : st.prices) {
    Query q(c, kInsertPrice, {id, category, price.amount, price.currency});
    if (auto r = q.Exec(); !r.ok()) return r.status();
  }
  int64_t order = 0;
  for (const auto& row : st.rows) {
    for (int n = 1; n <= row.seats; ++n) {
      Query q(c, kInsertSeat,
              {id, row.row + std::to_string(n), row.row, int64_t{n}, order++, row.category});
      if (auto r = q.Exec(); !r.ok()) return r.status();
    }
  }
  if (Status s = tx.Commit(); !s.ok()) return s;
  return id;
}

Result<Showtime> SqliteStore::GetShowtime(int64_t showtime_id) {
  auto conn = pools_->readers.Acquire();
  if (!conn.ok()) return conn.status();
  Showtime s;
  {
    Query q(*conn.value(), kSelectShowtime, {showtime_id});
    if (!q.Next()) {
      if (!q.status().ok()) return q.status();
      return ShowtimeNotFound(showtime_id);
    }
    s = ReadShowtime(q);
  }
  if (Status st = LoadPrices(*conn.value(), &s); !st.ok()) return st;
  return s;
}

Result<std::vector<Showtime>> SqliteStore::ListShowtimes(const ShowtimeQuery& query) {
  auto conn = pools_->readers.Acquire();
  if (!conn.ok()) return conn.status();
  auto opt_ms = [](const std::optional<Instant>& t) -> Value {
    return t ? Value(ToEpochMs(*t)) : Value(nullptr);
  };
  std::vector<Showtime> out;
  {
    Query q(
        *conn.value(), kListShowtimes,
        {opt_ms(query.from), opt_ms(query.to), query.cinema ? Value(*query.cinema) : Value(nullptr),
         query.after ? Value(ToEpochMs(query.after->first)) : Value(nullptr),
         query.after ? Value(query.after->second) : Value(nullptr), int64_t{query.limit}});
    while (q.Next()) out.push_back(ReadShowtime(q));
    if (!q.status().ok()) return q.status();
  }
  for (auto& s : out) {
    if (Status st = LoadPrices(*conn.value(), &s); !st.ok()) return st;
  }
  return out;
}

Result<int64_t> SqliteStore::CountShowtimes() {
  auto conn = pools_->readers.Acquire();
  if (!conn.ok()) return conn.status();
  Query q(*conn.value(), kCountShowtimes, {});
  if (!q.Next())
    return q.status().ok() ? Status(Code::kInternal, "count returned no row") : q.status();
  return q.Int(0);
}

Result<SeatMap> SqliteStore::GetSeatMap(int64_t showtime_id) {
  auto conn = pools_->readers.Acquire();
  if (!conn.ok()) return conn.status();
  SeatMap map;
  map.showtime_id = showtime_id;
  map.as_of = clock_->Now();
  Query q(*conn.value(), kSelectSeatMap, {showtime_id, ToEpochMs(map.as_of)});
  while (q.Next()) {
    map.seats.push_back(SeatView{q.Text(0), q.Text(1), static_cast<int>(q.Int(2)), q.Text(3),
                                 ParseSeatStatus(q.Text(4))});
  }
  if (!q.status().ok()) return q.status();
  // Every showtime has at least one seat, so no rows means no such showtime.
  if (map.seats.empty()) {
    return ShowtimeNotFound(showtime_id);
  }
  return map;
}

Result<std::vector<SeatOwner>> SqliteStore::GetSeatOwners(int64_t showtime_id) {
  auto conn = pools_->readers.Acquire();
  if (!conn.ok()) return conn.status();
  std::vector<SeatOwner> out;
  Query q(*conn.value(), kSelectSeatOwners, {showtime_id, ToEpochMs(clock_->Now())});
  while (q.Next()) {
    out.push_back(SeatOwner{q.Text(0), ParseSeatStatus(q.Text(1)), q.IsNull(2) ? "" : q.Text(2),
                            q.IsNull(3) ? 0 : q.Int(3)});
  }
  if (!q.status().ok()) return q.status();
  return out;
}

namespace {

// One hold decided inside the caller's write transaction: the quota, the seeds' UPDATE with
// its changed-row count compared, the seat_hold row. On any refusal the caller rolls back
// what this request changed (its savepoint).
Result<Hold> DecideHold(SqliteConnection& c, const HoldRequest& req, Instant now) {
  const Instant expires = now + req.ttl;
  const std::string seats_json = SeatsJson(req.seats);
  {
    Query held(c, kCustomerHeld, {req.customer_id, req.showtime_id, ToEpochMs(now)});
    if (!held.Next()) return held.status();
    const int64_t n = static_cast<int64_t>(req.seats.size());
    if (held.Int(0) + n > kMaxSeatsPerCustomer) return HoldLimit(req, held.Int(0));
  }
  Result<int> updated = Query(c, kHoldSeats,
                              {req.hold_id, req.customer_id, ToEpochMs(expires), req.showtime_id,
                               seats_json, ToEpochMs(now)})
                            .Exec();
  if (!updated.ok()) return updated.status();
  if (static_cast<size_t>(updated.value()) != req.seats.size()) {
    // Short: find out why; the caller rolls this request back.
    std::vector<std::string> found, taken;
    Query q(c, kExplainHold, {req.showtime_id, seats_json, ToEpochMs(now), req.hold_id});
    while (q.Next()) {
      found.push_back(q.Text(0));
      if (q.Int(1) == 0) taken.push_back(q.Text(0));
    }
    if (!q.status().ok()) return q.status();
    if (found.size() != req.seats.size()) {
      bool exists = true;
      if (found.empty()) {
        Query showtime(c, kShowtimeExists, {req.showtime_id});
        exists = showtime.Next();
        if (!exists && !showtime.status().ok()) return showtime.status();
      }
      return ExplainUnknownSeats(req, found, exists);
    }
    return SeatsUnavailable(req, std::move(taken));
  }
  Result<int> inserted = Query(c, kInsertHold,
                               {req.hold_id, req.showtime_id, req.customer_id, JoinComma(req.seats),
                                ToEpochMs(now), ToEpochMs(expires)})
                             .Exec();
  if (!inserted.ok()) return inserted.status();
  return Hold{req.hold_id, req.showtime_id, req.customer_id, req.seats, HoldState::kHeld,
              now,         expires};
}

}  // namespace

std::vector<Result<Hold>> SqliteStore::HoldBatch(const std::vector<HoldRequest>& requests) {
  auto fail_all = [&](const Status& why) {
    return std::vector<Result<Hold>>(requests.size(), Result<Hold>(why));
  };
  auto conn = pools_->writer.Acquire();
  if (!conn.ok()) return fail_all(conn.status());
  SqliteConnection& c = *conn.value();
  const Instant now = clock_->Now();
  hold_transactions_.fetch_add(1, std::memory_order_relaxed);
  batched_holds_.fetch_add(requests.size(), std::memory_order_relaxed);
  WriteTx tx(c);
  if (!tx.status().ok()) return fail_all(tx.status());
  std::vector<Result<Hold>> out;
  out.reserve(requests.size());
  for (const HoldRequest& req : requests) {
    // Each request all or nothing: a refusal rolls back to its savepoint.
    if (Status s = c.ExecScript("SAVEPOINT hold"); !s.ok()) return fail_all(s);
    Result<Hold> r = DecideHold(c, req, now);
    Status undone = r.ok() ? Status::Ok() : c.ExecScript("ROLLBACK TO hold");
    Status released = c.ExecScript("RELEASE hold");
    if (!undone.ok()) return fail_all(undone);
    if (!released.ok()) return fail_all(released);
    out.push_back(std::move(r));
  }
  // One commit for the batch (group commit).
  if (Status s = tx.Commit(); !s.ok()) return fail_all(s);
  return out;
}

Result<Hold> SqliteStore::HoldSeats(const HoldRequest& req) {
  return std::move(HoldBatch({req}).front());
}

io::asio::awaitable<Result<Hold>> SqliteStore::HoldSeatsAsync(HoldRequest request) {
  io::Loop* loop = io::Loop::Current();
  if (!loop) co_return HoldSeats(request);  // off the loops
  auto pending = std::make_shared<HoldQueue::Pending>();
  io::Completion<Result<Hold>> done;
  pending->waiter = &done;
  struct Forget {  // the answer of a request nobody waits for any more goes nowhere
    HoldQueue::Pending* p;
    ~Forget() { p->waiter = nullptr; }
  } forget{pending.get()};
  if (!holds_->Push(std::move(request), pending, loop->handle())) {
    co_return Status(Code::kUnavailable, "too many holds waiting for the database");
  }
  auto result = co_await done.Wait(kHoldWaitBound);
  if (!result) {
    int waiting = HoldQueue::Pending::kWaiting;
    if (pending->state.compare_exchange_strong(waiting, HoldQueue::Pending::kAbandoned)) {
      co_return Status(Code::kUnavailable, "too many holds waiting for the database");
    }
    // Taken: its transaction runs and answers (bounded by the writer's own timeouts).
    result = co_await done.Wait(kHoldWaitBound);
    if (!result) co_return Status(Code::kUnavailable, "the hold's transaction did not come back");
  }
  co_return std::move(*result);
}

Result<Hold> SqliteStore::GetHold(const std::string& hold_id, int64_t customer_id) {
  auto conn = pools_->readers.Acquire();
  if (!conn.ok()) return conn.status();
  return LoadHold(*conn.value(), hold_id, customer_id, clock_->Now());
}

Result<Hold> SqliteStore::ReleaseHold(const std::string& hold_id, int64_t customer_id) {
  auto conn = pools_->writer.Acquire();
  if (!conn.ok()) return conn.status();
  SqliteConnection& c = *conn.value();
  WriteTx tx(c);
  if (!tx.status().ok()) return tx.status();
  auto loaded = LoadHold(c, hold_id, customer_id, clock_->Now());
  if (!loaded.ok()) return loaded.status();
  const Hold& hold = loaded.value();
  if (hold.state == HoldState::kBooked) return Status(Code::kNotActive, "hold is booked");
  if (hold.state == HoldState::kReleased) return hold;
  // Only rows this hold id still owns change: a newer hold on the same seats is untouched.
  if (auto r = Query(c, kReleaseSeats, {hold.showtime_id, hold_id}).Exec(); !r.ok())
    return r.status();
  if (auto r = Query(c, kMarkHoldReleased, {hold_id}).Exec(); !r.ok()) return r.status();
  if (Status s = tx.Commit(); !s.ok()) return s;
  return hold;
}

// Runs body(tx) in a write transaction; commits when it returns a value.
template <class T, class F>
Result<T> InWriteTx(Pool<SqliteConnection>& writer, const Clock* clock, F body) {
  auto conn = writer.Acquire();
  if (!conn.ok()) return conn.status();
  SqliteConnection& c = *conn.value();
  WriteTx tx(c);
  if (!tx.status().ok()) return tx.status();
  SqliteMoneyTx money(c, clock);
  Result<T> r = body(money);
  if (!r.ok()) return r;
  if (Status s = tx.Commit(); !s.ok()) return s;
  return r;
}

Result<Hold> SqliteStore::ExtendHold(const std::string& hold_id, int64_t customer_id, Millis ttl,
                                     Millis max_lifetime) {
  return InWriteTx<Hold>(pools_->writer, clock_, [&](MoneyTx& tx) {
    return ExtendHoldIn(tx, hold_id, customer_id, ttl, max_lifetime);
  });
}

Result<Booking> SqliteStore::StartCheckout(const std::string& hold_id, int64_t customer_id,
                                           Millis ttl, Millis max_lifetime) {
  return InWriteTx<Booking>(pools_->writer, clock_, [&](MoneyTx& tx) {
    return StartCheckoutIn(tx, nullptr, hold_id, customer_id, ttl, max_lifetime);
  });
}

Result<Settlement> SqliteStore::SettlePayment(const PaymentReport& report, Booking* confirmed) {
  return InWriteTx<Settlement>(pools_->writer, clock_, [&](MoneyTx& tx) {
    return SettlePaymentIn(tx, report, confirmed);
  });
}

Status SqliteStore::AttachPaymentSession(int64_t booking_id, const std::string& session_id,
                                         const std::string& url, Instant expires_at) {
  auto r = InWriteTx<bool>(pools_->writer, clock_, [&](MoneyTx& tx) -> Result<bool> {
    auto now = tx.Now();
    if (!now.ok()) return now.status();
    return tx.AttachSession(booking_id, session_id, url, expires_at, now.value());
  });
  if (!r.ok()) return r.status();
  if (!r.value()) return Status(Code::kNotActive, "booking is not pending or has another session");
  return Status::Ok();
}

Result<Booking> SqliteStore::StartCheckout(const KeyLock& lock, const std::string& hold_id,
                                           Millis ttl, Millis max_lifetime) {
  return InWriteTx<Booking>(pools_->writer, clock_, [&](MoneyTx& tx) {
    return StartCheckoutIn(tx, &lock, hold_id, lock.customer_id, ttl, max_lifetime);
  });
}

Result<IdempotencyRecord> SqliteStore::ClaimCheckoutKey(const IdempotencyKey& key, Millis lease) {
  return InWriteTx<IdempotencyRecord>(
      pools_->writer, clock_, [&](MoneyTx& tx) { return ClaimCheckoutKeyIn(tx, key, lease); });
}

Result<bool> SqliteStore::FinishCheckout(const KeyLock& lock, const std::string& session_id,
                                         const std::string& url, Instant expires_at,
                                         int response_status, const std::string& response_body) {
  return InWriteTx<bool>(pools_->writer, clock_, [&](MoneyTx& tx) {
    return FinishCheckoutIn(tx, lock, session_id, url, expires_at, response_status, response_body);
  });
}

Status SqliteStore::AbortCheckout(const KeyLock& lock) {
  auto r = InWriteTx<bool>(pools_->writer, clock_, [&](MoneyTx& tx) -> Result<bool> {
    if (Status s = AbortCheckoutIn(tx, lock); !s.ok()) return s;
    return true;
  });
  return r.ok() ? Status::Ok() : r.status();
}

Result<int> SqliteStore::PurgeCheckoutKeys(Millis older_than, int limit) {
  auto conn = pools_->writer.Acquire();
  if (!conn.ok()) return conn.status();
  return Query(*conn.value(), kPurgeKeys, {ToEpochMs(clock_->Now() - older_than), int64_t{limit}})
      .Exec();
}

Result<Booking> SqliteStore::GetBooking(int64_t booking_id, int64_t customer_id) {
  auto conn = pools_->readers.Acquire();
  if (!conn.ok()) return conn.status();
  auto b = LoadBooking(*conn.value(), booking_id);
  if (!b.ok()) return b.status();
  if (!b.value() || (customer_id != kAnyCustomer && b.value()->customer_id != customer_id))
    return BookingNotFound(booking_id);
  return *b.value();
}

Result<std::vector<OutboxEvent>> SqliteStore::PendingEvents(int64_t after_id, int limit) {
  auto conn = pools_->readers.Acquire();
  if (!conn.ok()) return conn.status();
  std::vector<OutboxEvent> out;
  Query q(*conn.value(), kPendingEvents, {after_id, int64_t{limit}});
  while (q.Next())
    out.push_back(
        OutboxEvent{q.Int(0), q.Text(1), q.Text(2), q.Text(3), q.Text(4), FromEpochMs(q.Int(5))});
  if (!q.status().ok()) return q.status();
  return out;
}

Result<std::vector<Booking>> SqliteStore::ClaimStaleCheckouts(Millis older_than, Millis lease,
                                                              int limit) {
  auto conn = pools_->writer.Acquire();
  if (!conn.ok()) return conn.status();
  SqliteConnection& c = *conn.value();
  const Instant now = clock_->Now();
  std::vector<int64_t> ids;
  {
    Query q(c, kClaimStale,
            {ToEpochMs(now + lease), ToEpochMs(now - older_than), ToEpochMs(now), int64_t{limit}});
    while (q.Next()) ids.push_back(q.Int(0));
    if (!q.status().ok()) return q.status();
  }
  std::vector<Booking> out;
  for (int64_t id : ids) {
    auto b = LoadBooking(c, id);
    if (!b.ok()) return b.status();
    if (b.value()) out.push_back(*b.value());
  }
  return out;
}

Status SqliteStore::ReleaseCheckoutClaims(const std::vector<int64_t>& booking_ids) {
  if (booking_ids.empty()) return Status::Ok();
  auto conn = pools_->writer.Acquire();
  if (!conn.ok()) return conn.status();
  auto r = Query(*conn.value(), kReleaseClaims, {nlohmann::json(booking_ids).dump()}).Exec();
  return r.ok() ? Status::Ok() : r.status();
}

Result<bool> SqliteStore::AbandonCheckout(int64_t booking_id) {
  return InWriteTx<bool>(pools_->writer, clock_,
                         [&](MoneyTx& tx) { return AbandonCheckoutIn(tx, booking_id); });
}

Status SqliteStore::CompleteRefund(const std::string& refund_id,
                                   const std::string& gateway_refund_id) {
  auto r = InWriteTx<bool>(pools_->writer, clock_, [&](MoneyTx& tx) -> Result<bool> {
    Status s = CompleteRefundIn(tx, refund_id, gateway_refund_id);
    if (!s.ok()) return s;
    return true;
  });
  return r.ok() ? Status::Ok() : r.status();
}

Result<std::map<BookingStatus, int64_t>> SqliteStore::CountRecentBookings(Millis window) {
  auto conn = pools_->readers.Acquire();
  if (!conn.ok()) return conn.status();
  std::map<BookingStatus, int64_t> out;
  Query q(*conn.value(), kCountRecentBookings, {ToEpochMs(clock_->Now() - window)});
  while (q.Next()) {
    if (auto status = ParseBookingStatus(q.Text(0))) out[*status] = q.Int(1);
  }
  if (!q.status().ok()) return q.status();
  return out;
}

Result<bool> SqliteStore::AcquireLease(const std::string& name, const std::string& owner,
                                       Millis lease) {
  auto conn = pools_->writer.Acquire();
  if (!conn.ok()) return conn.status();
  const Instant now = clock_->Now();
  Query q(*conn.value(), kAcquireLease, {name, owner, ToEpochMs(now + lease), ToEpochMs(now)});
  const bool taken = q.Next();
  if (!q.status().ok()) return q.status();
  return taken;
}

Result<AuditReport> SqliteStore::Audit() {
  auto conn = pools_->readers.Acquire();
  if (!conn.ok()) return conn.status();
  Query q(*conn.value(), kAudit, {});
  if (!q.Next()) return q.status().ok() ? Status(Code::kInternal, "audit: no row") : q.status();
  return AuditReport{q.Int(0), q.Int(1), q.Int(2), q.Int(3), q.Int(4), q.Int(5), q.Int(6)};
}

Status SqliteStore::SetWaitingRoom(int64_t showtime_id, const WaitingRoomConfig& config) {
  auto conn = pools_->writer.Acquire();
  if (!conn.ok()) return conn.status();
  auto r = Query(*conn.value(), kSetWaitingRoom,
                 {showtime_id, int64_t{config.enabled}, int64_t{config.active_limit},
                  config.admission_ttl.count(), ToEpochMs(clock_->Now())})
               .Exec();
  if (!r.ok()) return r.status();
  return r.value() == 0 ? ShowtimeNotFound(showtime_id) : Status::Ok();
}

Result<std::vector<std::pair<int64_t, WaitingRoomConfig>>> SqliteStore::EnabledWaitingRooms() {
  auto conn = pools_->readers.Acquire();
  if (!conn.ok()) return conn.status();
  std::vector<std::pair<int64_t, WaitingRoomConfig>> out;
  Query q(*conn.value(), kEnabledWaitingRooms, {});
  while (q.Next()) {
    out.emplace_back(q.Int(0),
                     WaitingRoomConfig{true, static_cast<int>(q.Int(1)), Millis(q.Int(2))});
  }
  if (!q.status().ok()) return q.status();
  return out;
}

Status SqliteStore::MarkEventsPublished(const std::vector<int64_t>& ids,
                                        const std::string& lease_name, const std::string& owner) {
  if (ids.empty()) return Status::Ok();
  auto conn = pools_->writer.Acquire();
  if (!conn.ok()) return conn.status();
  const int64_t now = ToEpochMs(clock_->Now());
  auto r = Query(*conn.value(), kMarkPublished, {now, nlohmann::json(ids).dump(), lease_name, owner})
               .Exec();
  if (!r.ok()) return r.status();
  if (r.value() > 0) return Status::Ok();
  // Nothing marked: published before, or fenced out. Tell which.
  Query held(*conn.value(), kLeaseHeld, {lease_name, owner, now});
  if (held.Next()) return Status::Ok();
  if (!held.status().ok()) return held.status();
  return Status(Code::kNotActive, "the lease " + lease_name + " was lost");
}

Result<std::vector<Refund>> SqliteStore::PendingRefunds(int limit) {
  auto conn = pools_->readers.Acquire();
  if (!conn.ok()) return conn.status();
  std::vector<Refund> out;
  Query q(*conn.value(), kPendingRefunds, {ToEpochMs(clock_->Now()), int64_t{limit}});
  while (q.Next()) {
    out.push_back(Refund{q.Text(0), q.Text(1), q.IsNull(2) ? 0 : q.Int(2),
                         Price{q.Int(3), q.Text(4)}, false, static_cast<int>(q.Int(5))});
  }
  if (!q.status().ok()) return q.status();
  return out;
}

Status SqliteStore::RefundAttemptFailed(const std::string& refund_id, bool refused,
                                        const std::string& error, Millis retry_after) {
  auto conn = pools_->writer.Acquire();
  if (!conn.ok()) return conn.status();
  auto r = Query(*conn.value(), kRefundAttemptFailed,
                 {int64_t{refused ? 1 : 0}, error,
                  ToEpochMs(clock_->Now() + retry_after), refund_id})
               .Exec();
  return r.ok() ? Status::Ok() : r.status();
}

Result<RefundBacklog> SqliteStore::CountRefundBacklog() {
  auto conn = pools_->readers.Acquire();
  if (!conn.ok()) return conn.status();
  Query q(*conn.value(), kRefundBacklog, {});
  if (!q.Next()) return q.status().ok() ? Status(Code::kInternal, "no count") : q.status();
  return RefundBacklog{q.Int(0), q.Int(1)};
}

Result<int> SqliteStore::SweepExpired(int batch_limit, std::vector<SeatRef>* freed) {
  auto conn = pools_->writer.Acquire();
  if (!conn.ok()) return conn.status();
  // One statement is its own transaction; no BEGIN needed.
  Query q(*conn.value(), kSweepExpired, {ToEpochMs(clock_->Now()), int64_t{batch_limit}});
  int n = 0;
  for (; q.Next(); ++n) {
    if (freed) freed->push_back(SeatRef{q.Int(0), q.Text(1)});
  }
  if (!q.status().ok()) return q.status();
  return n;
}

}  // namespace boxoffice
