#include "core/log.h"

#include <atomic>
#include <cstdio>
#include <mutex>

#include "core/clock.h"
#include "core/time_format.h"

namespace boxoffice {
namespace {
std::atomic<LogLevel> g_level{LogLevel::kInfo};
std::mutex g_mu;
const char* LevelName(LogLevel l) {
  switch (l) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}
}  // namespace

void SetLogLevel(LogLevel level) { g_level = level; }

void Log(LogLevel level, std::string_view msg, nlohmann::json fields) {
  if (level < g_level.load(std::memory_order_relaxed)) return;
  nlohmann::json line = {
      {"ts", FormatRfc3339(SystemClock().Now())}, {"level", LevelName(level)}, {"msg", msg}};
  if (fields.is_object()) line.update(fields);
  const std::string text =
      line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::lock_guard lock(g_mu);
  std::fwrite(text.data(), 1, text.size(), stderr);
}

}  // namespace boxoffice
