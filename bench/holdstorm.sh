#!/usr/bin/env bash
# The premiere's hold storm over HTTP, on PostgreSQL, first straight to the store, then
# through the Redis seat gate; pgbench running the seeds' conditional UPDATE on the same
# PostgreSQL at the same concurrency is the reference. After each run `boxoffice audit`
# checks the invariants in the database: a run with a violation fails, whatever its speed.
#   bench/holdstorm.sh [CONNECTIONS] [SHOWTIMES]
# Prints `result …` lines and `ratio holds_vs_pgbench …`, `ratio gate_vs_store …`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
source bench/lib.sh
with_postgres_and_redis "$0" "$@"
connections=${1:-64}
showtimes=${2:-20}
threads=$(nproc)
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"  # up to 10,000 connections and the server's
pg_bin=/usr/lib/postgresql/15/bin
bench_scratch

failed=0
run() {
  local name=$1
  shift
  local db first out rejected audit
  db=$(schema_url "$name")
  redis-cli -u "$BOXOFFICE_REDIS" FLUSHALL >/dev/null  # no gate keys of an earlier run
  # Every attempt is a new customer, so the per-customer rate limit would never bite; it is
  # raised only so that the storm measures the hold path, not 429s.
  start_serve --db "$db" --holds-per-minute 100000 --max-connections $((connections + 1000)) "$@"
  first=$(make_showtimes "$showtimes")
  local before after
  before=$(cpu_snapshot "$serve_pid")
  out=$(build/boxoffice-bench holdstorm --port "${api##*:}" --showtime "$first" --showtimes "$showtimes" \
    --connections "${bench_connections:-$connections}" --threads "$threads" --secret "$bench_secret" --seconds 120 \
    --rate "${bench_rate:-0}" --name "$name")
  after=$(cpu_snapshot "$serve_pid")
  rejected=$(metric 'boxoffice_gate_total{outcome="rejected"}')
  stop_serve
  echo "$out" | sed "1s/\$/ gate_rejected=${rejected:-none}/"
  # What the run cost each part in CPU, per hold attempt (the rest of the machine's busy
  # time is the load generator's and the kernel's).
  cpu_result "$name" attempts "$(awk -v r="$(field attempts_per_s "$out")" -v s="$(field seconds "$out")" \
    'BEGIN { printf "%d", r * s }')" "serve postgres redis machine_busy" "$before" "$after" 1000 us_per_attempt
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
# Open loop: attempts due at half the closed-loop rate with the gate, so the latency is
# that of a service at half load, not of the connections queueing. At most 256
# connections: each must make an attempt every connections ÷ rate seconds.
open_rate=$(awk -v r="$(field attempts_per_s "$gate_out")" 'BEGIN { printf "%d", r / 2 }')
bench_connections=$((connections < 256 ? connections : 256)) bench_rate=$open_rate \
  run holdstorm_gate_open --redis "$BOXOFFICE_REDIS" --redis-timeout 50ms

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
# Every transaction's latency is logged (-l: its third column, in µs) for the percentiles.
# PostgreSQL takes 300 connections (scripts/with-postgres.sh): beyond 256 clients pgbench
# runs 256, which is all a database this size should ever be given.
pgbench_seconds=10
clients=$((connections < 256 ? connections : 256))
pgbench_out=$(cd "$tmp" && "$pg_bin/pgbench" -n -c "$clients" -j "$threads" -T "$pgbench_seconds" \
  -D "st=$last_first" -l --log-prefix=pgbench -f "$tmp/hold.sql" "$last_db" 2>&1)
tps=$(sed -nE 's/^tps = ([0-9.]+) \(without initial connection time\)/\1/p' <<<"$pgbench_out")
cat "$tmp"/pgbench.* | awk '{ print $3 }' |
  latency_lines pgbench_conditional_update "$pgbench_seconds" " tps=$tps clients=$clients"
awk -v a="$(field attempts_per_s "$gate_out")" -v b="$tps" 'BEGIN { printf "ratio holds_vs_pgbench %.2f\n", a / b }'
awk -v a="$(field attempts_per_s "$gate_out")" -v b="$(field attempts_per_s "$store_out")" \
  'BEGIN { printf "ratio gate_vs_store %.2f\n", a / b }'
exit "$failed"
