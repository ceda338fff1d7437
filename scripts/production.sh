#!/usr/bin/env bash
# The production profile on one machine: PostgreSQL, Redis, Kafka (librdkafka's mock
# cluster, or real brokers given as BOXOFFICE_KAFKA=HOST:PORT,...), the fake payment
# gateway, and two `serve` instances (127.0.0.1:8081 and :8082) sharing them, with demo
# data. Ctrl-C stops everything. The PostgreSQL and Redis it starts are throwaway ones
# (scripts/with-postgres.sh, scripts/with-redis.sh); point --db and --redis at real ones in
# production.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${BOXOFFICE_PROFILE_INNER:-}" ]; then
  export BOXOFFICE_PROFILE_INNER=1
  exec scripts/with-postgres.sh scripts/with-redis.sh "$0" "$@"
fi

mkdir -p var
export BOXOFFICE_DB="$BOXOFFICE_TEST_PG_URL"
export BOXOFFICE_JWT_SECRET=${BOXOFFICE_JWT_SECRET:-dev-only-secret-change-me-in-production-0001}
export BOXOFFICE_GATEWAY_SECRET=${BOXOFFICE_GATEWAY_SECRET:-dev-only-gateway-secret-0001}
gateway_listen=${GATEWAY_LISTEN:-127.0.0.1:9090}
export BOXOFFICE_GATEWAY_URL=${BOXOFFICE_GATEWAY_URL:-http://$gateway_listen}

pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT

if [ -z "${BOXOFFICE_KAFKA:-}" ]; then
  build/boxoffice kafka-mock 2>var/kafka-mock.log &
  pids+=($!)
  for _ in $(seq 1 100); do
    BOXOFFICE_KAFKA=$(sed -n 's/.*"bootstraps":"\([^"]*\)".*/\1/p' var/kafka-mock.log | head -1)
    [ -n "$BOXOFFICE_KAFKA" ] && break
    sleep 0.05
  done
  [ -n "$BOXOFFICE_KAFKA" ] || { cat var/kafka-mock.log >&2; exit 1; }
fi
export BOXOFFICE_KAFKA

build/boxoffice fake-gateway --listen "$gateway_listen" --secret "$BOXOFFICE_GATEWAY_SECRET" \
  --service-url "http://127.0.0.1:8081 http://127.0.0.1:8082" 2>var/fake-gateway.log &
pids+=($!)
build/boxoffice seed --demo
for port in 8081 8082; do
  build/boxoffice serve --listen "127.0.0.1:$port" 2>"var/serve-$port.log" &
  pids+=($!)
done
customer=$(build/boxoffice token --customer 42 --ttl 24h)
cat <<TXT

boxoffice, production profile: two instances sharing PostgreSQL, Redis and Kafka
  serve        http://127.0.0.1:8081 and http://127.0.0.1:8082 (logs: var/serve-*.log)
  PostgreSQL   $BOXOFFICE_DB
  Redis        $BOXOFFICE_REDIS (seat gate)
  Kafka        $BOXOFFICE_KAFKA (topic booking-events)
  gateway      $BOXOFFICE_GATEWAY_URL (log: var/fake-gateway.log)
Try: a hold on one instance is refused on the other, at the gate:
  curl -s -X POST http://127.0.0.1:8081/showtimes/1/holds -H "Authorization: Bearer $customer" -d '{"seats": ["A5"]}'
  curl -s -X POST http://127.0.0.1:8082/showtimes/1/holds -H "Authorization: Bearer $customer" -d '{"seats": ["A5"]}'
  curl -s http://127.0.0.1:8081/metrics | grep boxoffice_gate
Customer 42 token: $customer

TXT
wait -n "${pids[@]}"
