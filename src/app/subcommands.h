// The subcommands' parts, shared by their files (commands.cc adds the flags; serve.cc,
// seed.cc run them): the flag helpers (every flag is also BOXOFFICE_<FLAG>), the stop
// signals, and each subcommand's entry point. Not for other includes.
#pragma once

#include <signal.h>

#include <CLI/CLI.hpp>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "app/service.h"
#include "core/clock.h"
#include "core/status.h"

namespace boxoffice::app {

std::string EnvName(const std::string& flag);

// Every flag is also BOXOFFICE_<FLAG>.
template <class T>
CLI::Option* Flag(CLI::App* cmd, const std::string& name, T* target, const std::string& help) {
  return cmd->add_option("--" + name, *target, help)->envname(EnvName(name))->capture_default_str();
}

// Flag storage lives as long as the process, like the App that writes into it: kept here,
// reachable to the end (so leak checkers see it as what it is, not as lost memory).
template <class T, class... Args>
T* ForTheProcess(Args&&... args) {
  static std::mutex mu;
  static std::vector<std::shared_ptr<void>> kept;
  auto owned = std::make_shared<T>(std::forward<Args>(args)...);
  std::lock_guard lock(mu);
  kept.push_back(owned);
  return owned.get();
}

// A duration flag ("500ms", "15s", "10m", "1h").
CLI::Option* DurationFlag(CLI::App* cmd, const std::string& name, Millis* target,
                          const std::string& text, const std::string& help);
// --db (repeated: shards) and --db-pool.
void AddDbFlag(CLI::App* cmd, Common* c);

// Blocks SIGTERM and SIGINT in this thread and every thread started after it, so that
// WaitForStopSignal is the one place that receives them.
sigset_t BlockStopSignals();
void WaitForStopSignal(const sigset_t& signals);
// Logs what failed and returns the exit code 1.
int Fail(const std::string& what, const Status& s);

// Events per outbox delivery (serve's relays, relay's default --batch): one write and one
// fsync.
inline constexpr int kRelayBatchLimit = 500;

// `boxoffice serve` (serve.cc).
int Serve(const ServeFlags& f);
// `boxoffice relay`: the outbox relay alone, until SIGTERM (serve.cc).
int Relay(const Common& common, const std::string& kafka, const std::string& events_file,
          Millis lease, int batch);

// Demo and chain-scale data: cinemas × halls × days.
struct SeedFlags {
  Common common;
  bool demo = false;
  int cinemas = 1;
  int halls_per_cinema = 3;
  int days = 2;
  std::string from;  // the first day (YYYY-MM-DD); empty: tomorrow
};
// `boxoffice seed` (seed.cc).
int Seed(const SeedFlags& f);

}  // namespace boxoffice::app
