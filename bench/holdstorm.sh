#!/usr/bin/env bash
# The premiere's hold storm over HTTP, on PostgreSQL, first straight to the store, then
# through the Redis seat gate; pgbench running the seeds' conditional UPDATE on the same
# PostgreSQL at the same concurrency is the reference. After each run `boxoffice audit`
# checks the invariants in the database: a run with a violation fails, whatever its speed.
#   bench/holdstorm.sh [CONNECTIONS] [SHOWTIMES]
# Prints `result …` lines and `ratio holds_vs_pgbench …`, `ratio gate_vs_store …`.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${BOXOFFICE_TEST_PG_URL:-}" ] || [ -z "${BOXOFFICE_REDIS:-}" ]; then
  scripts/deps.sh bench
  cmake --build build --target boxoffice boxoffice-bench >/dev/null
  exec scripts/with-postgres.sh scripts/with-redis.sh "$0" "$@"
fi
source scripts/lib.sh
connections=${1:-64}
showtimes=${2:-20}
threads=$(nproc)
pg_bin=/usr/lib/postgresql/15/bin
secret=bench-secret-bench-secret-bench-secret-01
tmp=$(mktemp -d)
serve_pid=
cleanup() {
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# A fresh schema per run, so each run starts from an empty database.
schema_url() {
  "$pg_bin/psql" -q "$BOXOFFICE_TEST_PG_URL" -c "DROP SCHEMA IF EXISTS $1 CASCADE; CREATE SCHEMA $1" >/dev/null
  local sep='?'
  [[ "$BOXOFFICE_TEST_PG_URL" == *\?* ]] && sep='&'
  echo "$BOXOFFICE_TEST_PG_URL${sep}options=-csearch_path%3D$1"
}

# Starts serve on $1 (database URL) with extra flags; sets $api.
start_serve() {
  local db=$1
  shift
  local port
  port=$(free_port)
  # Every attempt is a new customer, so the per-customer rate limit would never bite; it is
  # raised only so that the storm measures the hold path, not 429s.
  # (BOXOFFICE_REDIS, set by with-redis.sh, would be read as --redis: only the flag decides.)
  env -u BOXOFFICE_REDIS build/boxoffice serve --db "$db" --listen "127.0.0.1:$port" --jwt-secret "$secret" \
    --events-file "$tmp/events.jsonl" --holds-per-minute 100000 "$@" 2>"$tmp/serve.log" &
  serve_pid=$!
  api="http://127.0.0.1:$port"
  for _ in $(seq 1 100); do
    curl -sf "$api/healthz" >/dev/null && return 0
    sleep 0.1
  done
  cat "$tmp/serve.log" >&2
  return 1
}

stop_serve() {
  kill "$serve_pid"
  wait "$serve_pid" 2>/dev/null || true
  serve_pid=
}

# Creates $1 showtimes of 300 seats (15 rows × 20); prints the first id.
make_showtimes() {
  local admin rows first= id
  admin=$(build/boxoffice token --jwt-secret "$secret" --customer 1 --admin)
  rows=$(for r in A B C D E F G H I J K L M N O; do printf '{"row":"%s","seats":20,"category":"standard"},' "$r"; done)
  for _ in $(seq 1 "$1"); do
    id=$(curl -sf -X POST "$api/admin/showtimes" -H "Authorization: Bearer $admin" -d "{
      \"title\": \"Premiere\", \"cinema\": \"Bench\", \"hall\": \"1\",
      \"startsAt\": \"2030-01-01T20:00:00.000Z\", \"rows\": [${rows%,}],
      \"prices\": {\"standard\": {\"amount\": 1250, \"currency\": \"EUR\"}}}" |
      sed -E 's/.*"showtimeId":([0-9]+).*/\1/')
    [ -z "$first" ] && first=$id
  done
  echo "$first"
}

metric() {
  curl -sf "$api/metrics" | awk -v s="$1" 'index($0, s " ") == 1 { print $2 }'
}

field() { sed -E "s/.* $1=([0-9.]+).*/\1/" <<<"$2"; }

failed=0
run() {
  local name=$1
  shift
  local db first out rejected audit
  db=$(schema_url "$name")
  redis-cli -u "$BOXOFFICE_REDIS" FLUSHALL >/dev/null  # no gate keys of an earlier run
  start_serve "$db" "$@"
  first=$(make_showtimes "$showtimes")
  out=$(build/boxoffice-bench holdstorm --port "${api##*:}" --showtime "$first" --showtimes "$showtimes" \
    --connections "$connections" --threads "$threads" --secret "$secret" --seconds 120 --name "$name")
  rejected=$(metric 'boxoffice_gate_total{outcome="rejected"}')
  stop_serve
  echo "$out" | sed "1s/\$/ gate_rejected=${rejected:-none}/"
  audit=$(build/boxoffice audit --db "$db" 2>/dev/null) || failed=1
  echo "${audit/result audit/result ${name}_audit}"
  last_db=$db
  last_first=$first
  last_out=$out
}

echo "hold storm: $showtimes showtimes × 300 seats sold out one after another, $connections connections, $threads client threads" >&2
run holdstorm_store
store_out=$last_out
run holdstorm_gate --redis "$BOXOFFICE_REDIS" --redis-timeout 50ms
gate_out=$last_out

# The reference: the seeds' conditional UPDATE, one random seat of a hot 300-seat showtime
# per transaction, 64 pgbench clients on the same PostgreSQL. Holds last 20 ms, so the hall
# keeps freeing up and the statement keeps writing, as under a storm.
cat >"$tmp/hold.sql" <<'SQL'
\set r random(0, 14)
\set n random(1, 20)
UPDATE show_seat SET status = 'HELD', hold_id = gen_random_uuid(), customer_id = :client_id,
       hold_expires_at = now() + interval '20 milliseconds'
 WHERE showtime_id = :st AND seat_code = chr(65 + :r) || :n
   AND (status = 'AVAILABLE' OR (status = 'HELD' AND hold_expires_at < now()));
SQL
pgbench_out=$("$pg_bin/pgbench" -n -c "$connections" -j "$threads" -T 10 -D "st=$last_first" \
  -f "$tmp/hold.sql" "$last_db" 2>&1)
tps=$(sed -nE 's/^tps = ([0-9.]+) \(without initial connection time\)/\1/p' <<<"$pgbench_out")
latency=$(sed -nE 's/^latency average = ([0-9.]+) ms/\1/p' <<<"$pgbench_out")
echo "result pgbench_conditional_update tps=${tps} latency_avg_ms=${latency} clients=$connections"
awk -v a="$(field attempts_per_s "$gate_out")" -v b="$tps" 'BEGIN { printf "ratio holds_vs_pgbench %.2f\n", a / b }'
awk -v a="$(field attempts_per_s "$gate_out")" -v b="$(field attempts_per_s "$store_out")" \
  'BEGIN { printf "ratio gate_vs_store %.2f\n", a / b }'
exit "$failed"
