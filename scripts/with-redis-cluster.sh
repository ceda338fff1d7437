#!/usr/bin/env bash
# Runs a command with a throwaway Redis Cluster on loopback: 3 masters with a replica each
# (6 redis-servers, nothing persisted), joined by `redis-cli --cluster create`, with a 1 s
# cluster-node-timeout so a killed master's replica takes over within seconds. Torn down
# afterwards whatever the command's outcome. The command sees
#   BOXOFFICE_REDIS=redis://127.0.0.1:PORT         (a master; any node would do)
#   BOXOFFICE_REDIS_CLUSTER_PORTS="P1 P2 …"        (every node, for tests that kill one)
set -euo pipefail
command -v redis-server >/dev/null && command -v redis-cli >/dev/null \
  || { echo "with-redis-cluster: redis-server not found (scripts/deps.sh)" >&2; exit 1; }
source "$(dirname "$0")/lib.sh"

dir=$(mktemp -d /tmp/boxoffice-redis-cluster.XXXXXX)
ports=()
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

used=" "  # every port taken so far, client and bus: none twice
for i in 0 1 2 3 4 5; do
  port=$(free_port)
  while [[ "$used" == *" $port "* ]]; do port=$(free_port); done
  used="$used$port "
  bus=$(free_port)
  while [[ "$used" == *" $bus "* ]]; do bus=$(free_port); done
  used="$used$bus "
  ports+=("$port")
  redis-server --port "$port" --cluster-port "$bus" --bind 127.0.0.1 --cluster-enabled yes \
    --cluster-config-file "$dir/nodes-$i.conf" --cluster-node-timeout 1000 \
    --repl-diskless-sync-delay 0 --cluster-replica-validity-factor 0 \
    --dir "$dir" --dbfilename "dump-$i.rdb" --save "" --appendonly no --daemonize no \
    >"$dir/redis-$i.log" 2>&1 &
  pids+=($!)
done
for port in "${ports[@]}"; do
  for _ in $(seq 1 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
done
nodes=()
for port in "${ports[@]}"; do nodes+=("127.0.0.1:$port"); done
redis-cli --cluster create "${nodes[@]}" --cluster-replicas 1 --cluster-yes >"$dir/create.log" 2>&1 \
  || { cat "$dir/create.log" >&2; exit 1; }
# Ready when every node says ok and every replica has its master's data.
for _ in $(seq 1 200); do
  ready=1
  for port in "${ports[@]}"; do
    redis-cli -p "$port" cluster info 2>/dev/null | grep -q 'cluster_state:ok' || ready=0
    info=$(redis-cli -p "$port" info replication 2>/dev/null) || { ready=0; continue; }
    if grep -q 'role:slave' <<<"$info" && ! grep -q 'master_link_status:up' <<<"$info"; then ready=0; fi
  done
  [ "$ready" = 1 ] && break
  sleep 0.1
done
[ "$ready" = 1 ] || { echo "with-redis-cluster: the cluster did not become ready" >&2; exit 1; }

export BOXOFFICE_REDIS="redis://127.0.0.1:${ports[0]}"
export BOXOFFICE_REDIS_CLUSTER_PORTS="${ports[*]}"
echo "with-redis-cluster: Redis Cluster on 127.0.0.1 ports ${ports[*]}" >&2
"$@"
