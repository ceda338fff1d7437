// Hold throughput on a hot 300-seat showtime with and without the Redis seat gate.
//
// 64 clients (threads) each repeatedly pick 1–4 adjacent seats in a random row and try to
// hold them through HoldService, as `serve` does; a winner keeps its hold half the time
// and releases it otherwise, so the hall fills up and then stays contended, like a
// premiere. The same run goes once straight to PostgreSQL and once through the gate (a
// fresh showtime each). Prints machine-readable lines:
//   result holds_store attempts_per_s=… wins=… store_updates_per_s=… p99_ms=…
//   result holds_gate  attempts_per_s=… wins=… gate_rejected_share=… store_updates_per_s=…
//   ratio gate_vs_store <attempts/s with the gate ÷ without>
// Needs BOXOFFICE_TEST_PG_URL and BOXOFFICE_REDIS (bench/gate.sh starts both).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gate/seat_gate.h"
#include "holds/hold_service.h"
#include "store/pg_store.h"

namespace boxoffice {
namespace {

struct Outcome {
  double seconds = 0;
  uint64_t attempts = 0, wins = 0, releases = 0, gate_rejected = 0;
  double p99_ms = 0;
};

int64_t MakeHall(Store& store, const std::string& title) {
  NewShowtime s;
  s.title = title;
  s.cinema = "Bench";
  s.hall = "Screen 1";
  s.starts_at = SystemClock().Now() + Millis(86'400'000);
  for (char row = 'A'; row < 'A' + 15; ++row) s.rows.push_back({std::string(1, row), 20, "std"});
  s.prices["std"] = Price{1250, "EUR"};
  auto id = store.CreateShowtime(s);
  if (!id.ok()) {
    std::fprintf(stderr, "cannot create the showtime: %s\n", id.status().message().c_str());
    std::exit(1);
  }
  return id.value();
}

Outcome Run(Store& store, SeatGate* gate, int threads, double seconds, Metrics* metrics) {
  const int64_t showtime = MakeHall(store, gate ? "gated" : "plain");
  HoldService holds(&store, HoldPolicy{}, metrics, gate);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> attempts{0}, wins{0}, releases{0}, rejected{0};
  std::vector<std::vector<double>> latencies(static_cast<size_t>(threads));
  std::vector<std::thread> pool;
  const auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::mt19937_64 rng(static_cast<uint64_t>(t) * 7919 + 1);
      auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
      int64_t customer = (int64_t{t} + 1) << 32;  // a new customer per attempt: no HOLD_LIMIT
      while (!stop.load(std::memory_order_relaxed)) {
        const int n = 1 + pick(4);
        const int first = 1 + pick(20 - n + 1);
        const std::string row(1, static_cast<char>('A' + pick(15)));
        std::vector<std::string> seats;
        for (int i = 0; i < n; ++i) seats.push_back(row + std::to_string(first + i));
        const auto t0 = std::chrono::steady_clock::now();
        auto r = holds.HoldSeats(showtime, ++customer, seats);
        latencies[static_cast<size_t>(t)].push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count());
        attempts.fetch_add(1, std::memory_order_relaxed);
        if (r.ok()) {
          wins.fetch_add(1, std::memory_order_relaxed);
          if (pick(2) == 0 && holds.ReleaseHold(r->hold_id, customer).ok()) releases.fetch_add(1);
        }
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& th : pool) th.join();
  Outcome o;
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  o.attempts = attempts.load();
  o.wins = wins.load();
  o.releases = releases.load();
  std::vector<double> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  if (!all.empty()) o.p99_ms = all[std::min(all.size() - 1, all.size() * 99 / 100)];
  if (gate) {
    const std::string text = metrics->Render();
    const std::string series = "boxoffice_gate_total{outcome=\"rejected\"} ";
    const size_t at = text.find(series);
    if (at != std::string::npos) o.gate_rejected = std::stoull(text.substr(at + series.size()));
  }
  return o;
}

}  // namespace
}  // namespace boxoffice

int main(int argc, char** argv) {
  using namespace boxoffice;
  const int threads = argc > 1 ? std::atoi(argv[1]) : 64;
  const double seconds = argc > 2 ? std::atof(argv[2]) : 5.0;
  const char* pg = std::getenv("BOXOFFICE_TEST_PG_URL");
  const char* redis_url = std::getenv("BOXOFFICE_REDIS");
  if (!pg || !redis_url) {
    std::fprintf(stderr, "needs BOXOFFICE_TEST_PG_URL and BOXOFFICE_REDIS (bench/gate.sh)\n");
    return 2;
  }
  PgOptions po;
  po.url = pg;
  PgStore store(po);
  if (Status s = store.Migrate(); !s.ok()) {
    std::fprintf(stderr, "migrate: %s\n", s.message().c_str());
    return 1;
  }
  auto redis = ParseRedisUrl(redis_url);
  redis->pool_size = static_cast<size_t>(threads);
  Metrics plain_metrics, gate_metrics;
  RedisSeatGate gate(std::make_unique<RedisClient>(*redis), RedisGateOptions{}, &gate_metrics);

  const Outcome plain = Run(store, nullptr, threads, seconds, &plain_metrics);
  const Outcome gated = Run(store, &gate, threads, seconds, &gate_metrics);
  auto report = [&](const char* name, const Outcome& o) {
    const double store_updates = static_cast<double>(o.attempts - o.gate_rejected + o.releases);
    std::printf(
        "result %s threads=%d seconds=%.1f attempts=%llu attempts_per_s=%.0f wins=%llu "
        "gate_rejected_share=%.3f store_updates_per_s=%.0f p99_ms=%.2f\n",
        name, threads, o.seconds, static_cast<unsigned long long>(o.attempts),
        static_cast<double>(o.attempts) / o.seconds, static_cast<unsigned long long>(o.wins),
        o.attempts ? static_cast<double>(o.gate_rejected) / static_cast<double>(o.attempts) : 0,
        store_updates / o.seconds, o.p99_ms);
  };
  report("holds_store", plain);
  report("holds_gate", gated);
  std::printf("ratio gate_vs_store %.2f\n",
              (static_cast<double>(gated.attempts) / gated.seconds) /
                  (static_cast<double>(plain.attempts) / plain.seconds));
  return 0;
}
