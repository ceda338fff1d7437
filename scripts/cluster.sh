#!/usr/bin/env bash
# boxoffice beyond one machine, on this one and on loopback only: 2 PostgreSQL shards (two
# servers), a Redis Cluster of 3 masters and 3 replicas, librdkafka's mock Kafka cluster,
# the fake payment gateway, 3 `serve` instances sharing them all, and haproxy in front,
# health-checking each instance's /readyz. Demo data is seeded across the shards.
#
#   scripts/cluster.sh             start it all, print the URL, wait (Ctrl-C stops it all)
#   scripts/cluster.sh CMD ARG…    start it all, run CMD, stop it all; CMD sees:
#     BOXOFFICE_URL                  haproxy's URL, what clients use
#     BOXOFFICE_DB                   the two shards' URLs, separated by a space
#     BOXOFFICE_REDIS, BOXOFFICE_REDIS_CLUSTER_PORTS, BOXOFFICE_KAFKA, BOXOFFICE_GATEWAY_URL
#     BOXOFFICE_JWT_SECRET, BOXOFFICE_GATEWAY_SECRET
#     CLUSTER_SERVE                  "PID:PORT PID:PORT PID:PORT" of the instances
#     CLUSTER_DIR                    where the logs are (serve-*.log, haproxy.log, …)
# Flags for every instance may be added with CLUSTER_SERVE_FLAGS (e.g. "--hold-ttl 1m").
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${BOXOFFICE_CLUSTER_INNER:-}" ]; then
  scripts/deps.sh cluster
  [ -x build/boxoffice ] || { echo "cluster: build first (make build)" >&2; exit 1; }
  export BOXOFFICE_CLUSTER_INNER=1
  # Two PostgreSQL servers: the outer one's URL is kept as shard A.
  exec scripts/with-postgres.sh bash -c \
    'export CLUSTER_SHARD_A=$BOXOFFICE_TEST_PG_URL; exec scripts/with-postgres.sh scripts/with-redis-cluster.sh "$0" "$@"' \
    "$0" "$@"
fi

source scripts/lib.sh
CLUSTER_DIR=$(mktemp -d /tmp/boxoffice-cluster.XXXXXX)
export CLUSTER_DIR
export BOXOFFICE_DB="$CLUSTER_SHARD_A $BOXOFFICE_TEST_PG_URL"
export BOXOFFICE_JWT_SECRET=${BOXOFFICE_JWT_SECRET:-dev-only-secret-change-me-in-production-0001}
export BOXOFFICE_GATEWAY_SECRET=${BOXOFFICE_GATEWAY_SECRET:-dev-only-gateway-secret-0001}

pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "${CLUSTER_KEEP_LOGS:-}" ] || rm -rf "$CLUSTER_DIR"
}
trap cleanup EXIT

build/boxoffice kafka-mock 2>"$CLUSTER_DIR/kafka-mock.log" &
pids+=($!)
for _ in $(seq 1 100); do
  BOXOFFICE_KAFKA=$(sed -n 's/.*"bootstraps":"\([^"]*\)".*/\1/p' "$CLUSTER_DIR/kafka-mock.log" | head -1)
  [ -n "$BOXOFFICE_KAFKA" ] && break
  sleep 0.05
done
[ -n "$BOXOFFICE_KAFKA" ] || { cat "$CLUSTER_DIR/kafka-mock.log" >&2; exit 1; }
export BOXOFFICE_KAFKA

balancer_port=$(free_port)
export BOXOFFICE_URL="http://127.0.0.1:$balancer_port"
gateway_port=$(free_port)
export BOXOFFICE_GATEWAY_URL="http://127.0.0.1:$gateway_port"
build/boxoffice fake-gateway --listen "127.0.0.1:$gateway_port" --secret "$BOXOFFICE_GATEWAY_SECRET" \
  --public-url "$BOXOFFICE_GATEWAY_URL" 2>"$CLUSTER_DIR/fake-gateway.log" &
pids+=($!)

# Migrates and numbers both shards once, before the instances start together.
build/boxoffice seed --demo 2>"$CLUSTER_DIR/seed.log" || { cat "$CLUSTER_DIR/seed.log" >&2; exit 1; }

CLUSTER_SERVE=""
servers=""
for i in 1 2 3; do
  port=$(free_port)
  # Callbacks and the browser's return come through the balancer, as in production.
  # shellcheck disable=SC2086
  build/boxoffice serve --listen "127.0.0.1:$port" --public-url "$BOXOFFICE_URL" \
    --gateway-url "$BOXOFFICE_GATEWAY_URL" ${CLUSTER_SERVE_FLAGS:-} 2>"$CLUSTER_DIR/serve-$i.log" &
  pids+=($!)
  CLUSTER_SERVE="$CLUSTER_SERVE $!:$port"
  servers="$servers    server serve$i 127.0.0.1:$port check
"
done
export CLUSTER_SERVE="${CLUSTER_SERVE# }"

# Each connection through haproxy takes two descriptors.
ulimit -n 65536 2>/dev/null || true
maxconn=$(( $(ulimit -n) / 2 - 100 ))
cat >"$CLUSTER_DIR/haproxy.cfg" <<CFG
global
    maxconn $maxconn
defaults
    mode http
    log stdout format raw local0
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    # A health check answers within this, or counts as failed.
    timeout check 2s
    # Seat-change streams (server-sent events) stay open.
    timeout tunnel 1h
    # A request is sent again only when it never reached an instance.
    retries 2
    option redispatch
frontend boxoffice
    bind 127.0.0.1:$balancer_port
    default_backend serve
backend serve
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
    default-server inter 1s fall 2 rise 1
$servers
CFG
haproxy -f "$CLUSTER_DIR/haproxy.cfg" -db >"$CLUSTER_DIR/haproxy.log" 2>&1 &
pids+=($!)

# Up when every instance is ready and the balancer answers.
ready=0
for _ in $(seq 1 300); do
  up=0
  for entry in $CLUSTER_SERVE; do
    curl -fsS "http://127.0.0.1:${entry#*:}/readyz" >/dev/null 2>&1 && up=$((up + 1))
  done
  if [ "$up" = 3 ] && curl -fsS "$BOXOFFICE_URL/readyz" >/dev/null 2>&1; then
    ready=1
    break
  fi
  sleep 0.1
done
[ "$ready" = 1 ] || { tail -5 "$CLUSTER_DIR"/serve-*.log "$CLUSTER_DIR/haproxy.log" >&2; exit 1; }

if [ $# -gt 0 ]; then
  "$@"
  exit $?
fi

customer=$(build/boxoffice token --customer 42 --ttl 24h)
admin=$(build/boxoffice token --customer 1 --admin --ttl 24h)
cat <<TXT

boxoffice on 2 PostgreSQL shards, a Redis Cluster and 3 instances behind haproxy
  URL          $BOXOFFICE_URL   (the seat picker: $BOXOFFICE_URL/#token=$customer)
  instances    $CLUSTER_SERVE (pid:port; logs: $CLUSTER_DIR/serve-*.log)
  shards       $BOXOFFICE_DB
  Redis        $BOXOFFICE_REDIS (cluster ports: $BOXOFFICE_REDIS_CLUSTER_PORTS)
  Kafka        $BOXOFFICE_KAFKA (topic booking-events)
  gateway      $BOXOFFICE_GATEWAY_URL
Try:
  curl -s $BOXOFFICE_URL/readyz
  curl -s "$BOXOFFICE_URL/showtimes?limit=3"
  build/boxoffice audit --db "$BOXOFFICE_DB"
Admin token: $admin
Ctrl-C stops everything.

TXT
wait -n "${pids[@]}"
