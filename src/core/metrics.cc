#include "core/metrics.h"

#include <cstdio>

namespace boxoffice {
namespace {

std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string Series(const std::string& name, const std::string& labels) {
  return labels.empty() ? name : name + "{" + labels + "}";
}

}  // namespace

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), buckets_(new std::atomic<uint64_t>[bounds_.size() + 1]) {
  for (size_t i = 0; i <= bounds_.size(); ++i) buckets_[i] = 0;
}

void Histogram::Observe(double seconds) {
  size_t i = 0;
  while (i < bounds_.size() && seconds > bounds_[i]) ++i;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_us_.fetch_add(static_cast<uint64_t>(seconds * 1e6), std::memory_order_relaxed);
}

void Histogram::Render(const std::string& name, const std::string& labels, std::string* out) const {
  const std::string sep = labels.empty() ? "" : labels + ",";
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    *out += name + "_bucket{" + sep + "le=\"" + Num(bounds_[i]) + "\"} " +
            std::to_string(cumulative) + "\n";
  }
  cumulative += buckets_[bounds_.size()].load(std::memory_order_relaxed);
  *out += name + "_bucket{" + sep + "le=\"+Inf\"} " + std::to_string(cumulative) + "\n";
  *out += Series(name + "_sum", labels) + " " +
          Num(static_cast<double>(sum_us_.load(std::memory_order_relaxed)) / 1e6) + "\n";
  *out += Series(name + "_count", labels) + " " + std::to_string(cumulative) + "\n";
}

Metrics::Family& Metrics::FamilyFor(const std::string& name, const std::string& help,
                                    const char* type) {
  auto& f = families_[name];
  if (f.type.empty()) {
    f.help = help;
    f.type = type;
  }
  return f;
}

Counter& Metrics::GetCounter(const std::string& name, const std::string& help,
                             const std::string& labels) {
  std::lock_guard lock(mu_);
  auto& slot = FamilyFor(name, help, "counter").counters[labels];
  if (!slot) slot = std::make_unique<Counter>();
  return *slot;
}

Histogram& Metrics::GetLatency(const std::string& name, const std::string& help,
                               const std::string& labels) {
  std::lock_guard lock(mu_);
  auto& slot = FamilyFor(name, help, "histogram").histograms[labels];
  if (!slot) {
    slot = std::make_unique<Histogram>(std::vector<double>{0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                           0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5});
  }
  return *slot;
}

void Metrics::AddGauge(const std::string& name, const std::string& help,
                       std::function<double()> read, const std::string& labels) {
  std::lock_guard lock(mu_);
  FamilyFor(name, help, "gauge").gauges[labels] = std::move(read);
}

std::string Metrics::Render() const {
  std::lock_guard lock(mu_);
  std::string out;
  for (const auto& [name, f] : families_) {
    out += "# HELP " + name + " " + f.help + "\n# TYPE " + name + " " + f.type + "\n";
    for (const auto& [labels, c] : f.counters) {
      out += Series(name, labels) + " " + std::to_string(c->Value()) + "\n";
    }
    for (const auto& [labels, h] : f.histograms) h->Render(name, labels, &out);
    for (const auto& [labels, read] : f.gauges)
      out += Series(name, labels) + " " + Num(read()) + "\n";
  }
  return out;
}

}  // namespace boxoffice
