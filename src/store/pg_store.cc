#include "store/pg_store_impl.h"

namespace boxoffice {

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

const std::string& PgStore::url() const { return impl_->options.url; }

Status PgStore::Ping() {
  auto r = impl_->Run<bool>(&retried_, [](PgConnection& c) -> Result<bool> {
    auto res = c.Exec(kPing, {});
    if (!res.ok()) return res.status();
    return true;
  });
  return r.ok() ? Status::Ok() : r.status();
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
                       Int(r, 0, 4), Int(r, 0, 5), Int(r, 0, 6), Int(r, 0, 7)};
  });
}

io::asio::awaitable<Status> PgStore::PingAsync() {
  Impl::LoopState* loop = impl_->Loop();
  if (!loop) co_return Ping();  // off the loops
  std::vector<Param> none;      // (named: g++ 12 and braced temporaries in co_await)
  auto res = co_await loop->pipelines.Exec(kPing, std::move(none));
  co_return res.ok() ? Status::Ok() : res.status();
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
uint64_t PgStore::checkout_statements() const {
  return impl_->checkout_counts.statements.load(std::memory_order_relaxed);
}
uint64_t PgStore::batched_checkouts() const {
  return impl_->checkout_counts.requests.load(std::memory_order_relaxed);
}
uint64_t PgStore::finish_statements() const {
  return impl_->finish_counts.statements.load(std::memory_order_relaxed);
}
uint64_t PgStore::batched_finishes() const {
  return impl_->finish_counts.requests.load(std::memory_order_relaxed);
}

Result<std::vector<OutboxEvent>> PgStore::PendingEvents(int64_t after_id, int limit) {
  return impl_->Run<std::vector<OutboxEvent>>(
      &retried_, [&](PgConnection& c) -> Result<std::vector<OutboxEvent>> {
        auto res = c.Exec(kPendingEvents, {P(after_id), P(int64_t{limit})});
        if (!res.ok()) return res.status();
        return ReadOutboxEvents(res.value().get());
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

}  // namespace boxoffice
