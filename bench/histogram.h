// Log-linear latency histogram of microseconds (64 sub-buckets per power of two, about
// 1.5 % precision), as boxoffice-bench records it per thread and route and merges at the end.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace boxoffice::bench {

class Histogram {
 public:
  static constexpr int kSub = 64;
  void Record(uint64_t us) {
    ++counts_[Index(us)];
    ++total_;
    max_ = std::max(max_, us);
  }
  void Merge(const Histogram& o) {
    for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += o.counts_[i];
    total_ += o.total_;
    max_ = std::max(max_, o.max_);
  }
  uint64_t total() const { return total_; }
  uint64_t max() const { return max_; }
  // The value at quantile q (upper edge of its bucket, never above the largest value).
  uint64_t Quantile(double q) const {
    if (total_ == 0) return 0;
    const uint64_t want =
        std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(q * static_cast<double>(total_))));
    uint64_t seen = 0;
    for (size_t i = 0; i < counts_.size(); ++i) {
      seen += counts_[i];
      if (seen >= want) return std::min(UpperEdge(i), max_);
    }
    return max_;
  }
  // The percentile spectrum a latency plot draws: (percentile, microseconds) at
  // 100 · (1 − 10^(−k/10)) for k = 0 … 40 (0 % … 99.99 %), then the maximum at 100 %.
  std::vector<std::pair<double, uint64_t>> Spectrum() const {
    std::vector<std::pair<double, uint64_t>> points;
    for (int k = 0; k <= 40; ++k) {
      const double q = 1.0 - std::pow(10.0, -k / 10.0);
      points.emplace_back(100.0 * q, Quantile(q));
    }
    points.emplace_back(100.0, max_);
    return points;
  }

 private:
  static size_t Index(uint64_t v) {
    if (v < kSub) return static_cast<size_t>(v);
    const int exp = 63 - __builtin_clzll(v) - 5;  // v >> exp is in [32, 64)
    return static_cast<size_t>(exp * 32 + static_cast<int>(v >> exp));
  }
  static uint64_t UpperEdge(size_t i) {
    if (i < kSub) return i;
    const int exp = static_cast<int>(i / 32) - 1;
    const uint64_t mant = i % 32 + 32;
    return ((mant + 1) << exp) - 1;
  }
  std::array<uint64_t, 64 * 32> counts_{};
  uint64_t total_ = 0;
  uint64_t max_ = 0;
};

}  // namespace boxoffice::bench
