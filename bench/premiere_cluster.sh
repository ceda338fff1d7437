#!/usr/bin/env bash
# The premiere beyond one machine: SHOWTIMES × 300 seats on sale at once through haproxy in
# front of 3 `serve` instances, 2 PostgreSQL shards (the showtimes alternate between them),
# a Redis Cluster of 3 masters and 3 replicas and Kafka (scripts/cluster.sh). Each
# connection is a customer of bench/premiere.sh: reads the seat map MAP_READS times,
# holds 1–8 adjacent seats, checks out, pays at the gateway and waits for CONFIRMED; the
# gateway calls back through haproxy. Afterwards `boxoffice audit` checks every shard.
#
# With CHAOS=1 (the test scripts/test.sh runs): a few seconds in, one instance is killed
# with kill -9, then the Redis master serving the first showtime's slot, whose replica
# takes over. Holds cut short by the faults expire and are sold again (short TTLs), every
# booking settles (the reconciler asks the gateway about those whose instance died), and
# the run passes only when every seat is BOOKED, every shard's audit finds 0 violations,
# and every paid booking is CONFIRMED or REFUNDED with no refund left to issue.
#   bench/premiere_cluster.sh [CONNECTIONS] [SHOWTIMES] [MAP_READS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${BOXOFFICE_URL:-}" ]; then
  cmake --build build --target boxoffice boxoffice-bench >/dev/null
  if [ "${CHAOS:-0}" = 1 ]; then
    # Stranded holds come back within seconds, and pending bookings are asked about soon.
    export CLUSTER_SERVE_FLAGS="--hold-ttl 20s --hold-max-lifetime 40s --payment-ttl 15s --reconcile-after 20s --reconcile-interval 2s --sweep-interval 2s --holds-per-minute 100000 --max-connections 100000"
  else
    export CLUSTER_SERVE_FLAGS="--holds-per-minute 100000 --max-connections 100000"
  fi
  exec scripts/cluster.sh "$0" "$@"
fi
source scripts/lib.sh
source bench/lib.sh
connections=${1:-500}
showtimes=${2:-10}
map_reads=${3:-30}
seconds=${4:-240}
name=premiere_cluster
[ "${CHAOS:-0}" = 1 ] && name=premiere_cluster_chaos
port=${BOXOFFICE_URL##*:}
gateway_port=${BOXOFFICE_GATEWAY_URL##*:}
threads=$(nproc)
ulimit -n 65536 2>/dev/null || true

# The showtimes, through the balancer: they fill the two shards evenly.
api=$BOXOFFICE_URL
bench_secret=$BOXOFFICE_JWT_SECRET
ids=$(make_showtime_ids "$showtimes")
first=${ids%%,*}
echo "$name: $showtimes showtimes × 300 seats ($ids) on 2 shards, $connections connections, $map_reads map reads per hold, 3 instances" >&2

chaos_pid=
if [ "${CHAOS:-0}" = 1 ]; then
  (
    sleep 1
    victim=${CLUSTER_SERVE%% *}
    echo "# $name: kill -9 instance ${victim#*:} (pid ${victim%%:*})"
    kill -9 "${victim%%:*}"
    sleep 1
    slot=$(redis-cli -p "${BOXOFFICE_REDIS##*:}" cluster keyslot "{$first}")
    for p in $BOXOFFICE_REDIS_CLUSTER_PORTS; do
      nodes=$(redis-cli -p "$p" cluster nodes 2>/dev/null) || continue
      master=$(awk -v s="$slot" '$3 ~ /master/ && $3 !~ /fail/ {
          for (i = 9; i <= NF; i++) { n = split($i, r, "-"); lo = r[1]; hi = (n > 1 ? r[2] : r[1]);
            if (s >= lo && s <= hi) { split($2, a, "[:@]"); print a[2] } } }' <<<"$nodes")
      break
    done
    if [ -z "${master:-}" ]; then
      echo "# $name: no Redis master found for slot $slot: none killed"
      exit 1
    fi
    echo "# $name: kill -9 the Redis master on port $master (slot $slot of showtime $first)"
    pkill -9 -f "redis-server 127.0.0.1:$master " || pkill -9 -f "redis-server 127.0.0.1:$master\$" || true
  ) &
  chaos_pid=$!
fi

ours=$(build/boxoffice-bench premiere --port "$port" --gateway-port "$gateway_port" \
  --showtime-ids "$ids" --connections "$connections" --threads "$threads" \
  --map-reads "$map_reads" --secret "$bench_secret" --seconds "$seconds" \
  --max-seats 8 --until-booked "${CHAOS:-0}" --name "$name") || true
echo "$ours"
chaos_failed=0
[ -z "$chaos_pid" ] || wait "$chaos_pid" || chaos_failed=1

# Every booking settles: none PENDING, no refund left to issue (at most a minute: a booking
# whose instance died is asked about by the reconciler after --reconcile-after).
settled=0
for _ in $(seq 1 120); do
  open=0
  for db in $BOXOFFICE_DB; do
    n=$(psql -qAt "$db" -c "SELECT (SELECT count(*) FROM booking WHERE status = 'PENDING') + (SELECT count(*) FROM refund WHERE status = 'PENDING')")
    open=$((open + n))
  done
  if [ "$open" = 0 ]; then settled=1; break; fi
  sleep 0.5
done
audit=$(build/boxoffice audit --db "$BOXOFFICE_DB" 2>/dev/null) && audited=0 || audited=1
sed "s/^result audit/result ${name}_audit/" <<<"$audit"
booked=$(grep '^result audit ' <<<"$audit" | sed -E 's/.* seats_booked=([0-9]+).*/\1/')
if [ "$chaos_failed" != 0 ]; then
  echo "# $name: the faults were not injected"
  exit 1
fi
if [ "$settled" != 1 ]; then
  echo "# $name: bookings or refunds still pending after a minute"
  exit 1
fi
if [ "${booked:-0}" != $((showtimes * 300)) ]; then
  echo "# $name: not sold out: ${booked:-no} of $((showtimes * 300)) seats booked"
  exit 1
fi
exit "$audited"
