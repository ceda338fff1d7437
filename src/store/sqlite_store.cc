#include "store/sqlite_store.h"

#include <sqlite3.h>

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>

#include "core/log.h"
#include "core/pool.h"
#include "core/seats.h"
#include "core/status.h"
#include "store/migrations.h"
#include "store/money.h"
#include "store/sqlite_connection.h"
#include "store/sqlite_money_tx.h"
#include "store/sqlite_rows.h"
#include "store/sqlite_sql.h"
#include "store/sqlite_store_parts.h"

namespace boxoffice {

using namespace sqlite;  // the store's own statements and rows

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
  holds_ = std::make_unique<WriterQueue<HoldJobs>>(this);
}

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
            {st.title, st.cinema, st.hall, ToEpochMs(st.starts_at), seat_count,
             std::string(st.forbid_single_seat_gaps ? "forbid" : "allow"), st.time_zone,
             int64_t{st.sales_close_minutes},
             st.refund_until_minutes ? Value(int64_t{*st.refund_until_minutes}) : Value(nullptr)});
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
              {id, row.row + std::to_string(n), row.row, int64_t{n}, order++, row.category,
               int64_t{IsLayoutSeat(row.accessible, n)}, int64_t{IsLayoutSeat(row.aisles, n)}});
      if (auto r = q.Exec(); !r.ok()) return r.status();
    }
  }
  BOX_ASSERT(order == seat_count);  // the showtime's seat_count is its seats', counted here
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
         query.after ? Value(query.after->second) : Value(nullptr), int64_t{query.limit},
         ToEpochMs(clock_->Now()), int64_t{query.seats_left}});
    while (q.Next()) {
      out.push_back(ReadShowtime(q));
      if (query.seats_left) out.back().seats_left = static_cast<int>(q.Int(12));
    }
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
                                 ParseSeatStatus(q.Text(4)), q.Int(5) != 0, q.Int(6) != 0});
    map.cancelled = q.Int(7) != 0;
  }
  if (!q.status().ok()) return q.status();
  // Every showtime has at least one seat, so no rows means no such showtime.
  if (map.seats.empty()) {
    return ShowtimeNotFound(showtime_id);
  }
  CloseSeatMap(map);
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
  BOX_ASSERT(hold.state == HoldState::kHeld || hold.state == HoldState::kExpired);
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

Result<ShowtimeCancel> SqliteStore::CancelShowtime(int64_t showtime_id, const std::string& reason,
                                                   int64_t actor) {
  return InWriteTx<ShowtimeCancel>(pools_->writer, clock_, [&](MoneyTx& tx) {
    return CancelShowtimeIn(tx, showtime_id, reason, actor);
  });
}

Result<BookingCancel> SqliteStore::CancelBooking(int64_t booking_id, int64_t customer_id) {
  return InWriteTx<BookingCancel>(pools_->writer, clock_, [&](MoneyTx& tx) {
    return CancelBookingIn(tx, booking_id, customer_id);
  });
}

Result<Showtime> SqliteStore::EditShowtime(int64_t showtime_id, const ShowtimeEdit& edit,
                                           int64_t actor) {
  return InWriteTx<Showtime>(pools_->writer, clock_, [&](MoneyTx& tx) {
    return EditShowtimeIn(tx, showtime_id, edit, actor);
  });
}

Result<ShowtimeSales> SqliteStore::GetShowtimeSales(int64_t showtime_id) {
  auto conn = pools_->readers.Acquire();
  if (!conn.ok()) return conn.status();
  Query q(*conn.value(), kShowtimeSales, {showtime_id, ToEpochMs(clock_->Now())});
  if (!q.Next()) return q.status().ok() ? ShowtimeNotFound(showtime_id) : q.status();
  if (q.IsNull(10)) return ShowtimeNotFound(showtime_id);
  ShowtimeSales sales;
  sales.seats_available = q.Int(0);
  sales.seats_held = q.Int(1);
  sales.seats_booked = q.Int(2);
  sales.bookings = {{BookingStatus::kPending, q.Int(3)},
                    {BookingStatus::kConfirmed, q.Int(4)},
                    {BookingStatus::kFailed, q.Int(5)},
                    {BookingStatus::kRefunded, q.Int(6)}};
  sales.revenue = Price{q.Int(7), q.IsNull(8) ? "" : q.Text(8)};
  sales.checked_in = q.Int(9);
  sales.cancelled = q.Int(10) != 0;
  sales.refunds = RefundProgress{q.Int(11), q.Int(12), q.Int(13)};
  return sales;
}

Result<std::vector<Booking>> SqliteStore::ListShowtimeBookings(const ShowtimeBookingsQuery& query) {
  auto conn = pools_->readers.Acquire();
  if (!conn.ok()) return conn.status();
  Query q(*conn.value(), kShowtimeBookings,
          {query.showtime_id,
           query.status ? Value(std::string(BookingStatusName(*query.status))) : Value(nullptr),
           query.after_id, int64_t{query.limit}});
  std::vector<Booking> out;
  while (q.Next()) out.push_back(ReadBooking(q));
  if (!q.status().ok()) return q.status();
  return out;
}

Result<std::vector<AdminChange>> SqliteStore::ListAdminChanges(int64_t showtime_id, int limit) {
  auto conn = pools_->readers.Acquire();
  if (!conn.ok()) return conn.status();
  Query q(*conn.value(), kListAdminChanges, {showtime_id, int64_t{limit}});
  std::vector<AdminChange> out;
  while (q.Next()) {
    out.push_back(AdminChange{q.Int(0), q.Int(1), q.Int(2), q.Text(3), q.IsNull(4) ? "" : q.Text(4),
                              q.IsNull(5) ? "" : q.Text(5), FromEpochMs(q.Int(6))});
  }
  if (!q.status().ok()) return q.status();
  return out;
}

Result<Settlement> SqliteStore::SettlePayment(const PaymentReport& report, Booking* confirmed) {
  return InWriteTx<Settlement>(pools_->writer, clock_,
                               [&](MoneyTx& tx) { return SettlePaymentIn(tx, report, confirmed); });
}

Status SqliteStore::AttachPaymentSession(int64_t booking_id, const std::string& session_id,
                                         const std::string& url, Instant expires_at) {
  auto r = InWriteTx<bool>(pools_->writer, clock_, [&](MoneyTx& tx) -> Result<bool> {
    auto now = tx.Now();
    if (!now.ok()) return now.status();
    return tx.AttachSession(booking_id, session_id, url, expires_at, now.value(), "");
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
                                         int response_status, const std::string& response_body,
                                         const std::string& email) {
  return InWriteTx<bool>(pools_->writer, clock_, [&](MoneyTx& tx) {
    return FinishCheckoutIn(tx, lock, session_id, url, expires_at, response_status, response_body,
                            email);
  });
}

Status SqliteStore::EndCheckoutLease(const KeyLock& lock) {
  auto r = InWriteTx<bool>(pools_->writer, clock_, [&](MoneyTx& tx) -> Result<bool> {
    if (Status s = EndCheckoutLeaseIn(tx, lock); !s.ok()) return s;
    return true;
  });
  return r.ok() ? Status::Ok() : r.status();
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

Result<std::string> SqliteStore::InstallationId(int64_t /*booking_id: this database's*/) {
  auto conn = pools_->readers.Acquire();
  if (!conn.ok()) return conn.status();
  // Migration 0026's row.
  Query q(*conn.value(), "SELECT id FROM installation_identity", {});
  if (!q.Next()) {
    if (!q.status().ok()) return q.status();
    return Status(Code::kInternal, "no installation id");
  }
  return q.Text(0);
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
  Query q(*conn.value(), kPendingEvents, {after_id, int64_t{limit}});
  return ReadOutboxEvents(q);
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
  return AuditReport{q.Int(0), q.Int(1), q.Int(2), q.Int(3),
                     q.Int(4), q.Int(5), q.Int(6), q.Int(7)};
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
  auto r =
      Query(*conn.value(), kMarkPublished, {now, nlohmann::json(ids).dump(), lease_name, owner})
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
                         Price{q.Int(3), q.Text(4)}, false, static_cast<int>(q.Int(5)), ""});
  }
  if (!q.status().ok()) return q.status();
  return out;
}

Status SqliteStore::RefundAttemptFailed(const std::string& refund_id, bool refused,
                                        const std::string& error, Millis retry_after) {
  auto conn = pools_->writer.Acquire();
  if (!conn.ok()) return conn.status();
  auto r =
      Query(*conn.value(), kRefundAttemptFailed,
            {int64_t{refused ? 1 : 0}, error, ToEpochMs(clock_->Now() + retry_after), refund_id})
          .Exec();
  return r.ok() ? Status::Ok() : r.status();
}

Result<RefundBacklog> SqliteStore::CountRefundBacklog() {
  auto conn = pools_->readers.Acquire();
  if (!conn.ok()) return conn.status();
  RefundBacklog backlog;
  {
    Query q(*conn.value(), kRefundBacklog, {});
    if (!q.Next()) return q.status().ok() ? Status(Code::kInternal, "no count") : q.status();
    backlog.retrying = q.Int(0);
    backlog.refused = q.Int(1);
  }
  Query q(*conn.value(), kCancelledRefunds,
          {ToEpochMs(clock_->Now()) - kCancelledRefundsWindow.count(),
           int64_t{kMaxCancelledShowtimesFollowed}});
  while (q.Next()) {
    backlog.cancelled.push_back(
        CancelledShowtimeRefunds{q.Int(0), RefundProgress{q.Int(1), q.Int(2), q.Int(3)}});
  }
  if (!q.status().ok()) return q.status();
  BOX_ASSERT(backlog.cancelled.size() <= size_t{kMaxCancelledShowtimesFollowed});  // LIMIT
  return backlog;
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

Result<std::vector<CustomerBooking>> SqliteStore::ListCustomerBookings(
    const CustomerBookingsQuery& query) {
  auto conn = pools_->readers.Acquire();
  if (!conn.ok()) return conn.status();
  Value before_ms = nullptr, before_id = nullptr;
  if (query.before) {
    before_ms = ToEpochMs(query.before->first);
    before_id = query.before->second;
  }
  Query q(*conn.value(), kCustomerBookings,
          {query.customer_id, before_ms, before_id, int64_t{query.limit}});
  std::vector<CustomerBooking> out;
  while (q.Next())
    out.push_back(CustomerBooking{ReadBooking(q), q.Text(13), FromEpochMs(q.Int(14))});
  if (!q.status().ok()) return q.status();
  return out;
}

// In the writer's transaction: the booking read, the check-in inserted unless one exists,
// the winner's row read, one commit. One writer at a time decides every scan.
Result<CheckInResult> SqliteStore::CheckIn(const CheckInRequest& request) {
  auto conn = pools_->writer.Acquire();
  if (!conn.ok()) return conn.status();
  SqliteConnection& c = *conn.value();
  WriteTx tx(c);
  if (!tx.status().ok()) return tx.status();
  const Instant now = clock_->Now();
  CheckInResult result;
  {
    Query b(c, kCheckInBooking, {request.booking_id});
    if (!b.Next()) {
      if (!b.status().ok()) return b.status();
      return result;  // kUnknown
    }
    const auto seats = SplitComma(b.Text(2));
    if (b.Int(1) != request.showtime_id ||
        std::find(seats.begin(), seats.end(), request.seat) == seats.end()) {
      return result;  // kUnknown
    }
    if (b.Text(0) != "CONFIRMED") {
      result.outcome = CheckInOutcome::kVoid;
      return result;
    }
  }
  const Value nonce = request.nonce.empty() ? Value(nullptr) : Value(request.nonce);
  auto inserted =
      Query(c, kInsertCheckIn,
            {request.booking_id, request.seat, request.showtime_id, ToEpochMs(now), nonce})
          .Exec();
  if (!inserted.ok()) return inserted.status();
  if (inserted.value() == 1) {
    result = CheckInResult{CheckInOutcome::kAdmitted, now};
  } else {
    Query first(c, kSelectCheckIn, {request.booking_id, request.seat});
    if (!first.Next()) {
      return first.status().ok() ? Status(Code::kInternal, "check-in row vanished")
                                 : first.status();
    }
    const bool same_scan =
        !request.nonce.empty() && !first.IsNull(1) && first.Text(1) == request.nonce;
    result =
        CheckInResult{same_scan ? CheckInOutcome::kAdmitted : CheckInOutcome::kAlreadyCheckedIn,
                      FromEpochMs(first.Int(0))};
  }
  if (Status s = tx.Commit(); !s.ok()) return s;
  return result;
}

Result<DoorCount> SqliteStore::CountAtDoor(int64_t showtime_id) {
  auto conn = pools_->readers.Acquire();
  if (!conn.ok()) return conn.status();
  Query q(*conn.value(), kCountAtDoor, {showtime_id});
  if (!q.Next()) return q.status().ok() ? ShowtimeNotFound(showtime_id) : q.status();
  return DoorCount{q.Int(0), q.Int(1)};
}

Result<std::optional<MailBooking>> SqliteStore::BookingForMail(int64_t booking_id) {
  auto conn = pools_->readers.Acquire();
  if (!conn.ok()) return conn.status();
  auto b = LoadBooking(*conn.value(), booking_id);
  if (!b.ok()) return b.status();
  if (!b.value()) return std::optional<MailBooking>();
  Query q(*conn.value(), kBookingForMail, {booking_id});
  if (!q.Next()) {
    if (!q.status().ok()) return q.status();
    return std::optional<MailBooking>();
  }
  return std::optional<MailBooking>(MailBooking{*b.value(), q.Text(0), q.Text(1), q.Text(2),
                                                q.Text(3), FromEpochMs(q.Int(4)), q.Text(5)});
}

Result<std::vector<OutboxEvent>> SqliteStore::PendingMail(int limit) {
  auto conn = pools_->readers.Acquire();
  if (!conn.ok()) return conn.status();
  Query q(*conn.value(), kPendingMail, {int64_t{limit}});
  return ReadOutboxEvents(q);
}

Result<int64_t> SqliteStore::CountPendingMail() {
  auto conn = pools_->readers.Acquire();
  if (!conn.ok()) return conn.status();
  Query q(*conn.value(), kCountPendingMail, {});
  if (!q.Next()) return q.status().ok() ? Status(Code::kInternal, "no count") : q.status();
  return q.Int(0);
}

Status SqliteStore::MarkMailDone(int64_t id, const std::string& lease_name,
                                 const std::string& owner) {
  auto conn = pools_->writer.Acquire();
  if (!conn.ok()) return conn.status();
  const int64_t now = ToEpochMs(clock_->Now());
  auto r = Query(*conn.value(), kMarkMailDone, {lease_name, owner, now, id}).Exec();
  if (!r.ok()) return r.status();
  if (r.value() > 0) return Status::Ok();
  // Nothing marked: marked before, or fenced out. Tell which.
  Query held(*conn.value(), kLeaseHeld, {lease_name, owner, now});
  if (held.Next()) return Status::Ok();
  if (!held.status().ok()) return held.status();
  return Status(Code::kNotActive, "the lease " + lease_name + " was lost");
}

Result<int64_t> SqliteStore::ExpirePendingMail(Millis older_than, int limit,
                                               const std::string& lease_name,
                                               const std::string& owner) {
  auto conn = pools_->writer.Acquire();
  if (!conn.ok()) return conn.status();
  const Instant now = clock_->Now();
  auto r = Query(*conn.value(), kExpirePendingMail,
                 {lease_name, owner, ToEpochMs(now), ToEpochMs(now - older_than), int64_t{limit}})
               .Exec();
  if (!r.ok()) return r.status();
  if (r.value() > 0) return int64_t{r.value()};
  Query held(*conn.value(), kLeaseHeld, {lease_name, owner, ToEpochMs(now)});
  if (held.Next()) return int64_t{0};
  if (!held.status().ok()) return held.status();
  return Status(Code::kNotActive, "the lease " + lease_name + " was lost");
}

}  // namespace boxoffice
