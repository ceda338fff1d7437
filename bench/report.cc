#include "bench/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>

namespace boxoffice::bench {

const std::string* Result::Find(const std::string& key) const {
  for (const auto& [k, v] : fields)
    if (k == key) return &v;
  return nullptr;
}

std::optional<double> Result::Number(const std::string& key) const {
  const std::string* v = Find(key);
  if (!v || v->empty()) return std::nullopt;
  char* end = nullptr;
  const double d = std::strtod(v->c_str(), &end);
  if (end != v->c_str() + v->size()) return std::nullopt;
  return d;
}

const Result* BenchRun::FindResult(const std::string& name) const {
  for (const auto& s : scenarios)
    for (const auto& r : s.results)
      if (r.name == name) return &r;
  return nullptr;
}

std::optional<double> BenchRun::Ratio(const std::string& name) const {
  for (const auto& s : scenarios)
    for (const auto& [n, x] : s.ratios)
      if (n == name) return x;
  return std::nullopt;
}

namespace {

std::vector<std::string> Words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

std::pair<std::string, std::string> SplitField(const std::string& word) {
  const size_t eq = word.find('=');
  if (eq == std::string::npos) return {word, ""};
  return {word.substr(0, eq), word.substr(eq + 1)};
}

}  // namespace

BenchRun ParseRun(std::istream& in) {
  BenchRun run;
  auto current = [&run]() -> Scenario& {
    if (run.scenarios.empty()) run.scenarios.push_back(Scenario{"other", "", {}, {}, {}});
    return run.scenarios.back();
  };
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("#", 0) == 0) {
      const size_t text = line.find_first_not_of("# ");
      if (text != std::string::npos) run.notes.push_back(line.substr(text));
      continue;
    }
    const auto words = Words(line);
    if (words.size() < 2) continue;
    if (words[0] == "scenario") {
      const size_t command = line.find(words[1]) + words[1].size();
      const size_t start = line.find_first_not_of(' ', command);
      run.scenarios.push_back(
          Scenario{words[1], start == std::string::npos ? "" : line.substr(start), {}, {}, {}});
    } else if (words[0] == "result") {
      Result r{words[1], {}};
      for (size_t i = 2; i < words.size(); ++i) r.fields.push_back(SplitField(words[i]));
      current().results.push_back(std::move(r));
    } else if (words[0] == "latency") {
      Series s{words[1], {}};
      for (size_t i = 2; i < words.size(); ++i) {
        auto [p, ms] = SplitField(words[i]);
        s.points.emplace_back(std::atof(p.c_str()), std::atof(ms.c_str()));
      }
      current().latency.push_back(std::move(s));
    } else if (words[0] == "ratio" && words.size() >= 3) {
      current().ratios.emplace_back(words[1], std::atof(words[2].c_str()));
    }
  }
  return run;
}

namespace {

std::string Format(const char* format, double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, v);
  return buffer;
}

// 38972 → "38,972"; fractions are kept for small numbers (0.13, 7.8).
std::string Pretty(double v) {
  if (std::fabs(v) < 100 && v != std::floor(v))
    return Format(std::fabs(v) < 10 ? "%.2f" : "%.1f", v);
  std::string digits = Format("%.0f", std::fabs(v));
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3)
    digits.insert(static_cast<size_t>(i), ",");
  return (v < 0 ? "-" : "") + digits;
}

std::string Ms(std::optional<double> v) {
  if (!v) return "";
  if (*v >= 1000) return Pretty(*v) + " ms";
  return Format(*v < 10 ? "%.2f ms" : *v < 100 ? "%.1f ms" : "%.0f ms", *v);
}

std::string XmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

}  // namespace

std::string LatencyPlotSvg(const std::string& title, const std::vector<Series>& series) {
  constexpr double kWidth = 900, kHeight = 380, kLeft = 70, kRight = 290, kTop = 40, kBottom = 50;
  constexpr double kPlotW = kWidth - kLeft - kRight, kPlotH = kHeight - kTop - kBottom;
  constexpr double kMaxX = 4.6;  // 99.99 % is at 4; the maximum is drawn a little right of it
  static const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                  "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};
  // Milliseconds on a log scale, whole decades around the data.
  double lo = 1e9, hi = 0;
  for (const auto& s : series)
    for (auto [p, ms] : s.points) {
      if (ms > 0) lo = std::min(lo, ms);
      hi = std::max(hi, ms);
    }
  if (hi <= 0) lo = hi = 1;
  const int decade_lo = static_cast<int>(std::floor(std::log10(std::max(lo, 0.001))));
  const int decade_hi = std::max(decade_lo + 1, static_cast<int>(std::ceil(std::log10(hi))));
  auto x_of = [&](double percentile) {
    const double x =
        percentile >= 100.0 ? kMaxX : std::min(4.0, -std::log10(1.0 - percentile / 100.0));
    return kLeft + kPlotW * x / kMaxX;
  };
  auto y_of = [&](double ms) {
    const double v = std::log10(std::max(ms, std::pow(10.0, decade_lo)));
    return kTop + kPlotH * (1.0 - (v - decade_lo) / (decade_hi - decade_lo));
  };
  std::ostringstream svg;
  svg << R"(<svg xmlns="http://www.w3.org/2000/svg" width=")" << kWidth << R"(" height=")"
      << kHeight << R"(" viewBox="0 0 )" << kWidth << ' ' << kHeight
      << R"(" font-family="sans-serif" font-size="12">)" << '\n'
      << R"(<rect width="100%" height="100%" fill="white"/>)" << '\n'
      << R"(<text x=")" << kLeft << R"(" y="22" font-size="15" font-weight="bold">)"
      << XmlEscape(title) << "</text>\n";
  // Grid and axes.
  const std::pair<double, const char*> xticks[] = {{0, "0%"},   {50, "50%"},     {90, "90%"},
                                                   {99, "99%"}, {99.9, "99.9%"}, {99.99, "99.99%"},
                                                   {100, "max"}};
  for (auto [p, label] : xticks) {
    const double x = x_of(p);
    svg << R"(<line x1=")" << x << R"(" y1=")" << kTop << R"(" x2=")" << x << R"(" y2=")"
        << kTop + kPlotH << R"(" stroke="#ddd"/>)"
        << R"(<text x=")" << x << R"(" y=")" << kTop + kPlotH + 16 << R"(" text-anchor="middle">)"
        << label << "</text>\n";
  }
  for (int d = decade_lo; d <= decade_hi; ++d) {
    const double y = y_of(std::pow(10.0, d));
    const double ms = std::pow(10.0, d);
    svg << R"(<line x1=")" << kLeft << R"(" y1=")" << y << R"(" x2=")" << kLeft + kPlotW
        << R"(" y2=")" << y << R"(" stroke="#ddd"/>)"
        << R"(<text x=")" << kLeft - 6 << R"(" y=")" << y + 4 << R"(" text-anchor="end">)"
        << (ms < 1 ? Format("%g", ms) : Pretty(ms)) << " ms</text>\n";
  }
  svg << R"(<rect x=")" << kLeft << R"(" y=")" << kTop << R"(" width=")" << kPlotW
      << R"(" height=")" << kPlotH << R"(" fill="none" stroke="#444"/>)" << '\n'
      << R"(<text x=")" << kLeft + kPlotW / 2 << R"(" y=")" << kHeight - 12
      << R"x(" text-anchor="middle">percentile of requests (log scale of 1/(1 − p))</text>)x"
      << '\n'
      << R"x(<text transform="translate(16 )x" << kTop + kPlotH / 2
      << R"x() rotate(-90)" text-anchor="middle">latency</text>)x" << '\n';
  // One line per series, and its legend entry.
  for (size_t i = 0; i < series.size(); ++i) {
    const char* color = kColors[i % (sizeof kColors / sizeof *kColors)];
    svg << R"(<polyline fill="none" stroke-width="2" stroke=")" << color << R"(" points=")";
    for (auto [p, ms] : series[i].points)
      svg << Format("%.1f", x_of(p)) << ',' << Format("%.1f", y_of(ms)) << ' ';
    svg << "\"/>\n";
    const double ly = kTop + 8 + 18 * static_cast<double>(i);
    svg << R"(<line x1=")" << kLeft + kPlotW + 12 << R"(" y1=")" << ly << R"(" x2=")"
        << kLeft + kPlotW + 32 << R"(" y2=")" << ly << R"(" stroke-width="3" stroke=")" << color
        << R"("/>)"
        << R"(<text x=")" << kLeft + kPlotW + 38 << R"(" y=")" << ly + 4 << R"(">)"
        << XmlEscape(series[i].name) << "</text>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

namespace {

Target Check(std::string what, std::optional<double> value, double bound, bool at_least,
             const std::string& unit) {
  Target t{std::move(what), "", Target::State::kNotRun, ""};
  if (!value) return t;
  t.measured = unit == " ms" ? Ms(value) : Format("%.2f", *value) + unit;
  const bool met = at_least ? *value >= bound : *value <= bound;
  t.state = met ? Target::State::kMet : Target::State::kMissed;
  if (!met) {
    t.detail = at_least ? Format("%.1f", bound / std::max(*value, 1e-9)) + "× short"
                        : Format("%.1f", *value / std::max(bound, 1e-9)) + "× over";
  }
  return t;
}

bool IsAudit(const std::string& name) { return name.size() > 6 && name.ends_with("_audit"); }

}  // namespace

std::vector<Target> CheckTargets(const BenchRun& run) {
  std::vector<Target> targets;
  auto number = [&](const std::string& result, const std::string& key) -> std::optional<double> {
    const Result* r = run.FindResult(result);
    return r ? r->Number(key) : std::nullopt;
  };
  // The worst p99 of a premiere run's routes (`prefix` + route), and which route.
  auto worst_route = [&](const std::string& prefix) {
    std::pair<std::optional<double>, std::string> worst;
    for (const auto& s : run.scenarios) {
      if (s.name != "premiere") continue;
      for (const auto& r : s.results) {
        if (!r.name.starts_with(prefix) || r.name.ends_with("_nginx") || IsAudit(r.name)) continue;
        const std::string route = r.name.substr(prefix.size());
        if (route.find('_') != std::string::npos) continue;  // another run's routes
        const auto p99 = r.Number("p99_ms");
        if (p99 && (!worst.first || *p99 > *worst.first)) worst = {p99, route};
      }
    }
    return worst;
  };
  targets.push_back(Check(
      "`ratio premiere_vs_nginx` ≥ 0.5 (500 connections; nginx serving the same gzip and br "
      "files; aim 0.8)",
      run.Ratio("premiere_vs_nginx"), 0.5, true, ""));
  {
    constexpr double kSellOutSeconds = 2.5;
    Target t{"premiere sold out (3,000 seats, 500 connections) in ≤ 2.5 s (aim 1.5 s)", "",
             Target::State::kNotRun, ""};
    if (const Result* r = run.FindResult("premiere")) {
      const bool sold = r->Find("sold_out") && *r->Find("sold_out") == "yes";
      const double s = r->Number("sell_out_s").value_or(0);
      t.measured = sold ? "in " + Pretty(s) + " s" : "no";
      t.state = sold && s <= kSellOutSeconds ? Target::State::kMet : Target::State::kMissed;
      if (sold && s > kSellOutSeconds) t.detail = Format("%.1f", s / kSellOutSeconds) + "× over";
    }
    targets.push_back(t);
  }
  targets.push_back(Check("`premiere_cpu postgres_ms_per_purchase` ≤ 1.0 (aim 0.6)",
                          number("premiere_cpu", "postgres_ms_per_purchase"), 1.0, false, " ms"));
  {
    const auto [worst, route] = worst_route("premiere_open_");
    Target t = Check(
        "premiere in open loop at half the closed-loop rate: p99 ≤ 30 ms on every "
        "route (aim 15 ms)",
        worst, 30, false, " ms");
    if (worst) t.measured += " (worst: " + route + ")";
    targets.push_back(t);
  }
  targets.push_back(Check("`premiere_statements_per_purchase` ≤ 8 (aim 5)",
                          run.Ratio("premiere_statements_per_purchase"), 8, false, ""));
  targets.push_back(Check("`ratio holds_vs_pgbench` ≥ 1.0 (64 connections; aim 1.5)",
                          run.Ratio("holds_vs_pgbench"), 1, true, "×"));
  targets.push_back(Check("hold p99, gated storm in open loop at half rate, ≤ 20 ms (aim 10 ms)",
                          number("holdstorm_gate_open", "p99_ms"), 20, false, " ms"));
  targets.push_back(Check("`ratio seatmap_vs_nginx_wrk` ≥ 0.8 (wrk as the client; aim 1.0)",
                          run.Ratio("seatmap_vs_nginx_wrk"), 0.8, true, ""));
  targets.push_back(Check("`ratio seatmap_vs_nginx` ≥ 0.8 (our own client)",
                          run.Ratio("seatmap_vs_nginx"), 0.8, true, ""));
  targets.push_back(
      Check("gateway answering after 5 s: hold p99 ≤ 1.2× a normal gateway's "
            "(`ratio slowgateway_hold_p99_vs_normal`)",
            run.Ratio("slowgateway_hold_p99_vs_normal"), 1.2, false, "×"));
  {
    std::optional<double> violations;
    std::string audits;
    for (const auto& s : run.scenarios)
      for (const auto& r : s.results)
        if (IsAudit(r.name)) {
          violations = violations.value_or(0) + r.Number("violations").value_or(1);
          audits += (audits.empty() ? "" : ", ") + r.name;
        }
    Target t = Check("0 invariant violations after every scenario", violations, 0, false, "");
    if (violations) t.measured = Format("%.0f", *violations) + " (" + audits + ")";
    if (t.state == Target::State::kMissed) t.detail = "a failed run";
    targets.push_back(t);
  }
  {
    const auto [worst, route] = worst_route("premiere_");
    Target t =
        Check("premiere in closed loop: p99 ≤ 50 ms on every route", worst, 50, false, " ms");
    if (worst) t.measured += " (worst: " + route + ")";
    targets.push_back(t);
  }
  // Reported, not held to a target: customers following the stream against polling ones
  // (aim 2×), the allocations per seat-map read, the embedded profile.
  if (auto r = run.Ratio("premiere_live_vs_polling")) {
    targets.push_back(Target{"`ratio premiere_live_vs_polling` purchases/s (reported; aim 2×)",
                             Format("%.2f", *r) + "×", Target::State::kReported, ""});
  }
  if (auto n = number("allocations_seatmap", "per_request")) {
    targets.push_back(Target{"heap allocations per seat-map read (reported)", Format("%.1f", *n),
                             Target::State::kReported, ""});
  }
  // The embedded profile is reported, not held to a target.
  if (auto r = run.Ratio("premiere_sqlite_vs_nginx")) {
    targets.push_back(Target{"`ratio premiere_sqlite_vs_nginx` (the embedded profile, reported)",
                             Format("%.2f", *r), Target::State::kReported, ""});
  }
  return targets;
}

namespace {

// What each scenario does, for the reader of the report.
const std::map<std::string, std::string>& Descriptions() {
  static const std::map<std::string, std::string> kText = {
      {"seatmap",
       "`serve` on SQLite with one 300-seat showtime (15 rows × 20), 60 of its seats held. "
       "nginx serves the same bytes as a static file, and its gzip and br forms to the clients "
       "that accept them (one worker per core, keep-alive, no "
       "access log). The same client, `boxoffice-bench get`, reads each for the same time "
       "over the same keep-alive connections: first closed loop (each connection sends its "
       "next request when the last answer is in), then open loop at a fixed arrival rate, "
       "where latency counts from when a request was due. `seatmap_store` is how many "
       "queries the cache made to the store meanwhile."},
      {"allocations",
       "Heap allocations per request in `serve` (SQLite), counted by a preloaded counter "
       "(`build/libboxoffice-alloc-count.so`, every malloc, calloc, realloc and aligned "
       "allocation): each route read by 8 connections for 1 s and for the scenario's seconds "
       "on fresh instances, the difference in allocations over the difference in requests, so "
       "start-up and set-up drop out. `allocations_seatmap` is the cached map (br, as the "
       "premiere's customers read it)."},
      {"holdstorm",
       "The production profile on PostgreSQL, twice on a fresh schema: straight to the store "
       "(`holdstorm_store`), then through the Redis seat gate (`holdstorm_gate`). Each "
       "connection repeats: read the seat map, pick 1–8 adjacent AVAILABLE seats in a random "
       "row, POST a hold as a new customer; when a showtime is sold out everyone moves on to "
       "the next, until all are. The `_seatmap` lines are those map reads. A 503 (the server "
       "shedding load, `Retry-After: 1`) is asked again a second later. The reference is "
       "pgbench on the same PostgreSQL at the same number of clients (at most 256: the "
       "database takes 300 connections), running the seeds' "
       "conditional UPDATE on one random seat of a 300-seat showtime per transaction (holds "
       "of 20 ms, so the hall keeps freeing up and the statement keeps writing). "
       "`boxoffice audit` checks the database after each run. `holdstorm_gate_open` is the "
       "gated storm again in open loop: attempts due at half the closed-loop rate, and "
       "`_attempt` is each attempt's latency from when it was due to the hold's answer."},
      {"premiere",
       "The production profile (PostgreSQL, the Redis gate, the fake payment gateway), "
       "showtimes of 300 seats on sale at once. Each connection plays one customer after "
       "another: read a showtime's seat map 30 times, hold 1–8 adjacent free seats, check "
       "out with an Idempotency-Key, pay at the gateway, poll `GET /bookings/{id}` until the "
       "gateway's callback has confirmed it. A lost hold means reading the map again. The "
       "run ends when every showtime is sold out. `premiere_open` sells fresh showtimes again "
       "in open loop, customers due at half the rate at which the closed loop completed "
       "purchases (`purchases_per_s`; its `customers_per_s` also counts the many turns that "
       "only found a showtime sold out or lost a hold, while nearly every open-loop customer "
       "buys). "
       "`premiere_statements_per_purchase` is every statement PostgreSQL ran during the "
       "closed run (pg_stat_statements: lost holds, booking polls and the jobs included) per "
       "booking confirmed. `boxoffice audit` checks the database. The reference is nginx "
       "serving the seat map's bytes to the same client at the same concurrency; every client "
       "asks `Accept-Encoding: gzip, br` as browsers do, and nginx serves the very gzip and br "
       "files boxoffice sends (`gzip_static`, `brotli_static`); `bytes_per_response` says what "
       "each route's answers weighed. `premiere_live` sells fresh showtimes in closed loop "
       "again with customers who read the map once and then follow its seat-change stream "
       "(as the seat picker does), trying a lost hold again from that view; "
       "`ratio premiere_live_vs_polling` compares purchases per second. "
       "`premiere_sqlite` is the closed run again in the embedded profile (SQLite, no "
       "Redis)."},
      {"holdstorm_best",
       "Best available against picking by hand, through the Redis gate on PostgreSQL, each "
       "run on fresh showtimes of 300 seats (15 rows × 20, aisles after seats 5 and 15). "
       "Every customer wants two seats side by side: `holdstorm_pairs` reads the map, picks a "
       "free pair by hand and, when refused, takes the first block the 409 offers "
       "(`alternatives_taken`); `holdstorm_best` asks the service for the best 2. "
       "`seats_per_s` is seats sold per second, `conflicts_per_seat` the 409s per seat sold "
       "(attempts wasted on seats someone else got first). A showtime is done when the map "
       "shows no free pair or a 409 offers none (by hand), or best available answers 409 "
       "(single seats may stay). The `_nogaps` runs are the same on showtimes that forbid "
       "single-seat gaps. `boxoffice audit` checks the database after each run."},
      {"slowgateway",
       "The production profile with 100 premiere customers buying in the background while "
       "a hold storm (64 connections) sells 10 other showtimes: once with a fake gateway that "
       "answers at once, once with one that waits 5 s before opening each session, so the "
       "buyers' checkouts pile up on it. The ratio compares the storm's hold p99."},
  };
  return kText;
}

const std::set<std::string>& LatencyKeys() {
  static const std::set<std::string> kKeys = {"requests", "rps",     "p50_ms", "p90_ms",
                                              "p99_ms",   "p999_ms", "max_ms", "errors"};
  return kKeys;
}

void LatencyTable(std::ostringstream& md, const std::vector<Result>& results) {
  bool header = false;
  for (const auto& r : results) {
    if (!r.Number("p99_ms")) continue;
    if (!header) {
      md << "| run | requests | req/s | p50 | p90 | p99 | p99.9 | max | errors | answers |\n"
         << "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
      header = true;
    }
    std::string answers;
    for (const auto& [k, v] : r.fields)
      if (k.starts_with("status_"))
        answers +=
            (answers.empty() ? "" : ", ") + k.substr(7) + ": " + Pretty(std::atof(v.c_str()));
    md << "| `" << r.name << "` | " << Pretty(r.Number("requests").value_or(0)) << " | "
       << Pretty(r.Number("rps").value_or(0)) << " | " << Ms(r.Number("p50_ms")) << " | "
       << Ms(r.Number("p90_ms")) << " | " << Ms(r.Number("p99_ms")) << " | "
       << Ms(r.Number("p999_ms")) << " | " << Ms(r.Number("max_ms")) << " | "
       << Pretty(r.Number("errors").value_or(0)) << " | " << answers << " |\n";
  }
  if (header) md << "\n";
}

void OtherFields(std::ostringstream& md, const std::vector<Result>& results) {
  for (const auto& r : results) {
    std::string text;
    const bool in_table = r.Number("p99_ms").has_value();
    for (const auto& [k, v] : r.fields) {
      if ((in_table && LatencyKeys().count(k)) || k.starts_with("status_")) continue;
      const auto n = r.Number(k);
      // Whole numbers get thousands separators; anything else is shown as printed.
      const bool whole = n && v.find_first_of(".eE") == std::string::npos;
      text += (text.empty() ? "" : " · ") + k + " " + (whole ? Pretty(*n) : v);
    }
    if (!text.empty()) md << "- `" << r.name << "`: " << text << "\n";
  }
}

}  // namespace

std::string ReportMarkdown(const BenchRun& run, const std::string& source,
                           const std::string& plot_dir) {
  std::ostringstream md;
  md << "# Benchmarks\n\n"
     << "Written by `make bench` from a real run (its lines are in `" << source
     << "`); run it again to replace this file. What limits these figures, with profiles: "
     << "[performance.md](performance.md).\n\n"
     << "Everything runs on one machine at once: the service, PostgreSQL 15 and Redis 7 "
        "started by the scripts, the reference engines and the load generator "
        "(`boxoffice-bench`). Absolute figures move from run to run on a shared machine; the "
        "ratios are measured in the same run and are the figures to compare.\n\n";
  for (const auto& note : run.notes) md << "- " << note << "\n";
  md << "\n## Targets\n\nThe targets are set for the quick run (`make bench`: 64 connections in "
        "the hold storm, 500 in the premiere); for a longer run they are shown for "
        "comparison.\n\n| target | measured | state |\n|---|---|---|\n";
  for (const auto& t : CheckTargets(run)) {
    const char* state = t.state == Target::State::kMet      ? "**met**"
                        : t.state == Target::State::kMissed ? "**missed**"
                        : t.state == Target::State::kReported ? "reported"
                                                            : "not run";
    md << "| " << t.what << " | " << t.measured << " | " << state
       << (t.detail.empty() ? "" : ": " + t.detail) << " |\n";
  }
  md << "\n";
  for (const auto& s : run.scenarios) {
    md << "## " << s.name << "\n\n";
    if (!s.command.empty()) md << "```sh\n" << s.command << "\n```\n\n";
    if (auto it = Descriptions().find(s.name); it != Descriptions().end())
      md << it->second << "\n\n";
    for (const auto& [name, x] : s.ratios)
      md << "**`ratio " << name << " " << Format("%.2f", x) << "`**  \n";
    if (!s.ratios.empty()) md << "\n";
    LatencyTable(md, s.results);
    OtherFields(md, s.results);
    md << "\n";
    if (!s.latency.empty())
      md << "![" << s.name << " latency](" << plot_dir << "/" << s.name << ".svg)\n\n";
  }
  return md.str();
}

}  // namespace boxoffice::bench
