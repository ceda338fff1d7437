// Wiring helpers for the subcommands: the only place that knows the concrete stores.
#pragma once

#include <memory>
#include <string>

#include "core/clock.h"
#include "core/status.h"
#include "store/store.h"

namespace boxoffice::app {

struct StoreConfig {
  std::string url = "sqlite:var/boxoffice.db";
  size_t pool_size = 8;  // PostgreSQL connections; small on purpose (DESIGN.md)
};

// "sqlite:PATH[?synchronous=full]" or "postgresql://…". The SQLite file's directory is
// created if missing. The embedded store reads `clock`; PostgreSQL uses its own clock.
Result<std::unique_ptr<Store>> OpenStore(const StoreConfig& config, const Clock* clock);

}  // namespace boxoffice::app
