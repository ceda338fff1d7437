#!/usr/bin/env bash
# A payment gateway that answers after 5 s must not slow anyone's holds. Premiere customers
# (PostgreSQL, the Redis gate) buy seats in the background, checking out at the gateway,
# while a hold storm sells other showtimes; once with a fake gateway that answers at once,
# once with one that waits 5 s before opening each session (so the checkouts pile up on
# it). The hold storm's p99 of both runs are compared.
#   bench/slowgateway.sh [CONNECTIONS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
source bench/lib.sh
with_postgres_and_redis "$0" "$@"
connections=${1:-64}
seconds=${2:-10}
threads=$(nproc)
ulimit -n 65536 2>/dev/null || true
bench_scratch

# One run: the gateway with answer delay $2; prints the client's lines named $1.
run() {
  local name=$1 delay=$2 first
  start_gateway --answer-delay "$delay"
  redis-cli -u "$BOXOFFICE_REDIS" FLUSHALL >/dev/null
  start_serve --db "$BOXOFFICE_TEST_PG_URL" --redis "$BOXOFFICE_REDIS" \
    --gateway-url "http://127.0.0.1:$gateway_port" --gateway-secret "$gateway_secret" \
    --holds-per-minute 100000 --max-connections 100000
  first=$(make_showtimes 10)
  storm=$(make_showtimes 10)
  # The buyers: 100 customers who check out (and, with the slow gateway, wait there).
  build/boxoffice-bench premiere --port "${api##*:}" --gateway-port "$gateway_port" \
    --showtime "$first" --showtimes 10 --connections 100 --threads 1 --map-reads 2 \
    --secret "$bench_secret" --seconds "$seconds" --max-seats 4 --name "${name}_buyers" \
    >"$tmp/buyers.txt" 2>&1 &
  buyers_pid=$!
  sleep 2
  build/boxoffice-bench holdstorm --port "${api##*:}" --showtime "$storm" --showtimes 10 \
    --connections "$connections" --threads "$threads" --secret "$bench_secret" \
    --seconds "$seconds" --name "$name" || true
  echo "# $name: $(metric 'boxoffice_http_requests_in_flight') requests in flight at the end (the buyers' checkouts)"
  kill "$buyers_pid" 2>/dev/null || true
  wait "$buyers_pid" 2>/dev/null || true
  buyers_pid=
  stop_serve
  kill "$gateway_pid" 2>/dev/null || true
  wait "$gateway_pid" 2>/dev/null || true
  gateway_pid=
}

echo "slow gateway: $connections connections for ${seconds}s, a gateway answering at once then after 5 s" >&2
normal=$(run slowgateway_normal 0s)
echo "$normal"
slow=$(run slowgateway_slow 5s)
echo "$slow"
audit=$(build/boxoffice audit --db "$BOXOFFICE_TEST_PG_URL" 2>/dev/null) && audited=0 || audited=1
echo "${audit/result audit/result slowgateway_audit}"
p99() { grep "^result $1 " <<<"$2" | sed -E 's/.* p99_ms=([0-9.]+).*/\1/'; }
awk -v s="$(p99 slowgateway_slow "$slow")" -v n="$(p99 slowgateway_normal "$normal")" \
  'BEGIN { if (n > 0) printf "ratio slowgateway_hold_p99_vs_normal %.2f\n", s / n }'
exit "$audited"
