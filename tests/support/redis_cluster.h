// A real Redis Cluster of the test's own: masters × (1 + replicas) redis-servers with
// cluster-enabled on free loopback ports, joined by `redis-cli --cluster create`, with a
// short cluster-node-timeout so a killed master's replica takes over within seconds.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "core/clock.h"

namespace boxoffice::testing {

class RedisCluster {
 public:
  explicit RedisCluster(int masters = 3, int replicas_per_master = 1);
  ~RedisCluster();
  RedisCluster(const RedisCluster&) = delete;
  RedisCluster& operator=(const RedisCluster&) = delete;

  bool ok() const { return ok_; }
  int size() const { return static_cast<int>(ports_.size()); }
  unsigned short port(int node) const { return ports_.at(node); }
  // redis://127.0.0.1:PORT of the first node (a master when the cluster is made).
  std::string url() const;
  // redis-cli -p PORT on node `node`, e.g. "CLUSTER MYID"; its output.
  std::string Cli(int node, const std::string& command) const;
  std::string NodeId(int node) const;
  void Kill(int node);  // SIGKILL, as a crash
  // The node serving `slot` as master now, as a live node sees it; -1 if none.
  int MasterOfSlot(int slot) const;
  // Until every live node says cluster_state:ok and agrees on every slot's live master.
  bool WaitHealthy(Millis timeout) const;

 private:
  bool StartNode(int node);

  std::string dir_;
  std::vector<unsigned short> ports_;
  std::vector<unsigned short> bus_ports_;
  std::vector<pid_t> pids_;
  bool ok_ = false;
};

// Whether redis-server and redis-cli are installed (scripts/deps.sh installs them).
bool RedisClusterInstalled();

}  // namespace boxoffice::testing
