// A PostgreSQL 15 server of the test's own (initdb into a temporary directory, a free
// loopback port), which the test may stop and start again, as a shard that goes down.
// Run as the postgres user when the tests run as root (PostgreSQL refuses root).
#pragma once

#include <sys/types.h>

#include <string>

namespace boxoffice::testing {

class PostgresServer {
 public:
  PostgresServer();  // initdb and start; ok() tells whether it answers
  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  bool ok() const { return pid_ > 0; }
  // postgresql://boxoffice@127.0.0.1:PORT/boxoffice
  std::string url() const;
  bool Start();  // (again) on the same port and data
  void Stop();   // immediate shutdown (SIGQUIT): connections drop at once, like a crash

 private:
  std::string dir_;
  unsigned short port_ = 0;
  pid_t pid_ = 0;
};

}  // namespace boxoffice::testing
