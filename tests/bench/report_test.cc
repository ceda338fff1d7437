// The benchmark's histogram and the report `make bench` writes from a run's lines.
#include "bench/report.h"

#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "bench/histogram.h"

namespace boxoffice::bench {
namespace {

TEST(Histogram, QuantilesAreWithinTheBucketPrecision) {
  Histogram h;
  std::vector<uint64_t> values;
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> latency(7.0, 1.0);  // around a millisecond, long tail
  for (int i = 0; i < 100000; ++i) {
    values.push_back(static_cast<uint64_t>(latency(rng)));
    h.Record(values.back());
  }
  std::sort(values.begin(), values.end());
  for (double q : {0.5, 0.9, 0.99, 0.999}) {
    const double exact = static_cast<double>(values[static_cast<size_t>(q * values.size()) - 1]);
    EXPECT_NEAR(static_cast<double>(h.Quantile(q)), exact, exact * 0.035) << q;
  }
  EXPECT_EQ(h.max(), values.back());
  EXPECT_EQ(h.total(), values.size());
}

TEST(Histogram, SpectrumRisesFromTheSmallestToTheLargest) {
  Histogram a, b;
  for (uint64_t us = 100; us <= 1000; ++us) a.Record(us);
  b.Record(5000);
  a.Merge(b);
  const auto spectrum = a.Spectrum();
  ASSERT_EQ(spectrum.size(), 42u);
  EXPECT_EQ(spectrum.front().first, 0.0);
  EXPECT_LE(spectrum.front().second, 101u);
  EXPECT_EQ(spectrum.back(), (std::pair<double, uint64_t>{100.0, 5000}));
  for (size_t i = 1; i < spectrum.size(); ++i) {
    EXPECT_GT(spectrum[i].first, spectrum[i - 1].first);
    EXPECT_GE(spectrum[i].second, spectrum[i - 1].second);
  }
  EXPECT_NEAR(spectrum[40].first, 99.99, 1e-9);
}

const char* kRun = R"(# boxoffice benchmarks (quick) on 2 cores
# postgres 15; redis 7
scenario seatmap bench/seatmap.sh 64 5
result seatmap requests=1000 rps=38972 p50_ms=1.34 p90_ms=3.52 p99_ms=5.63 p999_ms=8.06 max_ms=11.04 errors=0 status_200=1000 connections=64
latency seatmap 0=0.1 50=1.34 99=5.63 100=11.04
result seatmap_nginx requests=1000 rps=39104 p50_ms=1.05 p90_ms=3.97 p99_ms=7.81 p999_ms=8.45 max_ms=11.84 errors=0 status_200=1000 connections=64
latency seatmap_nginx 0=0.1 50=1.05 99=7.81 100=11.84
result seatmap_store queries=5 per_second=1.00
ratio seatmap_vs_nginx 1.00
scenario holdstorm bench/holdstorm.sh 64 20
result holdstorm_gate requests=7069 rps=2783 p50_ms=19.45 p90_ms=29.18 p99_ms=48.13 p999_ms=86.02 max_ms=119.07 errors=0 status_201=2086 status_409=4983 attempts_per_s=2783
result holdstorm_gate_audit violations=0 seats_booked=0
ratio holds_vs_pgbench 0.31
noise that is not a line of the run
scenario premiere bench/premiere.sh 500 10 30
result premiere requests=65341 rps=7725 seconds=8.46 sold_out=yes sell_out_s=7.76
result premiere_hold requests=1324 rps=157 p50_ms=188.41 p90_ms=327.68 p99_ms=434.18 p999_ms=489.14 max_ms=489.14 errors=0
result premiere_checkout requests=977 rps=116 p50_ms=262.14 p90_ms=393.21 p99_ms=516.10 p999_ms=534.91 max_ms=534.91 errors=0
result premiere_nginx requests=329152 rps=32915 p50_ms=15.36 p90_ms=20.48 p99_ms=927.65 p999_ms=35.84 max_ms=1049.65 errors=0
result premiere_audit violations=2 seats_booked=3000
ratio premiere_vs_nginx 0.23
)";

BenchRun Parsed() {
  std::istringstream in(kRun);
  return ParseRun(in);
}

TEST(Report, LinesBelongToTheScenarioAboveThem) {
  const BenchRun run = Parsed();
  ASSERT_EQ(run.notes.size(), 2u);
  EXPECT_EQ(run.notes[1], "postgres 15; redis 7");
  ASSERT_EQ(run.scenarios.size(), 3u);
  EXPECT_EQ(run.scenarios[0].name, "seatmap");
  EXPECT_EQ(run.scenarios[0].command, "bench/seatmap.sh 64 5");
  EXPECT_EQ(run.scenarios[0].results.size(), 3u);
  ASSERT_EQ(run.scenarios[0].latency.size(), 2u);
  EXPECT_EQ(run.scenarios[0].latency[1].points.back(), (std::pair<double, double>{100, 11.84}));
  EXPECT_EQ(run.scenarios[1].results.size(), 2u);
  EXPECT_EQ(run.FindResult("holdstorm_gate")->Number("p99_ms"), 48.13);
  EXPECT_EQ(run.FindResult("premiere")->Number("sold_out"), std::nullopt);
  EXPECT_EQ(*run.FindResult("premiere")->Find("sold_out"), "yes");
  EXPECT_EQ(run.Ratio("holds_vs_pgbench"), 0.31);
  EXPECT_EQ(run.Ratio("nothing"), std::nullopt);
}

TEST(Report, TargetsSayMetOrByHowMuchTheyWereMissed) {
  const auto targets = CheckTargets(Parsed());
  ASSERT_EQ(targets.size(), 12u);
  auto find = [&](const std::string& prefix) {
    for (const auto& t : targets)
      if (t.what.find(prefix) != std::string::npos) return t;
    ADD_FAILURE() << prefix;
    return targets[0];
  };
  EXPECT_EQ(find("our own client").state, Target::State::kMet);
  EXPECT_EQ(find("wrk").state, Target::State::kNotRun);
  const auto storm = find("holds_vs_pgbench");
  EXPECT_EQ(storm.state, Target::State::kMissed);
  EXPECT_EQ(storm.detail, "3.2× short");
  EXPECT_EQ(find("gated storm in open loop").state, Target::State::kNotRun);
  // One audit found violations: the run failed, whatever the others say.
  const auto audits = find("invariant");
  EXPECT_EQ(audits.state, Target::State::kMissed);
  EXPECT_EQ(audits.measured, "2 (holdstorm_gate_audit, premiere_audit)");
  const auto sold = find("sold out");
  EXPECT_EQ(sold.measured, "in 7.76 s");
  EXPECT_EQ(sold.state, Target::State::kMissed);
  EXPECT_EQ(sold.detail, "3.1× over");
  EXPECT_EQ(find("postgres_ms_per_purchase").state, Target::State::kNotRun);
  // The reference's own p99 is not one of the premiere's routes.
  const auto routes = find("closed loop: p99");
  EXPECT_EQ(routes.measured, "516 ms (worst: checkout)");
  EXPECT_EQ(routes.state, Target::State::kMissed);
  EXPECT_EQ(find("open loop at half the closed-loop rate").state, Target::State::kNotRun);
  EXPECT_EQ(find("statements_per_purchase").state, Target::State::kNotRun);
  const auto premiere = find("premiere_vs_nginx");
  EXPECT_EQ(premiere.state, Target::State::kMissed);
  EXPECT_EQ(premiere.detail, "2.2× short");
}

TEST(Report, TargetsOfScenariosNotRunAreSaidSo) {
  std::istringstream in("scenario seatmap bench/seatmap.sh\nratio seatmap_vs_nginx 0.85\n");
  const auto targets = CheckTargets(ParseRun(in));
  for (const auto& t : targets) {
    const bool seatmap = t.what.find("our own client") != std::string::npos;
    EXPECT_EQ(t.state, seatmap ? Target::State::kMet : Target::State::kNotRun) << t.what;
  }
}

// Lines without a bound are reported as such, never counted as met.
TEST(Report, ReportedLinesAreNeitherMetNorMissed) {
  std::istringstream in(
      "scenario premiere bench/premiere.sh\nratio premiere_live_vs_polling 1.18\n"
      "scenario allocations bench/allocations.sh\nresult allocations_seatmap per_request=15.9\n");
  const BenchRun run = ParseRun(in);
  int reported = 0;
  for (const auto& t : CheckTargets(run)) {
    if (t.what.find("premiere_live_vs_polling") != std::string::npos ||
        t.what.find("allocations") != std::string::npos) {
      EXPECT_EQ(t.state, Target::State::kReported) << t.what;
      ++reported;
    }
  }
  EXPECT_EQ(reported, 2);
  const std::string md = ReportMarkdown(run, "run.txt", "bench");
  EXPECT_NE(md.find("| heap allocations per seat-map read (reported) | 15.9 | reported |"),
            std::string::npos)
      << md;
}

TEST(Report, MarkdownHasTheTablesRatiosAndPlots) {
  const std::string md = ReportMarkdown(Parsed(), "var/bench/run.txt", "bench");
  EXPECT_NE(md.find("var/bench/run.txt"), std::string::npos);
  EXPECT_NE(md.find("- postgres 15; redis 7\n"), std::string::npos);
  EXPECT_NE(md.find("| `seatmap` | 1,000 | 38,972 | 1.34 ms | 3.52 ms | 5.63 ms | 8.06 ms | "
                    "11.0 ms | 0 | 200: 1,000 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("**`ratio seatmap_vs_nginx 1.00`**"), std::string::npos);
  EXPECT_NE(md.find("- `seatmap_store`: queries 5 · per_second 1.00"), std::string::npos);
  EXPECT_NE(md.find("![seatmap latency](bench/seatmap.svg)"), std::string::npos);
  // No latency lines, no plot.
  EXPECT_EQ(md.find("holdstorm.svg"), std::string::npos);
  EXPECT_NE(md.find("```sh\nbench/premiere.sh 500 10 30\n```"), std::string::npos);
  EXPECT_NE(md.find("| premiere sold out (3,000 seats, 500 connections) in ≤ 2.5 s (aim 1.5 s) | "
                    "in 7.76 s |"),
            std::string::npos);
  // A result without latency keeps its totals; long latencies get thousands separators.
  EXPECT_NE(md.find("- `premiere`: requests 65,341 · rps 7,725 · seconds 8.46 · sold_out yes"),
            std::string::npos);
  EXPECT_NE(md.find("| `premiere_nginx` | 329,152 | 32,915 | 15.4 ms | 20.5 ms | 928 ms |"),
            std::string::npos);
}

TEST(Report, PlotDrawsEverySeriesHigherForSlowerRequests) {
  const std::vector<Series> series = {{"fast", {{0, 0.5}, {99, 2}, {100, 3}}},
                                      {"slow <&>", {{0, 5}, {99, 200}, {100, 900}}}};
  const std::string svg = LatencyPlotSvg("a \"plot\"", series);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_TRUE(svg.ends_with("</svg>\n"));
  EXPECT_NE(svg.find("slow &lt;&amp;&gt;"), std::string::npos);
  EXPECT_NE(svg.find("a &quot;plot&quot;"), std::string::npos);
  // Decades from 0.1 ms to 1,000 ms.
  EXPECT_NE(svg.find(">0.1 ms<"), std::string::npos);
  EXPECT_NE(svg.find(">1,000 ms<"), std::string::npos);
  // Two lines; the slow one's first point lies above (smaller y than) the fast one's.
  std::vector<double> first_y;
  for (size_t at = 0; (at = svg.find("<polyline", at)) != std::string::npos; ++at) {
    const size_t points = svg.find("points=\"", at) + 8;
    const size_t comma = svg.find(',', points);
    first_y.push_back(std::stod(svg.substr(comma + 1)));
  }
  ASSERT_EQ(first_y.size(), 2u);
  EXPECT_LT(first_y[1], first_y[0]);
}

}  // namespace
}  // namespace boxoffice::bench
