// The flag helpers and stop signals of the subcommands (subcommands.h).
#include <cctype>

#include "app/subcommands.h"
#include "core/log.h"
#include "core/time_format.h"

namespace boxoffice::app {

std::string EnvName(const std::string& flag) {
  std::string env = "BOXOFFICE_";
  for (char c : flag)
    env += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return env;
}

CLI::Option* DurationFlag(CLI::App* cmd, const std::string& name, Millis* target,
                          const std::string& text, const std::string& help) {
  auto* storage = ForTheProcess<std::string>(text);
  return cmd
      ->add_option_function<std::string>(
          "--" + name,
          [target, name](const std::string& value) {
            auto d = ParseDuration(value);
            if (!d)
              throw CLI::ValidationError("--" + name,
                                         "expected a duration like 500ms, 15s, 10m, 1h");
            *target = *d;
          },
          help + " (default " + *storage + ")")
      ->envname(EnvName(name));
}

void AddDbFlag(CLI::App* cmd, Common* c) {
  // Several --db (in BOXOFFICE_DB: separated by spaces) are PostgreSQL shards.
  Flag(cmd, "db", &c->store.urls,
       "sqlite:PATH (default) or postgresql://USER@HOST:PORT/DB; repeated: PostgreSQL shards")
      ->delimiter(' ');
  Flag(cmd, "db-pool", &c->store.pool_size, "PostgreSQL connections per process")
      ->check(CLI::Range(1, 256));
}

sigset_t BlockStopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

void WaitForStopSignal(const sigset_t& signals) {
  int sig = 0;
  sigwait(&signals, &sig);
  LogInfo("stopping", {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
}

int Fail(const std::string& what, const Status& s) {
  LogError(what, {{"error", s.message()}});
  return 1;
}

}  // namespace boxoffice::app
