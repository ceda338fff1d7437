#include "core/metrics.h"

#include <algorithm>
#include <cstdio>

#include "core/status.h"

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
  BOX_ASSERT(std::is_sorted(bounds_.begin(), bounds_.end()));  // Observe scans them in order
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
  MutexLock lock(mu_);
  auto& slot = FamilyFor(name, help, "counter").counters[labels];
  if (!slot) slot = std::make_unique<Counter>();
  return *slot;
}

Histogram& Metrics::GetLatency(const std::string& name, const std::string& help,
                               const std::string& labels) {
  MutexLock lock(mu_);
  auto& slot = FamilyFor(name, help, "histogram").histograms[labels];
  if (!slot) {
    slot = std::make_unique<Histogram>(std::vector<double>{0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                           0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5});
  }
  return *slot;
}

void Metrics::AddGauge(const std::string& name, const std::string& help,
                       std::function<double()> read, const std::string& labels) {
  MutexLock lock(mu_);
  FamilyFor(name, help, "gauge").gauges[labels] = std::move(read);
}

struct Metrics::CollectorSlot {
  std::mutex mu;     // held while collect runs, and by the handle's destructor
  bool alive = true;  // guarded by mu
  std::function<void(Samples*)> collect;
};

void Metrics::CollectorHandle::Reset() {
  if (!slot_) return;
  {
    std::lock_guard lock(slot_->mu);  // waits for a scrape running it
    slot_->alive = false;
  }
  slot_.reset();
}

Metrics::CollectorHandle Metrics::AddCollector(const std::string& name, const std::string& help,
                                               std::function<void(Samples*)> collect) {
  auto slot = std::make_shared<CollectorSlot>();
  slot->collect = std::move(collect);
  MutexLock lock(mu_);
  auto& collectors = FamilyFor(name, help, "gauge").collectors;
  std::erase_if(collectors, [](const auto& weak) { return weak.expired(); });
  collectors.push_back(slot);
  return CollectorHandle(std::move(slot));
}

std::string Metrics::Render() const {
  // Under the mutex: the text of counters and histograms, and copies of the readers.
  struct Part {
    std::string name;
    std::string text;
    std::vector<std::pair<std::string, std::function<double()>>> gauges;
    std::vector<std::shared_ptr<CollectorSlot>> collectors;
  };
  std::vector<Part> parts;
  {
    MutexLock lock(mu_);
    parts.reserve(families_.size());
    for (const auto& [name, f] : families_) {
      Part& p = parts.emplace_back();
      p.name = name;
      p.text = "# HELP " + name + " " + f.help + "\n# TYPE " + name + " " + f.type + "\n";
      for (const auto& [labels, c] : f.counters) {
        p.text += Series(name, labels) + " " + std::to_string(c->Value()) + "\n";
      }
      for (const auto& [labels, h] : f.histograms) h->Render(name, labels, &p.text);
      p.gauges.assign(f.gauges.begin(), f.gauges.end());
      for (const auto& weak : f.collectors) {
        if (auto slot = weak.lock()) p.collectors.push_back(std::move(slot));
      }
    }
  }
  // Without it: the readers may take their components' locks.
  std::string out;
  Samples samples;
  for (Part& p : parts) {
    out += p.text;
    for (const auto& [labels, read] : p.gauges) out += Series(p.name, labels) + " " + Num(read()) + "\n";
    for (const auto& slot : p.collectors) {
      samples.clear();
      {
        std::lock_guard lock(slot->mu);
        if (slot->alive) slot->collect(&samples);
      }
      for (const auto& [labels, value] : samples) {
        out += Series(p.name, labels) + " " + Num(value) + "\n";
      }
    }
  }
  return out;
}

}  // namespace boxoffice
