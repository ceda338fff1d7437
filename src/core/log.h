// Structured logs: one JSON object per line on stderr, so a log shipper needs no parser
// of ours. Every line has "ts", "level" and "msg"; callers add fields. Thread-safe: a line
// is written with one stdio call and never interleaves with another.
//
// A thread that must never block (an I/O loop: SetLogAsync(true)) does not write: its
// lines go to a bounded queue that a writer thread empties (kMaxQueuedLines; past that a
// line is dropped and the drops are reported in a line of their own). Other threads write
// at once. FlushLogs waits until the queue is written (before a deliberate crash, an
// assertion's abort, and at exit).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string_view>

namespace boxoffice {

enum class LogLevel { kDebug, kInfo, kWarn, kError };

inline constexpr size_t kMaxQueuedLines = 10'000;

void SetLogLevel(LogLevel level);
// Whether the calling thread's lines are queued for the writer thread (see above).
void SetLogAsync(bool async);
void FlushLogs();
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
