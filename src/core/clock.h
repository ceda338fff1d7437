// Time as a value and the one injectable time source.
//
// An Instant is milliseconds since the Unix epoch, UTC: the precision the API prints and
// the stores keep. The Clock interface is the only way code below src/app reads the time,
// so tests move time by hand (ManualClock) instead of sleeping. With PostgreSQL the store
// uses the database's clock unless a test hands it a ManualClock (DESIGN.md invariant 7).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace boxoffice {

using Millis = std::chrono::milliseconds;
using Instant = std::chrono::sys_time<Millis>;

inline int64_t ToEpochMs(Instant t) { return t.time_since_epoch().count(); }
inline Instant FromEpochMs(int64_t ms) { return Instant(Millis(ms)); }

class Clock {
 public:
  virtual ~Clock() = default;
  // The current time. Thread-safe.
  virtual Instant Now() const = 0;
};

class SystemClock final : public Clock {
 public:
  Instant Now() const override {
    return std::chrono::time_point_cast<Millis>(std::chrono::system_clock::now());
  }
};

// A clock that only moves when told to. Thread-safe.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(Instant start) : now_ms_(ToEpochMs(start)) {}
  Instant Now() const override { return FromEpochMs(now_ms_.load()); }
  void Advance(Millis by) { now_ms_ += by.count(); }
  void Set(Instant t) { now_ms_ = ToEpochMs(t); }

 private:
  std::atomic<int64_t> now_ms_;
};

}  // namespace boxoffice
