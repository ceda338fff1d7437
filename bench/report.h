// The benchmark report: `make bench` keeps every line the scenarios print in
// var/bench/<time>-<mode>.txt, and `boxoffice-bench report` turns that file into
// docs/benchmarks.md with one SVG latency plot per scenario.
//
// The lines it reads (anything else is ignored):
//   # free text                         the machine and versions, shown as they are
//   scenario NAME COMMAND…              starts a scenario: the lines up to the next
//                                       `scenario` belong to it
//   result NAME key=value …             a measurement (rps, p99_ms, …) or a check (audit)
//   latency NAME percentile=ms …        a latency spectrum, drawn in the scenario's plot
//   ratio NAME x                        ours against a reference measured in the same run
#pragma once

#include <istream>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace boxoffice::bench {

struct Result {
  std::string name;
  std::vector<std::pair<std::string, std::string>> fields;  // in printed order
  const std::string* Find(const std::string& key) const;
  std::optional<double> Number(const std::string& key) const;
};

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (percentile, milliseconds)
};

struct Scenario {
  std::string name;
  std::string command;
  std::vector<Result> results;
  std::vector<Series> latency;
  std::vector<std::pair<std::string, double>> ratios;
};

struct BenchRun {
  std::vector<std::string> notes;  // the `#` lines, without the '#'
  std::vector<Scenario> scenarios;

  const Result* FindResult(const std::string& name) const;
  std::optional<double> Ratio(const std::string& name) const;
};

BenchRun ParseRun(std::istream& in);

// One latency plot: percentile on a log scale of 1/(1 − p) from 0 % to 99.99 % and the
// maximum, milliseconds on a log scale; one line per series.
std::string LatencyPlotSvg(const std::string& title, const std::vector<Series>& series);

// A speed target of the premiere benchmark, checked against a run.
struct Target {
  std::string what;
  std::string measured;
  enum class State { kMet, kMissed, kNotRun, kReported } state;  // kReported: no bound
  std::string detail;  // by how much it was missed
};
std::vector<Target> CheckTargets(const BenchRun& run);

// The whole docs/benchmarks.md. `plot_dir` is where the plots are, relative to it; the
// plot of a scenario is `<plot_dir>/<scenario>.svg`.
std::string ReportMarkdown(const BenchRun& run, const std::string& source,
                           const std::string& plot_dir);

}  // namespace boxoffice::bench
