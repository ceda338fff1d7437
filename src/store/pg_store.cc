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
#include "store/money.h"
#include "store/pg_booking_reads.h"
#include "store/pg_common.h"
#include "store/pg_confirm_batch.h"
#include "store/pg_connection.h"
#include "store/pg_hold_batch.h"
#include "store/pg_money_tx.h"
#include "store/pg_pipeline.h"
#include "store/pg_rows.h"
#include "store/pg_sql.h"
#include "store/shards.h"

namespace boxoffice {
namespace {

// A deadlock or serialization failure is retried this often before it reaches a caller.
constexpr int kMaxTxAttempts = 3;

}  // namespace

struct PgStore::Impl {
  // Each I/O loop's pipelined connections, and the hold batcher and booking reads on them.
  struct LoopState {
    LoopState(io::asio::io_context& context, Impl* impl)
        : pipelines(context,
                    PgPipelineOptions{impl->options.url, impl->options.connect_timeout,
                                      impl->options.statement_timeout, impl->options.lock_timeout},
                    impl->options.pipelines_per_loop),
          batcher(
              &pipelines, [impl] { return impl->Now(); }, impl->options.statement_timeout,
              &impl->hold_counts),
          booking_reads(&pipelines, impl->options.statement_timeout, &impl->read_counts),
          confirmations(
              &pipelines, [impl] { return impl->Now(); }, impl->options.statement_timeout,
              {kMaxConfirmBatch, kMaxConfirmsWaiting}, &impl->confirm_counts,
              "too many confirmations waiting") {}
    PgPipelineSet pipelines;
    PgHoldBatcher batcher;
    PgBookingReads booking_reads;
    // A report names its booking, not its showtime: a loop's confirmations go to
    // kConfirmQueues queues by booking id, so that many statements may be in flight.
    PgBatcher<ConfirmBatchTraits> confirmations;
  };
  static constexpr size_t kMaxConfirmBatch = 32;
  static constexpr size_t kMaxConfirmsWaiting = 8 * kMaxConfirmBatch;  // per queue
  static constexpr int64_t kConfirmQueues = 4;

  PgOptions options;
  Pool<PgConnection> pool;
  PgBatchCounts hold_counts;
  PgBatchCounts read_counts;  // booking reads
  PgBatchCounts confirm_counts;
  PgBatchCounts showtime_reads;  // statements only: GetShowtimeAsync, ListShowtimesAsync,
                                 // GetSeatMapAsync
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

  Result<std::unique_ptr<PgConnection>> Connect() { return ConnectPg(options); }

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
  if (!r.ok()) return r.status();
  auto number = ShardNumber();
  if (!number.ok()) return number.status();
  own_shard_ = number.value().value_or(0);
  return Status::Ok();
}

Result<std::optional<int>> PgStore::ShardNumber() {
  return impl_->Run<std::optional<int>>(
      &retried_, [](PgConnection& c) -> Result<std::optional<int>> {
        auto res = c.Exec(kShardNumber, {});
        if (!res.ok()) return res.status();
        if (PQntuples(res.value().get()) == 0) return std::optional<int>();
        return std::optional<int>(static_cast<int>(Int(res.value().get(), 0, 0)));
      });
}

Result<int> PgStore::TakeShardNumber(int wanted) {
  auto taken = impl_->InTx<int>(&retried_, [wanted](PgConnection& c) -> Result<int> {
    auto res = c.Exec(kTakeShardNumber, {P(int64_t{wanted})});
    if (!res.ok()) {
      // take_shard_number's refusals are raised as plain exceptions (kInternal here).
      if (res.status().code() == Code::kInternal)
        return Status(Code::kInvalid, res.status().message());
      return res.status();
    }
    return static_cast<int>(Int(res.value().get(), 0, 0));
  });
  if (taken.ok()) own_shard_ = taken.value();
  return taken;
}

Result<std::string> PgStore::DatabaseId() {
  return impl_->Run<std::string>(&retried_, [](PgConnection& c) -> Result<std::string> {
    auto res = c.Exec(kDatabaseId, {});
    if (!res.ok()) return res.status();
    if (PQntuples(res.value().get()) != 1) return Status(Code::kInternal, "no database identity");
    return Text(res.value().get(), 0, 0);
  });
}

// Migration 0026's row: this database's installation id (Store::InstallationId).
constexpr Sql kInstallationId{"installation_id", "SELECT id::text FROM installation_identity"};

Result<std::string> PgStore::InstallationId(int64_t /*booking_id: this database's*/) {
  return impl_->Run<std::string>(&retried_, [](PgConnection& c) -> Result<std::string> {
    auto res = c.Exec(kInstallationId, {});
    if (!res.ok()) return res.status();
    if (PQntuples(res.value().get()) != 1) return Status(Code::kInternal, "no installation id");
    return Text(res.value().get(), 0, 0);
  });
}

const std::string& PgStore::url() const { return impl_->options.url; }

Status PgStore::Ping() {
  auto r = impl_->Run<bool>(&retried_, [](PgConnection& c) -> Result<bool> {
    auto res = c.Exec(kPing, {});
    if (!res.ok()) return res.status();
    return true;
  });
  return r.ok() ? Status::Ok() : r.status();
}

namespace {

// kCreateShowtime's parameters: the showtime, its prices, its seats row by row.
std::vector<Param> CreateShowtimeParams(const NewShowtime& st) {
  int64_t seat_count = 0;
  for (const auto& r : st.rows) seat_count += r.seats;
  std::vector<std::string> categories, currencies;
  std::vector<int64_t> amounts;
  for (const auto& [category, price] : st.prices) {
    categories.push_back(category);
    amounts.push_back(price.amount);
    currencies.push_back(price.currency);
  }
  std::vector<std::string> codes, rows, seat_categories, accessible, aisle_after;
  std::vector<int64_t> numbers, orders;
  for (const auto& row : st.rows) {
    for (int n = 1; n <= row.seats; ++n) {
      orders.push_back(static_cast<int64_t>(codes.size()));
      codes.push_back(row.row + std::to_string(n));
      rows.push_back(row.row);
      numbers.push_back(n);
      seat_categories.push_back(row.category);
      accessible.push_back(IsLayoutSeat(row.accessible, n) ? "t" : "f");
      aisle_after.push_back(IsLayoutSeat(row.aisles, n) ? "t" : "f");
    }
  }
  BOX_ASSERT(static_cast<int64_t>(codes.size()) == seat_count);
  return {st.title,
          st.cinema,
          st.hall,
          P(ToEpochMs(st.starts_at)),
          P(seat_count),
          ArrayLiteral(categories),
          IntArrayLiteral(amounts),
          ArrayLiteral(currencies),
          ArrayLiteral(codes),
          ArrayLiteral(rows),
          IntArrayLiteral(numbers),
          IntArrayLiteral(orders),
          ArrayLiteral(seat_categories),
          ArrayLiteral(accessible),
          ArrayLiteral(aisle_after),
          std::string(st.forbid_single_seat_gaps ? "forbid" : "allow"),
          st.time_zone,
          P(int64_t{st.sales_close_minutes})};
}

// kSetWaitingRoom's parameters, and what its answer means.
std::vector<Param> WaitingRoomParams(Param now, int64_t showtime_id,
                                     const WaitingRoomConfig& config) {
  return {std::move(now), P(showtime_id), config.enabled ? "true" : "false",
          P(int64_t{config.active_limit}), P(config.admission_ttl.count())};
}
Status WaitingRoomSet(const PGresult* r, int64_t showtime_id) {
  if (std::atoi(PQcmdTuples(const_cast<PGresult*>(r))) == 0) return ShowtimeNotFound(showtime_id);
  return Status::Ok();
}

}  // namespace

Result<int64_t> PgStore::CreateShowtime(const NewShowtime& st) {
  return impl_->Run<int64_t>(&retried_, [&](PgConnection& c) -> Result<int64_t> {
    auto res = c.Exec(kCreateShowtime, CreateShowtimeParams(st));
    if (!res.ok()) return res.status();
    return Int(res.value().get(), 0, 0);
  });
}

io::asio::awaitable<Result<int64_t>> PgStore::CreateShowtimeAsync(NewShowtime showtime) {
  Impl::LoopState* loop = impl_->Loop();
  if (!loop) co_return CreateShowtime(showtime);  // off the loops
  std::vector<Param> params = CreateShowtimeParams(showtime);
  auto res = co_await loop->pipelines.Exec(kCreateShowtime, std::move(params));
  if (!res.ok()) co_return res.status();
  co_return Int(res->get(), 0, 0);
}

Result<Showtime> PgStore::GetShowtime(int64_t showtime_id) {
  return impl_->Run<Showtime>(&retried_, [&](PgConnection& c) -> Result<Showtime> {
    auto res = c.Exec(kSelectShowtime, {P(showtime_id)});
    if (!res.ok()) return res.status();
    std::vector<Showtime> one = ReadShowtimes(res.value().get());
    if (one.empty()) return ShowtimeNotFound(showtime_id);
    if (Status s = LoadPrices(c, &one); !s.ok()) return s;
    return one[0];
  });
}

Result<std::vector<Showtime>> PgStore::ListShowtimes(const ShowtimeQuery& q) {
  return impl_->Run<std::vector<Showtime>>(
      &retried_, [&](PgConnection& c) -> Result<std::vector<Showtime>> {
        auto res = c.Exec(kListShowtimes, ListParams(q));
        if (!res.ok()) return res.status();
        std::vector<Showtime> out = ReadShowtimes(res.value().get());
        if (Status s = LoadPrices(c, &out); !s.ok()) return s;
        return out;
      });
}

io::asio::awaitable<Result<Showtime>> PgStore::GetShowtimeAsync(int64_t showtime_id) {
  Impl::LoopState* loop = impl_->Loop();
  if (!loop) co_return GetShowtime(showtime_id);  // off the loops
  impl_->showtime_reads.statements.fetch_add(1, std::memory_order_relaxed);
  // (Parameters named first: g++ 12 cannot initialise them inside a co_await expression.)
  std::vector<Param> id{P(showtime_id)};
  auto shown = co_await loop->pipelines.Exec(kSelectShowtime, std::move(id));
  if (!shown.ok()) co_return shown.status();
  std::vector<Showtime> one = ReadShowtimes(shown->get());
  if (one.empty()) co_return ShowtimeNotFound(showtime_id);
  // (Written with the showtime, in its creating transaction, and never changed: a second
  // statement cannot see other prices than the first one's snapshot would have.)
  impl_->showtime_reads.statements.fetch_add(1, std::memory_order_relaxed);
  std::vector<Param> ids{PriceIds(one)};
  auto priced = co_await loop->pipelines.Exec(kSelectPrices, std::move(ids));
  if (!priced.ok()) co_return priced.status();
  ApplyPrices(priced->get(), &one);
  co_return std::move(one[0]);
}

io::asio::awaitable<Result<std::vector<Showtime>>> PgStore::ListShowtimesAsync(
    ShowtimeQuery query) {
  Impl::LoopState* loop = impl_->Loop();
  if (!loop) co_return ListShowtimes(query);  // off the loops
  impl_->showtime_reads.statements.fetch_add(1, std::memory_order_relaxed);
  std::vector<Param> params = ListParams(query);
  auto listed = co_await loop->pipelines.Exec(kListShowtimes, std::move(params));
  if (!listed.ok()) co_return listed.status();
  std::vector<Showtime> out = ReadShowtimes(listed->get());
  if (out.empty()) co_return out;
  impl_->showtime_reads.statements.fetch_add(1, std::memory_order_relaxed);
  std::vector<Param> ids{PriceIds(out)};
  auto priced = co_await loop->pipelines.Exec(kSelectPrices, std::move(ids));
  if (!priced.ok()) co_return priced.status();
  ApplyPrices(priced->get(), &out);
  co_return out;
}

Result<int64_t> PgStore::CountShowtimes() {
  return impl_->Run<int64_t>(&retried_, [&](PgConnection& c) -> Result<int64_t> {
    auto res = c.Exec(kCountShowtimes, {});
    if (!res.ok()) return res.status();
    return Int(res.value().get(), 0, 0);
  });
}

namespace {

// A value for COPY's text format: backslash, tab and line breaks escaped.
void AppendCopyText(std::string* out, std::string_view value) {
  for (char ch : value) {
    switch (ch) {
      case '\\':
        *out += "\\\\";
        break;
      case '\t':
        *out += "\\t";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\r':
        *out += "\\r";
        break;
      default:
        *out += ch;
    }
  }
}

}  // namespace

Result<bool> PgStore::SeedBatch(const std::string& batch, const std::vector<NewShowtime>& showtimes,
                                int64_t) {
  int64_t seats = 0;
  for (const NewShowtime& st : showtimes)
    for (const RowLayout& row : st.rows) seats += row.seats;
  return impl_->InTx<bool>(&retried_, [&](PgConnection& c) -> Result<bool> {
    auto claimed = c.Exec(kSeedClaim, {batch, P(static_cast<int64_t>(showtimes.size())), P(seats)});
    if (!claimed.ok()) return claimed.status();
    if (PQntuples(claimed.value().get()) == 0) return false;  // written before
    auto ids_res = c.Exec(kSeedIds, {P(static_cast<int64_t>(showtimes.size()))});
    if (!ids_res.ok()) return ids_res.status();
    const PGresult* idr = ids_res.value().get();
    BOX_ASSERT(PQntuples(idr) == static_cast<int>(showtimes.size()));
    std::vector<int64_t> ids, starts, counts, price_ids, amounts;
    std::vector<std::string> titles, cinemas, halls, categories, currencies;
    std::string copy;
    copy.reserve(static_cast<size_t>(seats) * 48);
    for (size_t i = 0; i < showtimes.size(); ++i) {
      const NewShowtime& st = showtimes[i];
      const int64_t id = Int(idr, static_cast<int>(i), 0);
      ids.push_back(id);
      titles.push_back(st.title);
      cinemas.push_back(st.cinema);
      halls.push_back(st.hall);
      starts.push_back(ToEpochMs(st.starts_at));
      int64_t count = 0;
      for (const auto& [category, price] : st.prices) {
        price_ids.push_back(id);
        categories.push_back(category);
        amounts.push_back(price.amount);
        currencies.push_back(price.currency);
      }
      const std::string id_text = std::to_string(id);
      for (const RowLayout& row : st.rows) {
        for (int n = 1; n <= row.seats; ++n) {
          copy += id_text;
          copy += '\t';
          AppendCopyText(&copy, row.row + std::to_string(n));
          copy += '\t';
          AppendCopyText(&copy, row.row);
          copy += '\t';
          copy += std::to_string(n);
          copy += '\t';
          copy += std::to_string(count++);
          copy += '\t';
          AppendCopyText(&copy, row.category);
          copy += IsLayoutSeat(row.accessible, n) ? "\tt" : "\tf";
          copy += IsLayoutSeat(row.aisles, n) ? "\tt\n" : "\tf\n";
        }
      }
      counts.push_back(count);
    }
    auto inserted = c.Exec(kSeedShowtimes,
                           {IntArrayLiteral(ids), ArrayLiteral(titles), ArrayLiteral(cinemas),
                            ArrayLiteral(halls), IntArrayLiteral(starts), IntArrayLiteral(counts)});
    if (!inserted.ok()) return inserted.status();
    auto priced = c.Exec(kSeedPrices, {IntArrayLiteral(price_ids), ArrayLiteral(categories),
                                       IntArrayLiteral(amounts), ArrayLiteral(currencies)});
    if (!priced.ok()) return priced.status();
    if (Status s = c.CopyIn(kSeedSeatsCopy, copy); !s.ok()) return s;
    return true;
  });
}

Result<int64_t> PgStore::SizeOnDisk() {
  return impl_->Run<int64_t>(&retried_, [&](PgConnection& c) -> Result<int64_t> {
    auto res = c.Exec(kDatabaseSize, {});
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
                    auto res = c.Exec(kSetWaitingRoom,
                                      WaitingRoomParams(impl_->Now(), showtime_id, config));
                    if (!res.ok()) return res.status();
                    if (Status s = WaitingRoomSet(res.value().get(), showtime_id); !s.ok()) {
                      return s;
                    }
                    return true;
                  })
      .status();
}

io::asio::awaitable<Status> PgStore::SetWaitingRoomAsync(int64_t showtime_id,
                                                         WaitingRoomConfig config) {
  Impl::LoopState* loop = impl_->Loop();
  if (!loop) co_return SetWaitingRoom(showtime_id, config);  // off the loops
  std::vector<Param> params = WaitingRoomParams(impl_->Now(), showtime_id, config);
  auto res = co_await loop->pipelines.Exec(kSetWaitingRoom, std::move(params));
  if (!res.ok()) co_return res.status();
  co_return WaitingRoomSet(res->get(), showtime_id);
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

namespace {

// kSelectSeatMap's rows: the map, or NOT_FOUND when the showtime has no seats.
Result<SeatMap> SeatMapOf(const PGresult* r, int64_t showtime_id) {
  if (PQntuples(r) == 0) return ShowtimeNotFound(showtime_id);
  SeatMap map;
  map.showtime_id = showtime_id;
  map.as_of = FromEpochMs(Int(r, 0, 5));
  map.seats.reserve(static_cast<size_t>(PQntuples(r)));
  for (int i = 0; i < PQntuples(r); ++i) {
    map.seats.push_back(SeatView{Text(r, i, 0), Text(r, i, 1), static_cast<int>(Int(r, i, 2)),
                                 Text(r, i, 3), ParseSeatStatus(PQgetvalue(r, i, 4)),
                                 Text(r, i, 6) == "t", Text(r, i, 7) == "t"});
  }
  return map;
}

}  // namespace

Result<SeatMap> PgStore::GetSeatMap(int64_t showtime_id) {
  return impl_->Run<SeatMap>(&retried_, [&](PgConnection& c) -> Result<SeatMap> {
    auto res = c.Exec(kSelectSeatMap, {impl_->Now(), P(showtime_id)});
    if (!res.ok()) return res.status();
    return SeatMapOf(res.value().get(), showtime_id);
  });
}

io::asio::awaitable<Status> PgStore::PingAsync() {
  Impl::LoopState* loop = impl_->Loop();
  if (!loop) co_return Ping();  // off the loops
  std::vector<Param> none;      // (named: g++ 12 and braced temporaries in co_await)
  auto res = co_await loop->pipelines.Exec(kPing, std::move(none));
  co_return res.ok() ? Status::Ok() : res.status();
}

io::asio::awaitable<Result<SeatMap>> PgStore::GetSeatMapAsync(int64_t showtime_id) {
  Impl::LoopState* loop = impl_->Loop();
  if (!loop) co_return GetSeatMap(showtime_id);  // off the loops
  impl_->showtime_reads.statements.fetch_add(1, std::memory_order_relaxed);
  std::vector<Param> params{impl_->Now(), P(showtime_id)};
  auto res = co_await loop->pipelines.Exec(kSelectSeatMap, std::move(params));
  if (!res.ok()) co_return res.status();
  co_return SeatMapOf(res->get(), showtime_id);
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
    return ExplainUnknownSeats(req, found, exists);
  });
}

uint64_t PgStore::hold_statements() const {
  return impl_->hold_counts.statements.load(std::memory_order_relaxed);
}
uint64_t PgStore::batched_holds() const {
  return impl_->hold_counts.requests.load(std::memory_order_relaxed);
}
uint64_t PgStore::booking_read_statements() const {
  return impl_->read_counts.statements.load(std::memory_order_relaxed);
}
uint64_t PgStore::showtime_read_statements() const {
  return impl_->showtime_reads.statements.load(std::memory_order_relaxed);
}
uint64_t PgStore::confirm_statements() const {
  return impl_->confirm_counts.statements.load(std::memory_order_relaxed);
}
uint64_t PgStore::batched_confirms() const {
  return impl_->confirm_counts.requests.load(std::memory_order_relaxed);
}

io::asio::awaitable<Result<Hold>> PgStore::HoldSeatsAsync(HoldRequest request) {
  Impl::LoopState* loop = impl_->Loop();
  if (!loop) co_return HoldSeats(request);  // off the loops
  co_return co_await loop->batcher.Decide(std::move(request));
}

namespace {

// A hold's read, release or extension: one statement (migration 0015 for the two writes),
// sent on the pool's connection or a loop's pipeline alike, and its answer.
struct HoldStatement {
  const Sql* sql;
  std::vector<Param> params;
};

HoldStatement HoldActionStatement(const Param& now, Store::HoldAction action,
                                  const std::string& hold_id, int64_t customer_id, Millis ttl,
                                  Millis max_lifetime) {
  switch (action) {
    case Store::HoldAction::kRead:
      return {&kSelectHold, {now, hold_id, P(customer_id)}};
    case Store::HoldAction::kRelease:
      return {&kReleaseHoldFn, {now, hold_id, P(customer_id)}};
    case Store::HoldAction::kExtend:
      return {&kExtendHoldFn,
              {now, hold_id, P(customer_id), P(ttl.count()), P(max_lifetime.count())}};
  }
  AssertFail("unknown hold action", __FILE__, __LINE__);
}

Result<Hold> HoldActionOutcome(Store::HoldAction action, const PGresult* r,
                               const std::string& hold_id) {
  if (PQntuples(r) == 0) return HoldNotFound(hold_id);
  if (PQntuples(r) != 1) return BOX_BROKEN_AFTER_COMMIT(PQntuples(r) == 1);
  switch (action) {
    case Store::HoldAction::kRead:
      return ReadHold(r);
    case Store::HoldAction::kRelease: {
      Hold hold = ReadHold(r);
      if (hold.state == HoldState::kBooked) return Status(Code::kNotActive, "hold is booked");
      return hold;
    }
    case Store::HoldAction::kExtend: {
      if (Text(r, 0, 0) != "extended") return Status(Code::kNotActive, "hold is not active");
      Hold hold = ReadHold(r, 1);
      if (hold.state != HoldState::kHeld) return BOX_BROKEN_AFTER_COMMIT(hold.state == kHeld);
      return hold;
    }
  }
  AssertFail("unknown hold action", __FILE__, __LINE__);
}

}  // namespace

Result<Hold> PgStore::RunHoldAction(HoldAction action, const std::string& hold_id,
                                    int64_t customer_id, Millis ttl, Millis max_lifetime) {
  if (!IsUuid(hold_id)) return HoldNotFound(hold_id);
  return impl_->Run<Hold>(&retried_, [&](PgConnection& c) -> Result<Hold> {
    HoldStatement st =
        HoldActionStatement(impl_->Now(), action, hold_id, customer_id, ttl, max_lifetime);
    auto res = c.Exec(*st.sql, std::move(st.params));
    if (!res.ok()) return res.status();
    return HoldActionOutcome(action, res.value().get(), hold_id);
  });
}

Result<Hold> PgStore::GetHold(const std::string& hold_id, int64_t customer_id) {
  return RunHoldAction(HoldAction::kRead, hold_id, customer_id, Millis(0), Millis(0));
}

Result<Hold> PgStore::ReleaseHold(const std::string& hold_id, int64_t customer_id) {
  return RunHoldAction(HoldAction::kRelease, hold_id, customer_id, Millis(0), Millis(0));
}

Result<Hold> PgStore::ExtendHold(const std::string& hold_id, int64_t customer_id, Millis ttl,
                                 Millis max_lifetime) {
  return RunHoldAction(HoldAction::kExtend, hold_id, customer_id, ttl, max_lifetime);
}

io::asio::awaitable<Result<Hold>> PgStore::HoldActionAsync(HoldAction action, std::string hold_id,
                                                           int64_t customer_id, Millis ttl,
                                                           Millis max_lifetime) {
  Impl::LoopState* loop = impl_->Loop();
  if (!loop) co_return RunHoldAction(action, hold_id, customer_id, ttl, max_lifetime);
  if (!IsUuid(hold_id)) co_return HoldNotFound(hold_id);
  HoldStatement st =
      HoldActionStatement(impl_->Now(), action, hold_id, customer_id, ttl, max_lifetime);
  auto res = co_await loop->pipelines.Exec(*st.sql, std::move(st.params));
  if (!res.ok()) co_return res.status();
  co_return HoldActionOutcome(action, res->get(), hold_id);
}

Result<Booking> PgStore::StartCheckout(const std::string& hold_id, int64_t customer_id, Millis ttl,
                                       Millis max_lifetime) {
  return impl_->InTx<Booking>(&retried_, [&](PgConnection& c) {
    PgMoneyTx tx(c, impl_->Now());
    return StartCheckoutIn(tx, nullptr, hold_id, customer_id, ttl, max_lifetime);
  });
}

namespace {

// A report for a booking another shard issued is not this database's to judge: recorded
// here as unknown it would be refunded while its own shard confirms it (the reconciler
// asks). kUnavailable, so the gateway delivers it again, to an instance that knows.
Status OnAnotherShard(const PaymentReport& report, int own_shard) {
  const auto id = ParseReference(report.reference);
  const auto shard = id ? ShardOfId(*id) : std::nullopt;
  if (!shard || *shard == own_shard || *shard >= kMaxShards) return Status::Ok();
  return Status(Code::kUnavailable, "booking " + report.reference + " is on shard " +
                                        std::to_string(*shard) + ", not this database's (" +
                                        std::to_string(own_shard) + ")");
}

}  // namespace

Result<Settlement> PgStore::SettlePayment(const PaymentReport& report, Booking* confirmed) {
  if (Status s = OnAnotherShard(report, own_shard_.load()); !s.ok()) return s;
  return impl_->InTx<Settlement>(&retried_, [&](PgConnection& c) {
    PgMoneyTx tx(c, impl_->Now());
    return SettlePaymentIn(tx, report, confirmed);
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

namespace {

std::vector<Param> FinishParams(Param now, const KeyLock& lock, const std::string& session_id,
                                const std::string& url, Instant expires_at, int response_status,
                                const std::string& response_body) {
  return {std::move(now),
          P(lock.customer_id),
          lock.key,
          lock.token,
          session_id,
          url,
          P(ToEpochMs(expires_at)),
          P(int64_t{response_status}),
          response_body};
}

// kCheckoutFinish's answer, as FinishCheckout's.
Result<bool> FinishOutcome(const PGresult* r) {
  if (PQntuples(r) != 1) return BOX_BROKEN_AFTER_COMMIT(PQntuples(r) == 1);
  const std::string outcome = Text(r, 0, 0);
  if (outcome == "finished") return true;
  if (outcome == "abandoned") return false;
  if (outcome != "lost") return BOX_BROKEN_AFTER_COMMIT(outcome == "lost");
  return Status(Code::kInProgress, "another request took over this idempotency key");
}

}  // namespace

// One statement (migration 0013) where the general transaction (FinishCheckoutIn, which
// SQLite runs) takes five: the same rule, decided in the database.
Result<bool> PgStore::FinishCheckout(const KeyLock& lock, const std::string& session_id,
                                     const std::string& url, Instant expires_at,
                                     int response_status, const std::string& response_body) {
  return impl_->Run<bool>(&retried_, [&](PgConnection& c) -> Result<bool> {
    auto res = c.Exec(kCheckoutFinish, FinishParams(impl_->Now(), lock, session_id, url, expires_at,
                                                    response_status, response_body));
    if (!res.ok()) return res.status();
    return FinishOutcome(res.value().get());
  });
}

io::asio::awaitable<Result<bool>> PgStore::FinishCheckoutAsync(KeyLock lock, std::string session_id,
                                                               std::string url, Instant expires_at,
                                                               int response_status,
                                                               std::string response_body) {
  Impl::LoopState* loop = impl_->Loop();
  if (!loop) {
    co_return FinishCheckout(lock, session_id, url, expires_at, response_status, response_body);
  }
  std::vector<Param> params =
      FinishParams(impl_->Now(), lock, session_id, url, expires_at, response_status, response_body);
  auto res = co_await loop->pipelines.Exec(kCheckoutFinish, std::move(params));
  if (res.ok()) co_return FinishOutcome(res->get());
  if (res.status().code() != Code::kUnavailable) co_return res.status();
  // The session exists: a full or lost connection does not leave the checkout half-done
  // until its key's lease runs out; the pool's connection finishes it, if the blocking pool
  // has room (else 503, and the client's retry carries on once the lease ends). (Had the
  // statement run before the connection was lost, the claim is finished and this answers
  // kInProgress: the client's retry replays the response.)
  auto finish = [this, lock = std::move(lock), session_id = std::move(session_id),
                 url = std::move(url), expires_at, response_status,
                 response_body = std::move(response_body)] {
    return FinishCheckout(lock, session_id, url, expires_at, response_status, response_body);
  };
  co_return co_await io::Offload(std::move(finish));
}

io::asio::awaitable<Result<bool>> PgStore::TryBeginCheckoutAsync(IdempotencyKey key,
                                                                 std::string hold_id, Millis lease,
                                                                 Millis ttl, Millis max_lifetime,
                                                                 CheckoutBegun* begun) {
  BOX_ASSERT(begun != nullptr);
  Impl::LoopState* loop = impl_->Loop();
  if (!loop || !IsUuid(hold_id)) co_return false;  // the general path explains a bad id
  const std::string token = ClaimToken(key);
  std::vector<Param> params = {
      impl_->Now(), P(key.customer_id), key.key,        key.fingerprint,        hold_id,
      token,        P(lease.count()),   P(ttl.count()), P(max_lifetime.count())};
  auto res = co_await loop->pipelines.Exec(kCheckoutBegin, std::move(params));
  if (!res.ok()) co_return res.status();
  const PGresult* r = res->get();
  if (PQntuples(r) != 1) co_return BOX_BROKEN_AFTER_COMMIT(PQntuples(r) == 1);
  if (Text(r, 0, 0) != "booked") co_return false;
  Booking& b = begun->booking;
  b = Booking{};
  b.id = Int(r, 0, 1);
  b.hold_id = hold_id;
  b.showtime_id = Int(r, 0, 2);
  b.customer_id = key.customer_id;
  b.seats = ParseArray(Text(r, 0, 3));
  b.status = BookingStatus::kPending;
  b.amount = Price{Int(r, 0, 4), Text(r, 0, 5)};
  b.created_at = FromEpochMs(Int(r, 0, 6));
  b.hold_expires_at = FromEpochMs(Int(r, 0, 8));
  IdempotencyRecord& record = begun->record;
  record = IdempotencyRecord{};
  record.key = std::move(key);
  record.phase = KeyPhase::kBookingCreated;
  record.token = token;
  record.locked_until = b.created_at + lease;
  record.booking_id = b.id;
  record.hold_expiry_before = FromEpochMs(Int(r, 0, 7));
  record.hold_expiry_after = b.hold_expires_at;
  if (!(b.id > 0 && !b.seats.empty() && *record.hold_expiry_after >= *record.hold_expiry_before)) {
    co_return BOX_BROKEN_AFTER_COMMIT(b.id > 0 && !b.seats.empty() && expiry_after >= before);
  }
  co_return true;
}

io::asio::awaitable<Result<std::optional<Settlement>>> PgStore::TryConfirmPaymentAsync(
    PaymentReport report, Booking* confirmed) {
  using Outcome = std::optional<Settlement>;
  Impl::LoopState* loop = impl_->Loop();
  const std::optional<int64_t> booking_id = ParseReference(report.reference);
  if (!loop || !report.succeeded || report.payment_id.empty() || !booking_id ||
      !OnAnotherShard(report, own_shard_.load()).ok()) {
    co_return Outcome();  // (the general path refuses another shard's report)
  }
  ConfirmRequest request{report.payment_id, report.session_id, *booking_id,
                         report.amount,     report.currency,   NewUuid()};
  const int64_t queue = *booking_id % Impl::kConfirmQueues;
  auto row = co_await loop->confirmations.Submit(queue, std::move(request));
  if (!row.ok()) co_return row.status();
  switch (row->outcome) {
    case ConfirmRow::Outcome::kDuplicate:
      co_return Outcome(Settlement::kDuplicate);
    case ConfirmRow::Outcome::kSlow:
      co_return Outcome();
    case ConfirmRow::Outcome::kConfirmed:
      break;
  }
  if (row->booking.id != *booking_id || row->booking.status != BookingStatus::kConfirmed) {
    co_return BOX_BROKEN_AFTER_COMMIT(booking.id == reference && booking.status == kConfirmed);
  }
  if (confirmed) *confirmed = std::move(row->booking);
  co_return Outcome(Settlement::kConfirmed);
}

Status PgStore::AbortCheckout(const KeyLock& lock) {
  auto r = impl_->InTx<bool>(&retried_, [&](PgConnection& c) -> Result<bool> {
    PgMoneyTx tx(c, impl_->Now());
    if (Status s = AbortCheckoutIn(tx, lock); !s.ok()) return s;
    return true;
  });
  return r.ok() ? Status::Ok() : r.status();
}

Status PgStore::EndCheckoutLease(const KeyLock& lock) {
  auto r = impl_->InTx<bool>(&retried_, [&](PgConnection& c) -> Result<bool> {
    PgMoneyTx tx(c, impl_->Now());
    if (Status s = EndCheckoutLeaseIn(tx, lock); !s.ok()) return s;
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

// The booking found, if any and if it is the customer's (or kAnyCustomer's).
Result<Booking> BookingOf(std::optional<Booking> found, int64_t booking_id, int64_t customer_id) {
  if (!found || (customer_id != Store::kAnyCustomer && found->customer_id != customer_id)) {
    return BookingNotFound(booking_id);
  }
  return std::move(*found);
}

}  // namespace

Result<Booking> PgStore::GetBooking(int64_t booking_id, int64_t customer_id) {
  return impl_->Run<Booking>(&retried_, [&](PgConnection& c) -> Result<Booking> {
    auto res = c.Exec(kSelectBooking, {P(booking_id)});
    if (!res.ok()) return res.status();
    const PGresult* r = res.value().get();
    return BookingOf(PQntuples(r) == 0 ? std::nullopt : std::optional<Booking>(ReadBooking(r)),
                     booking_id, customer_id);
  });
}

io::asio::awaitable<Result<Booking>> PgStore::GetBookingAsync(int64_t booking_id,
                                                              int64_t customer_id) {
  Impl::LoopState* loop = impl_->Loop();
  if (!loop) co_return GetBooking(booking_id, customer_id);  // off the loops
  auto found = co_await loop->booking_reads.Get(booking_id);
  if (!found.ok()) co_return found.status();
  co_return BookingOf(std::move(found.value()), booking_id, customer_id);
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
          out.push_back(
              Refund{Text(r, i, 0), Text(r, i, 1), PQgetisnull(r, i, 2) ? 0 : Int(r, i, 2),
                     Price{Int(r, i, 3), Text(r, i, 4)}, false, static_cast<int>(Int(r, i, 5))});
        }
        return out;
      });
}

Status PgStore::RefundAttemptFailed(const std::string& refund_id, bool refused,
                                    const std::string& error, Millis retry_after) {
  if (!IsUuid(refund_id)) return Status(Code::kNotFound, "refund " + refund_id + " not found");
  auto r = impl_->Run<bool>(&retried_, [&](PgConnection& c) -> Result<bool> {
    auto res = c.Exec(kRefundAttemptFailed, {impl_->Now(), refused ? "true" : "false", error,
                                             P(retry_after.count()), refund_id});
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
