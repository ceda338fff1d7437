#include "app/config.h"

#include <filesystem>

#include "store/pg_store.h"
#include "store/sharded_store.h"
#include "store/shards.h"
#include "store/sqlite_store.h"

namespace boxoffice::app {
namespace {

bool IsPostgresUrl(const std::string& url) {
  return url.rfind("postgresql://", 0) == 0 || url.rfind("postgres://", 0) == 0;
}

}  // namespace

Result<Stores> OpenStore(const StoreConfig& config, const Clock* clock) {
  if (config.urls.empty()) return Status(Code::kInvalid, "--db is required");
  Stores out;
  if (config.urls.size() > 1) {
    if (config.urls.size() > static_cast<size_t>(kMaxShards))
      return Status(Code::kInvalid, "too many --db shards");
    std::vector<std::unique_ptr<PgStore>> shards;
    for (const std::string& url : config.urls) {
      if (!IsPostgresUrl(url))
        return Status(Code::kInvalid,
                      "bad --db: several --db are PostgreSQL shards, each a "
                      "postgresql:// URL");
      PgOptions options;
      options.url = url;
      options.pool_size = config.pool_size;
      shards.push_back(std::make_unique<PgStore>(options));
    }
    out.store = std::make_unique<ShardedStore>(std::move(shards));
    return out;
  }
  const std::string& url = config.urls.front();
  if (url.rfind("sqlite:", 0) == 0) {
    auto options = SqliteStore::ParseUrl(url);
    if (!options)
      return Status(Code::kInvalid, "bad --db: expected sqlite:PATH[?synchronous=full|normal]");
    const auto dir = std::filesystem::path(options->path).parent_path();
    std::error_code ec;
    if (!dir.empty()) std::filesystem::create_directories(dir, ec);
    if (ec)
      return Status(Code::kUnavailable, "cannot create " + dir.string() + ": " + ec.message());
    out.store = std::make_unique<SqliteStore>(*options, clock);
    return out;
  }
  if (IsPostgresUrl(url)) {
    PgOptions options;
    options.url = url;
    options.pool_size = config.pool_size;
    out.store = std::make_unique<PgStore>(options);
    return out;
  }
  return Status(Code::kInvalid, "bad --db: expected sqlite:PATH or postgresql://…");
}

Result<Stores> OpenAndMigrate(const StoreConfig& config, const Clock* clock) {
  auto stores = OpenStore(config, clock);
  if (!stores.ok()) return stores.status();
  Stores& s = stores.value();
  if (Status st = s.store->Migrate(); !st.ok()) return st;
  s.databases = s.store->Databases();
  return stores;
}

std::string StoreKind(const StoreConfig& config) {
  if (config.urls.size() > 1)
    return "postgresql x" + std::to_string(config.urls.size()) + " shards";
  const std::string& url = config.urls.empty() ? std::string() : config.urls.front();
  return url.substr(0, url.find(':'));
}

}  // namespace boxoffice::app
