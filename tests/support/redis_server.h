// A redis-server of the test's own on a free loopback port, which the test may kill,
// restart, pause (SIGSTOP) and wipe. Nothing is persisted.
#pragma once

#include <sys/types.h>

#include <string>

namespace boxoffice::testing {

class RedisServer {
 public:
  RedisServer();  // starts it; ok() tells whether it answers
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  bool ok() const { return pid_ > 0; }
  unsigned short port() const { return port_; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }

  void Kill();    // SIGKILL, and wait for it
  bool Start();   // (again) on the same port
  void Pause();   // SIGSTOP: it holds its connections but answers nothing
  void Resume();  // SIGCONT
  // Runs a command through redis-cli, e.g. "FLUSHALL"; its output.
  std::string Cli(const std::string& command) const;

 private:
  unsigned short port_ = 0;
  pid_t pid_ = 0;
  std::string log_;
};

// Whether redis-server is installed (scripts/deps.sh installs it).
bool RedisInstalled();

}  // namespace boxoffice::testing
