#include "support/test_env.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <vector>

namespace boxoffice::testing {

unsigned short FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  unsigned short port = 0;
  if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  if (fd >= 0) close(fd);
  return port;
}

std::string PostgresUrl() {
  const char* url = std::getenv("BOXOFFICE_TEST_PG_URL");
  return url ? url : "";
}

bool PostgresRequired() {
  const char* v = std::getenv("BOXOFFICE_TEST_REQUIRE_PG");
  return v && std::string(v) == "1";
}

namespace {
std::mutex g_mu;
std::vector<std::string>* g_dirs = nullptr;
void Cleanup() {
  for (const auto& d : *g_dirs) {
    std::error_code ec;
    std::filesystem::remove_all(d, ec);
  }
}
}  // namespace

std::string TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base ? base : "/tmp") + "/boxoffice-test-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  const char* made = mkdtemp(buf.data());
  if (!made) std::abort();
  std::lock_guard lock(g_mu);
  if (!g_dirs) {
    g_dirs = new std::vector<std::string>();
    std::atexit(Cleanup);
  }
  g_dirs->push_back(made);
  return made;
}

}  // namespace boxoffice::testing

#include <libpq-fe.h>
#include <unistd.h>

#include <atomic>

namespace boxoffice::testing {

std::string FreshPostgresSchemaUrl() {
  static std::atomic<int> counter{0};
  const std::string base = PostgresUrl();
  const std::string schema = "t" + std::to_string(getpid()) + "_" + std::to_string(counter++);
  PGconn* conn = PQconnectdb(base.c_str());
  if (PQstatus(conn) != CONNECTION_OK) std::abort();
  PGresult* r = PQexec(
      conn, ("DROP SCHEMA IF EXISTS " + schema + " CASCADE; CREATE SCHEMA " + schema).c_str());
  if (PQresultStatus(r) != PGRES_COMMAND_OK) std::abort();
  PQclear(r);
  PQfinish(conn);
  return base + (base.find('?') == std::string::npos ? "?" : "&") + "options=-csearch_path%3D" +
         schema;
}

}  // namespace boxoffice::testing
