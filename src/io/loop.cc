#include "io/loop.h"

#include <algorithm>

#include "core/log.h"

namespace boxoffice::io {
namespace {

thread_local Loop* current_loop = nullptr;

}  // namespace

void LogDetachedFailure(const char* what) {
  LogError("a follow-up job on the blocking pool failed", {{"error", std::string(what)}});
}

BlockingPool::BlockingPool(size_t threads, size_t max_pending, Counter* overloaded)
    : pool_(std::max<size_t>(1, threads)), max_pending_(max_pending), overloaded_(overloaded) {}

BlockingPool::~BlockingPool() { pool_.join(); }

bool BlockingPool::TryEnter() {
  if (pending_.fetch_add(1, std::memory_order_relaxed) >= max_pending_) {
    pending_.fetch_sub(1, std::memory_order_relaxed);
    if (overloaded_) overloaded_->Inc();
    return false;
  }
  return true;
}

Loop::Loop(size_t index, asio::io_context* context, BlockingPool* blocking)
    : index_(index),
      context_(context),
      blocking_(blocking),
      handle_(std::make_shared<LoopHandle>(context)) {
  BOX_ASSERT(index < kMaxLoops);
}

void Loop::Run() {
  BOX_ASSERT(current_loop == nullptr);
  current_loop = this;
  SetLogAsync(true);  // an I/O thread never writes a log line itself
  context_->run();
  // Per-loop connections close here, on their own thread, before the io_context goes.
  while (!exit_hooks_.empty()) {
    auto hook = std::move(exit_hooks_.back());
    exit_hooks_.pop_back();
    hook();
  }
  handle_->Close();
  SetLogAsync(false);
  FlushLogs();
  current_loop = nullptr;
}

Loop* Loop::Current() { return current_loop; }

void Loop::AtExit(std::function<void()> hook) {
  BOX_ASSERT(current_loop == this);
  exit_hooks_.push_back(std::move(hook));
}

}  // namespace boxoffice::io
