#!/usr/bin/env bash
# Runs a command with a throwaway redis-server on a free loopback port (nothing persisted),
# stopped afterwards whatever the command's outcome. The command sees
# BOXOFFICE_REDIS=redis://127.0.0.1:PORT.
set -euo pipefail
command -v redis-server >/dev/null || { echo "with-redis: redis-server not found (scripts/deps.sh)" >&2; exit 1; }

source "$(dirname "$0")/lib.sh"
port=$(free_port)

log=$(mktemp /tmp/boxoffice-redis.XXXXXX.log)
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --daemonize no >"$log" 2>&1 &
redis_pid=$!
trap 'kill $redis_pid 2>/dev/null || true; wait $redis_pid 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 1 100); do
  redis-cli -p "$port" ping >/dev/null 2>&1 && break
  sleep 0.05
done
redis-cli -p "$port" ping >/dev/null || { cat "$log" >&2; exit 1; }

export BOXOFFICE_REDIS="redis://127.0.0.1:$port"
echo "with-redis: Redis on 127.0.0.1:$port" >&2
"$@"
