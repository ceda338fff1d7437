// Structured logs: one JSON object per line on stderr, so a log shipper needs no parser
// of ours. Every line has "ts", "level" and "msg"; callers add fields. Thread-safe: a
// line is written with one call under a mutex and never interleaves with another.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

namespace boxoffice {

enum class LogLevel { kDebug, kInfo, kWarn, kError };

void SetLogLevel(LogLevel level);
void Log(LogLevel level, std::string_view msg, nlohmann::json fields = nlohmann::json::object());

inline void LogInfo(std::string_view msg, nlohmann::json fields = nlohmann::json::object()) {
  Log(LogLevel::kInfo, msg, std::move(fields));
}
inline void LogWarn(std::string_view msg, nlohmann::json fields = nlohmann::json::object()) {
  Log(LogLevel::kWarn, msg, std::move(fields));
}
inline void LogError(std::string_view msg, nlohmann::json fields = nlohmann::json::object()) {
  Log(LogLevel::kError, msg, std::move(fields));
}

}  // namespace boxoffice
