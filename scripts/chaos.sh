#!/usr/bin/env bash
# Engine faults under a randomized history (make chaos), on this machine, loopback only.
#
#   scripts/chaos.sh [SECONDS] [MIN_OPERATIONS]     (default: 120 s, at least 100,000)
#
# Starts PostgreSQL 15, Redis, the mock Kafka broker, the fake gateway and two `serve`
# instances on one database, the second with its clock five minutes ahead (faketime). Then
# build/boxoffice-chaos runs customers against both while it injects, in turn: kill -9 of
# PostgreSQL (restarted: crash recovery), PostgreSQL stopped (SIGSTOP) past lock_timeout,
# kill -9 of Redis (restarted empty), Redis stopped past its timeout, the Kafka broker
# stopped for a minute, the gateway stopped for a minute; and twice a showtime cancelled by
# the admin while the gateway is stopped, followed by kill -9 of the first instance
# (restarted on its port) and of PostgreSQL in the middle of the mass refund. Customers
# also cancel their own bookings. Afterwards it checks what clients
# were told (bench/chaos.cc), that the outbox drained into Kafka, and `boxoffice audit`
# checks the database: 0 violations, or the run fails. Everything it started is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

seconds=${1:-120}
min_ops=${2:-100000}
bin=build/boxoffice
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
[ -x build/boxoffice-chaos ] || { echo "chaos: build first (make build)" >&2; exit 1; }
command -v faketime >/dev/null || { echo "chaos: faketime missing (scripts/deps.sh chaos)" >&2; exit 1; }

work=$(mktemp -d /tmp/boxoffice-chaos.XXXXXX)
chmod 755 "$work"
as_pg=()
if [ "$(id -u)" = 0 ]; then as_pg=(runuser -u postgres --); fi
pids=()
cleanup() {
  kill -CONT "${pids[@]}" 2>/dev/null || true
  [ -f "$work/redis.pid" ] && kill -9 "$(cat "$work/redis.pid")" 2>/dev/null || true
  kill "${pids[@]}" 2>/dev/null || true
  [ -f "$work/a.pid" ] && kill "$(cat "$work/a.pid")" 2>/dev/null || true
  wait 2>/dev/null || true
  "${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$work/pg" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# PostgreSQL, durable as in production (fsync on): a kill -9 must lose nothing committed.
pg_port=$(free_port)
mkdir "$work/pg" "$work/pgrun"
if [ "$(id -u)" = 0 ]; then chown postgres: "$work/pg" "$work/pgrun"; fi
"${as_pg[@]}" "$PG_BIN/initdb" -D "$work/pg" -U boxoffice -A trust -E UTF8 --no-locale >"$work/initdb.log"
"${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$work/pg" -l "$work/pgrun/pg.log" -w \
  -o "-p $pg_port -k $work/pgrun -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null
db="postgresql://boxoffice@127.0.0.1:$pg_port/boxoffice"
"${as_pg[@]}" "$PG_BIN/createdb" -h 127.0.0.1 -p "$pg_port" -U boxoffice boxoffice

redis_port=$(free_port)
start_redis() {
  redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no \
    >>"$work/redis.log" 2>&1 &
  echo $! >"$work/redis.pid"
  for _ in $(seq 1 100); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && return 0; sleep 0.05; done
}
start_redis

# Prints a field of the "listening" line a started process logged: its port (a number) or
# its bootstraps (a string).
listening() {
  local log=$1 field=$2
  for _ in $(seq 1 200); do
    local v
    v=$(grep '"msg":"listening"' "$log" 2>/dev/null | head -1 |
      sed -n "s/.*\"$field\":\"\{0,1\}\([^\",}]*\(,[^\"}]*\)\{0,1\}\)\"\{0,1\}[,}].*/\1/p") || true
    [ -n "$v" ] && { echo "$v"; return 0; }
    sleep 0.05
  done
  echo "chaos: nothing listening in $log" >&2; return 1
}

"$bin" kafka-mock >"$work/kafka.log" 2>&1 & kafka_pid=$!; pids+=("$kafka_pid")
kafka=$(listening "$work/kafka.log" bootstraps)
secret="chaos-secret-chaos-secret-chaos-secret"
gateway_secret="chaos-gateway-secret-0"
"$bin" fake-gateway --listen 127.0.0.1:0 --secret "$gateway_secret" >"$work/gateway.log" 2>&1 &
gateway_pid=$!; pids+=("$gateway_pid")
gateway_port=$(listening "$work/gateway.log" port)

# Short times, so that the service settles within the run: holds of 30 s, payment sessions
# of 20 s, the reconciler asking every second.
serve_flags=(--db "$db" --redis "redis://127.0.0.1:$redis_port" --kafka "$kafka"
  --jwt-secret "$secret" --gateway-secret "$gateway_secret"
  --gateway-url "http://127.0.0.1:$gateway_port"
  --hold-ttl 30s --hold-max-lifetime 60s --payment-ttl 20s --reconcile-after 40s
  --reconcile-interval 1s --sweep-interval 2s --holds-per-minute 100000 --redis-timeout 200ms)
# The first instance on a port of its own: the faults kill it and start it again there.
a_port=$(free_port)
start_a() {
  "$bin" serve "${serve_flags[@]}" --listen "127.0.0.1:$a_port" >>"$work/a.log" 2>&1 &
  echo $! >"$work/a.pid"
}
start_a
listening "$work/a.log" port >/dev/null
faketime -f "+5m" "$bin" serve "${serve_flags[@]}" --listen 127.0.0.1:0 >"$work/b.log" 2>&1 & pids+=($!)
b_port=$(listening "$work/b.log" port)

# The fault script boxoffice-chaos calls; it knows the processes above.
cat >"$work/fault.sh" <<FAULT
#!/usr/bin/env bash
pg_pids() { pgrep -f -- "-D $work/pg" ; pgrep -P "\$(head -1 $work/pg/postmaster.pid 2>/dev/null || echo 1)" 2>/dev/null; }
start_pg() {
  for _ in \$(seq 1 100); do
    ${as_pg[*]} $PG_BIN/pg_ctl -D $work/pg -l $work/pgrun/pg.log -w \
      -o "-p $pg_port -k $work/pgrun -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  return 1
}
start_a() {
  $(printf '%q ' "$bin" serve "${serve_flags[@]}" --listen "127.0.0.1:$a_port") >>$work/a.log 2>&1 &
  echo \$! >$work/a.pid
  for _ in \$(seq 1 200); do curl -sf -o /dev/null http://127.0.0.1:$a_port/healthz && return 0; sleep 0.05; done
}
case "\$1" in
  serve-kill) kill -9 "\$(cat $work/a.pid)"; sleep 1; start_a ;;
  pg-kill) kill -9 \$(pg_pids) 2>/dev/null; sleep 2; start_pg ;;
  pg-stop) kill -STOP \$(pg_pids); sleep 3; kill -CONT \$(pg_pids) ;;
  redis-kill) kill -9 "\$(cat $work/redis.pid)"; sleep 1
    redis-server --port $redis_port --bind 127.0.0.1 --save "" --appendonly no >>$work/redis.log 2>&1 &
    echo \$! >$work/redis.pid ;;
  redis-stop) kill -STOP "\$(cat $work/redis.pid)"; sleep 2; kill -CONT "\$(cat $work/redis.pid)" ;;
  kafka-stop) kill -STOP $kafka_pid; (sleep 60; kill -CONT $kafka_pid) >/dev/null 2>&1 & ;;
  gateway-stop) kill -STOP $gateway_pid; (sleep 60; kill -CONT $gateway_pid) >/dev/null 2>&1 & ;;
  heal) kill -CONT $kafka_pid $gateway_pid "\$(cat $work/redis.pid)" \$(pg_pids) 2>/dev/null
    redis-cli -p $redis_port ping >/dev/null 2>&1 || {
      redis-server --port $redis_port --bind 127.0.0.1 --save "" --appendonly no >>$work/redis.log 2>&1 &
      echo \$! >$work/redis.pid; }
    ${as_pg[*]} $PG_BIN/pg_ctl -D $work/pg status >/dev/null 2>&1 || start_pg
    kill -0 "\$(cat $work/a.pid)" 2>/dev/null || start_a ;;
esac
FAULT
chmod +x "$work/fault.sh"

status=0
build/boxoffice-chaos --instance "$a_port" --instance "$b_port" --gateway-port "$gateway_port" \
  --jwt-secret "$secret" --fault-script "$work/fault.sh" --seconds "$seconds" \
  --min-ops "$min_ops" --hold-lifetime-s 60 || status=$?

# The outbox grew while Kafka was stopped: it drains once the broker is back.
pending=-1
for _ in $(seq 1 120); do
  pending=$(psql -h 127.0.0.1 -p "$pg_port" -U boxoffice -d boxoffice -tAc \
    "SELECT count(*) FROM outbox WHERE published_at IS NULL" 2>/dev/null || echo -1)
  [ "$pending" = 0 ] && break
  sleep 1
done
echo "chaos: outbox events not delivered to Kafka after the run: $pending"
[ "$pending" = 0 ] || status=1

# How the payments were settled, by each instance (callbacks and the reconciler).
for port in "$a_port" "$b_port"; do
  curl -s "http://127.0.0.1:$port/metrics" 2>/dev/null |
    grep -E '^boxoffice_(payments_settled|reconciled|refunds_issued)_total' | sed "s/^/chaos: :$port /" || true
done

# The database's own account of the run.
audit=$("$bin" audit --db "$db" 2>/dev/null | tail -n 1) || status=1
echo "chaos: audit $audit"
echo "$audit" | grep -q ' violations=0 ' || status=1
if [ "$status" != 0 ]; then
  echo "chaos: FAILED; the service logs:"
  for log in a b; do echo "== $log"; grep -E '"level":"(error|warn)"' "$work/$log.log" | tail -n 20; done
fi
exit "$status"
