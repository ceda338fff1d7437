#include "support/redis_server.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "support/process.h"
#include "support/test_env.h"

extern char** environ;

namespace boxoffice::testing {

bool RedisInstalled() { return access("/usr/bin/redis-server", X_OK) == 0; }

RedisServer::RedisServer() : port_(FreePort()), log_(TempDir() + "/redis.log") { Start(); }

RedisServer::~RedisServer() {
  Resume();
  Kill();
}

bool RedisServer::Start() {
  std::vector<std::string> args = {
      "/usr/bin/redis-server", "--port", std::to_string(port_), "--bind", "127.0.0.1", "--save", "",
      "--appendonly",          "no",     "--daemonize",         "no"};
  pid_ = Spawn(args, log_);
  for (int i = 0; i < 200 && pid_ > 0; ++i) {
    if (Cli("PING").find("PONG") != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  Kill();
  return false;
}

void RedisServer::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = 0;
}

void RedisServer::Pause() {
  if (pid_ > 0) kill(pid_, SIGSTOP);
}

void RedisServer::Resume() {
  if (pid_ > 0) kill(pid_, SIGCONT);
}

std::string RedisServer::Cli(const std::string& command) const {
  const std::string line =
      "redis-cli -h 127.0.0.1 -p " + std::to_string(port_) + " " + command + " 2>&1";
  std::string out;
  if (FILE* p = popen(line.c_str(), "r")) {
    std::array<char, 256> buf;
    while (fgets(buf.data(), buf.size(), p)) out += buf.data();
    pclose(p);
  }
  return out;
}

}  // namespace boxoffice::testing
