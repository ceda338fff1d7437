#include "app/config.h"

#include <filesystem>

#include "store/pg_store.h"
#include "store/sqlite_store.h"

namespace boxoffice::app {

Result<std::unique_ptr<Store>> OpenStore(const StoreConfig& config, const Clock* clock) {
  const std::string& url = config.url;
  if (url.rfind("sqlite:", 0) == 0) {
    auto options = SqliteStore::ParseUrl(url);
    if (!options)
      return Status(Code::kInvalid, "bad --db: expected sqlite:PATH[?synchronous=full|normal]");
    const auto dir = std::filesystem::path(options->path).parent_path();
    std::error_code ec;
    if (!dir.empty()) std::filesystem::create_directories(dir, ec);
    if (ec)
      return Status(Code::kUnavailable, "cannot create " + dir.string() + ": " + ec.message());
    return std::unique_ptr<Store>(std::make_unique<SqliteStore>(*options, clock));
  }
  if (url.rfind("postgresql://", 0) == 0 || url.rfind("postgres://", 0) == 0) {
    if (url.find(',') != std::string::npos) {
      return Status(Code::kInvalid, "sharding over several PostgreSQL URLs is not supported yet");
    }
    PgOptions options;
    options.url = url;
    options.pool_size = config.pool_size;
    return std::unique_ptr<Store>(std::make_unique<PgStore>(options));
  }
  return Status(Code::kInvalid, "bad --db: expected sqlite:PATH or postgresql://…");
}

}  // namespace boxoffice::app
