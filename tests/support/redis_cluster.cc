#include "support/redis_cluster.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <set>
#include <sstream>
#include <thread>

#include "support/process.h"
#include "support/test_env.h"

namespace boxoffice::testing {
namespace {

std::string Run(const std::string& line) {
  std::string out;
  if (FILE* p = popen((line + " 2>&1").c_str(), "r")) {
    std::array<char, 512> buf;
    while (fgets(buf.data(), buf.size(), p)) out += buf.data();
    pclose(p);
  }
  return out;
}

}  // namespace

bool RedisClusterInstalled() {
  return access("/usr/bin/redis-server", X_OK) == 0 && access("/usr/bin/redis-cli", X_OK) == 0;
}

RedisCluster::RedisCluster(int masters, int replicas_per_master) : dir_(TempDir()) {
  const int nodes = masters * (1 + replicas_per_master);
  std::set<unsigned short> taken;
  for (int i = 0; i < 2 * nodes; ++i) {
    unsigned short p = FreePort();
    while (taken.count(p)) p = FreePort();
    taken.insert(p);
    (i < nodes ? ports_ : bus_ports_).push_back(p);
  }
  pids_.assign(nodes, 0);
  for (int i = 0; i < nodes; ++i)
    if (!StartNode(i)) return;
  std::string create = "redis-cli --cluster create";
  for (unsigned short p : ports_) create += " 127.0.0.1:" + std::to_string(p);
  create += " --cluster-replicas " + std::to_string(replicas_per_master) + " --cluster-yes";
  const std::string out = Run(create);
  if (out.find("[OK] All 16384 slots covered") == std::string::npos) {
    std::fprintf(stderr, "redis cluster: create failed:\n%s\n", out.c_str());
    return;
  }
  ok_ = WaitHealthy(Millis(20'000));
  // Every replica has its master's data before a test may kill the master.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (int i = 0; ok_ && i < nodes; ++i) {
    while (Cli(i, "INFO replication").find("role:slave") != std::string::npos &&
           Cli(i, "INFO replication").find("master_link_status:up") == std::string::npos) {
      if (std::chrono::steady_clock::now() > until) {
        ok_ = false;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
}

RedisCluster::~RedisCluster() {
  for (int i = 0; i < size(); ++i) Kill(i);
}

std::string RedisCluster::url() const { return "redis://127.0.0.1:" + std::to_string(ports_[0]); }

bool RedisCluster::StartNode(int node) {
  const std::string n = std::to_string(node);
  std::vector<std::string> args = {
      "/usr/bin/redis-server", "--port", std::to_string(ports_[node]), "--cluster-port",
      std::to_string(bus_ports_[node]), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
      "--cluster-config-file", dir_ + "/nodes-" + n + ".conf", "--cluster-node-timeout", "1000",
      // A replica syncs at once (no 5 s wait for others) and may
      // take over however long its master has been gone.
      "--repl-diskless-sync-delay", "0", "--cluster-replica-validity-factor", "0", "--dir", dir_,
      "--dbfilename", "dump-" + n + ".rdb", "--save", "", "--appendonly", "no", "--daemonize",
      "no"};
  pids_[node] = Spawn(args, dir_ + "/redis-" + n + ".log");
  for (int i = 0; i < 200 && pids_[node] > 0; ++i) {
    if (Cli(node, "PING").find("PONG") != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

std::string RedisCluster::Cli(int node, const std::string& command) const {
  return Run("redis-cli -h 127.0.0.1 -p " + std::to_string(ports_.at(node)) + " " + command);
}

std::string RedisCluster::NodeId(int node) const {
  std::string id = Cli(node, "CLUSTER MYID");
  while (!id.empty() && (id.back() == '\n' || id.back() == '\r')) id.pop_back();
  return id;
}

void RedisCluster::Kill(int node) {
  if (pids_.at(node) <= 0) return;
  kill(pids_[node], SIGKILL);
  waitpid(pids_[node], nullptr, 0);
  pids_[node] = 0;
}

int RedisCluster::MasterOfSlot(int slot) const {
  for (int asker = 0; asker < size(); ++asker) {
    if (pids_[asker] <= 0) continue;
    std::istringstream lines(Cli(asker, "CLUSTER NODES"));
    for (std::string line; std::getline(lines, line);) {
      std::istringstream f(line);
      std::string id, addr, flags, master, ping, pong, epoch, link;
      f >> id >> addr >> flags >> master >> ping >> pong >> epoch >> link;
      if (flags.find("master") == std::string::npos || flags.find("fail") != std::string::npos)
        continue;
      for (std::string range; f >> range;) {
        if (range.front() == '[') continue;  // a slot being migrated
        const size_t dash = range.find('-');
        const int lo = std::stoi(range.substr(0, dash));
        const int hi = dash == std::string::npos ? lo : std::stoi(range.substr(dash + 1));
        if (slot < lo || slot > hi) continue;
        const int port = std::stoi(addr.substr(addr.find(':') + 1, addr.find('@')));
        for (int i = 0; i < size(); ++i)
          if (ports_[i] == port) return pids_[i] > 0 ? i : -1;
      }
    }
    return -1;
  }
  return -1;
}

bool RedisCluster::WaitHealthy(Millis timeout) const {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < until) {
    bool healthy = true;
    for (int i = 0; i < size() && healthy; ++i) {
      if (pids_[i] <= 0) continue;
      healthy = Cli(i, "CLUSTER INFO").find("cluster_state:ok") != std::string::npos;
    }
    // Every slot range's master is alive (checked on a sample: one slot per 512).
    for (int slot = 0; slot < 16384 && healthy; slot += 512) healthy = MasterOfSlot(slot) >= 0;
    if (healthy) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

}  // namespace boxoffice::testing
