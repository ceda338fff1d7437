#include "support/pg_server.h"

#include <libpq-fe.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <vector>

#include "support/process.h"
#include "support/test_env.h"

namespace boxoffice::testing {
namespace {

const std::string kBin = "/usr/lib/postgresql/15/bin/";

// The command as the postgres user when we are root; as ourselves otherwise.
std::vector<std::string> AsPostgres(std::vector<std::string> args) {
  if (geteuid() != 0) return args;
  args.insert(args.begin(),
              {"/usr/bin/setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"});
  return args;
}

bool Answers(const std::string& url) {
  PGconn* conn = PQconnectdb((url + "?connect_timeout=1").c_str());
  const bool ok = PQstatus(conn) == CONNECTION_OK;
  PQfinish(conn);
  return ok;
}

}  // namespace

PostgresServer::PostgresServer() : port_(FreePort()) {
  const std::string parent = TempDir();
  dir_ = parent + "/pg";
  std::filesystem::create_directories(dir_);
  if (geteuid() == 0) {
    // The postgres user must reach its directory through the test's (0700) one.
    std::filesystem::permissions(parent, std::filesystem::perms::owner_all |
                                             std::filesystem::perms::group_exec |
                                             std::filesystem::perms::others_exec);
    if (std::system(("chown postgres: " + dir_).c_str()) != 0) return;
  }
  const pid_t initdb = Spawn(AsPostgres({kBin + "initdb", "-D", dir_ + "/data", "-U", "boxoffice",
                                         "-A", "trust", "-E", "UTF8", "--no-locale"}),
                             dir_ + "/initdb.log");
  int status = 0;
  if (initdb <= 0 || waitpid(initdb, &status, 0) != initdb || status != 0) return;
  if (!Start()) return;
  const pid_t createdb = Spawn(AsPostgres({kBin + "createdb", "-h", "127.0.0.1", "-p",
                                           std::to_string(port_), "-U", "boxoffice", "boxoffice"}),
                               dir_ + "/createdb.log");
  if (createdb <= 0 || waitpid(createdb, &status, 0) != createdb || status != 0) Stop();
}

PostgresServer::~PostgresServer() { Stop(); }

std::string PostgresServer::url() const {
  return "postgresql://boxoffice@127.0.0.1:" + std::to_string(port_) + "/boxoffice";
}

bool PostgresServer::Start() {
  if (pid_ > 0) return true;
  pid_ = Spawn(
      AsPostgres({kBin + "postgres", "-D", dir_ + "/data", "-c", "listen_addresses=127.0.0.1", "-c",
                  "port=" + std::to_string(port_), "-c", "unix_socket_directories=" + dir_, "-c",
                  "fsync=off", "-c", "max_connections=100"}),
      dir_ + "/server.log");
  const std::string postgres_db =
      "postgresql://boxoffice@127.0.0.1:" + std::to_string(port_) + "/postgres";
  for (int i = 0; i < 300 && pid_ > 0; ++i) {
    if (Answers(postgres_db)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  Stop();
  return false;
}

void PostgresServer::Stop() {
  if (pid_ <= 0) return;
  kill(pid_, SIGQUIT);
  waitpid(pid_, nullptr, 0);
  pid_ = 0;
}

}  // namespace boxoffice::testing
