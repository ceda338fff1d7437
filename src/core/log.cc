#include "core/log.h"

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "core/clock.h"
#include "core/time_format.h"

namespace boxoffice {
namespace {
std::atomic<LogLevel> g_level{LogLevel::kInfo};
thread_local bool t_async = false;

void Write(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stderr); }

// The writer thread of the queued lines; started at the first queued line, stopped (after
// writing everything) at exit.
class Writer {
 public:
  ~Writer() {
    {
      std::lock_guard lock(mu_);
      if (!thread_.joinable()) return;
      stopping_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }

  void Push(std::string line) {
    {
      std::lock_guard lock(mu_);  // a leaf, held to queue a string: no system call under it
      if (!thread_.joinable()) thread_ = std::thread([this] { Run(); });
      if (queue_.size() >= kMaxQueuedLines) {
        ++dropped_;
        return;
      }
      queue_.push_back(std::move(line));
    }
    wake_.notify_one();
  }

  void Flush() {
    std::unique_lock lock(mu_);
    drained_.wait(lock, [this] { return queue_.empty() && !writing_; });
  }

 private:
  void Run() {
    std::unique_lock lock(mu_);
    for (;;) {
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty() && stopping_) return;
      std::deque<std::string> lines;
      lines.swap(queue_);
      const uint64_t dropped = dropped_;
      dropped_ = 0;
      writing_ = true;
      lock.unlock();
      for (const auto& line : lines) Write(line);
      if (dropped > 0) {
        Write("{\"level\":\"warn\",\"msg\":\"log lines dropped: the queue was full\",\"dropped\":" +
              std::to_string(dropped) + "}\n");
      }
      lock.lock();
      writing_ = false;
      drained_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable drained_;
  std::deque<std::string> queue_;  // guarded by mu_
  uint64_t dropped_ = 0;           // guarded by mu_
  bool writing_ = false;           // guarded by mu_
  bool stopping_ = false;          // guarded by mu_
  std::thread thread_;
};

Writer& TheWriter() {
  static Writer writer;
  return writer;
}

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
void SetLogAsync(bool async) { t_async = async; }
void FlushLogs() { TheWriter().Flush(); }

void Log(LogLevel level, std::string_view msg, nlohmann::json fields) {
  if (level < g_level.load(std::memory_order_relaxed)) return;
  nlohmann::json line = {
      {"ts", FormatRfc3339(SystemClock().Now())}, {"level", LevelName(level)}, {"msg", msg}};
  if (fields.is_object()) line.update(fields);
  std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (t_async) {
    TheWriter().Push(std::move(text));
  } else {
    Write(text);
  }
}

}  // namespace boxoffice
