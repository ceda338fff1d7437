// Prometheus metrics: counters, gauges and histograms rendered in the text exposition
// format (version 0.0.4). No client library is packaged in Debian, and the format is small.
//
// A series is a metric name plus a label string (`route="/holds",status="201"`). Look-ups
// take a mutex; the returned references are stable for the life of the registry, so hot
// paths may keep them. Label values must come from a bounded set (route patterns, status
// codes), never from request data.
//
// Lock order: the registry's mutex is a leaf. Gauge readers and collectors call into other
// components (which take their own locks, and may register metrics), so Render copies them
// under the mutex and calls them after releasing it; nothing is ever called back while the
// registry's mutex is held. A gauge reader must stay valid for the life of the registry;
// series that come and go (one per open waiting room) belong to a collector, which lists
// the series that exist at each scrape and is unregistered by its handle's destructor.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/sync.h"

namespace boxoffice {

class Counter {
 public:
  void Inc(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

class Histogram {
 public:
  // Upper bounds in seconds, ascending; +Inf is implicit.
  explicit Histogram(std::vector<double> bounds);
  void Observe(double seconds);
  void Render(const std::string& name, const std::string& labels, std::string* out) const;

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // bounds_.size() + 1
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_us_{0};
};

class Metrics {
 public:
  Metrics() = default;
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  Counter& GetCounter(const std::string& name, const std::string& help,
                      const std::string& labels = "");
  Histogram& GetLatency(const std::string& name, const std::string& help,
                        const std::string& labels = "");
  // A gauge read when /metrics is scraped (one series per labels).
  void AddGauge(const std::string& name, const std::string& help, std::function<double()> read,
                const std::string& labels = "");
  // A gauge family whose series are listed at each scrape: collect appends (labels, value)
  // pairs. Series it stops listing disappear, so the family's cardinality is what exists now.
  // The collector runs until the returned handle is destroyed; the handle's destructor waits
  // for a scrape that is running it, so `collect` may capture its owner's `this`. Lock
  // order: a collector's own mutex, then whatever collect takes; the owner must not hold a
  // lock that collect takes while destroying the handle.
  using Samples = std::vector<std::pair<std::string, double>>;
  struct CollectorSlot;
  class CollectorHandle {
   public:
    CollectorHandle() = default;
    explicit CollectorHandle(std::shared_ptr<CollectorSlot> slot) : slot_(std::move(slot)) {}
    CollectorHandle(CollectorHandle&&) = default;
    CollectorHandle& operator=(CollectorHandle&& other) {
      if (this != &other) {
        Reset();
        slot_ = std::move(other.slot_);
      }
      return *this;
    }
    ~CollectorHandle() { Reset(); }
    // Unregisters now (waiting for a scrape running it).
    void Reset();

   private:
    std::shared_ptr<CollectorSlot> slot_;
  };
  [[nodiscard]] CollectorHandle AddCollector(const std::string& name, const std::string& help,
                                             std::function<void(Samples*)> collect);
  std::string Render() const;

 private:
  struct Family {
    std::string help;
    std::string type;
    std::map<std::string, std::unique_ptr<Counter>> counters;
    std::map<std::string, std::unique_ptr<Histogram>> histograms;
    std::map<std::string, std::function<double()>> gauges;
    std::vector<std::weak_ptr<CollectorSlot>> collectors;
  };
  Family& FamilyFor(const std::string& name, const std::string& help, const char* type)
      BOX_REQUIRES(mu_);

  mutable Mutex mu_;
  std::map<std::string, Family> families_ BOX_GUARDED_BY(mu_);
};

}  // namespace boxoffice
