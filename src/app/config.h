// Wiring helpers for the subcommands: the only place that knows the concrete stores.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "store/store.h"

namespace boxoffice::app {

struct StoreConfig {
  // --db: one sqlite: or postgresql:// URL, or several postgresql:// URLs (shards).
  std::vector<std::string> urls = {"sqlite:var/boxoffice.db"};
  size_t pool_size = 8;  // PostgreSQL connections per shard; small on purpose (DESIGN.md)
};

// The store requests use, and the databases the per-database jobs (sweeper, outbox relay,
// refund worker, reconciler) run on: each shard, or the one database.
struct Stores {
  std::unique_ptr<Store> store;
  using Database = Store::Database;
  std::vector<Database> databases;  // filled by OpenAndMigrate (shards are numbered then)
};

// "sqlite:PATH[?synchronous=full]" or "postgresql://…" (several: shards). The SQLite file's
// directory is created if missing. The embedded store reads `clock`; PostgreSQL uses its
// own clock.
Result<Stores> OpenStore(const StoreConfig& config, const Clock* clock);
// OpenStore, then every database migrated (and shards numbered).
Result<Stores> OpenAndMigrate(const StoreConfig& config, const Clock* clock);
// "sqlite", "postgresql" or "postgresql ×N shards", for logs.
std::string StoreKind(const StoreConfig& config);

}  // namespace boxoffice::app
