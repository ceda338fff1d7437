// Prometheus metrics: counters, gauges and histograms rendered in the text exposition
// format (version 0.0.4). No client library is packaged in Debian, and the format is small.
//
// A series is a metric name plus a label string (`route="/holds",status="201"`). Look-ups
// take a mutex; the returned references are stable for the life of the registry, so hot
// paths may keep them. Label values must come from a bounded set (route patterns, status
// codes), never from request data.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

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
  Counter& GetCounter(const std::string& name, const std::string& help,
                      const std::string& labels = "");
  Histogram& GetLatency(const std::string& name, const std::string& help,
                        const std::string& labels = "");
  // A gauge read when /metrics is scraped (one series per labels).
  void AddGauge(const std::string& name, const std::string& help, std::function<double()> read,
                const std::string& labels = "");
  std::string Render() const;

 private:
  struct Family {
    std::string help;
    std::string type;
    std::map<std::string, std::unique_ptr<Counter>> counters;
    std::map<std::string, std::unique_ptr<Histogram>> histograms;
    std::map<std::string, std::function<double()>> gauges;
  };
  Family& FamilyFor(const std::string& name, const std::string& help, const char* type);

  mutable std::mutex mu_;
  std::map<std::string, Family> families_;
};

}  // namespace boxoffice
