#!/usr/bin/env bash
# Scale costs nothing on the hot path. The chain's data (CINEMAS × 10 halls × DAYS, five
# showtimes a hall a day: at 500 × 7 the seeds' 175,000 showtimes and 35 million seats) is
# written by `boxoffice seed` (COPY, resumable; its time, rate and the database's size are
# printed), then the same hold storm (bench/holdstorm.sh's customers, through the Redis
# gate) runs on 40 random 320-seat showtimes of it and of a small data set (one cinema,
# a week: 350 showtimes). Seat-map and hold latencies are compared:
#   ratio chain_vs_small_{seatmap,hold}_{p50,p99}, and ratio chain_vs_small, the worst.
# Then the showtimes list's pages (result chain_*_list*): 100 showtimes, the same counted
# (`seatsLeft=true`), 20 counted; ratio chain_list100_seats_vs_plain.
#   bench/chain.sh [CINEMAS] [DAYS] [CONNECTIONS]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
source bench/lib.sh
with_postgres_and_redis "$0" "$@"
cinemas=${1:-500}
days=${2:-7}
connections=${3:-64}
threads=$(nproc)
ulimit -n 65536 2>/dev/null || true
psql=/usr/lib/postgresql/15/bin/psql
bench_scratch

small=$(schema_url chain_small)
chain=$(schema_url chain_full)
build/boxoffice seed --db "$small" --cinemas 1 --halls-per-cinema 10 --days 7 2>/dev/null >/dev/null
echo "chain: seeding $cinemas cinemas × 10 halls × $days days" >&2
seed=$(build/boxoffice seed --db "$chain" --cinemas "$cinemas" --halls-per-cinema 10 --days "$days" 2>/dev/null)
sed 's/^result seed/result chain_seed/' <<<"$seed"
for db in "$small" "$chain"; do "$psql" -q "$db" -c "VACUUM ANALYZE" >/dev/null; done

failed=0
run() {
  local name=$1 db=$2 ids out audit
  ids=$("$psql" -qAt "$db" -c "SELECT string_agg(showtime_id::text, ',') FROM (SELECT showtime_id
    FROM showtime WHERE seat_count = 320 ORDER BY random() LIMIT 40) s")
  redis-cli -u "$BOXOFFICE_REDIS" FLUSHALL >/dev/null
  start_serve --db "$db" --redis "$BOXOFFICE_REDIS" --redis-timeout 50ms \
    --holds-per-minute 100000 --max-connections $((connections + 1000))
  out=$(build/boxoffice-bench holdstorm --port "${api##*:}" --showtime-ids "$ids" \
    --connections "$connections" --threads "$threads" --secret "$bench_secret" --seconds 120 \
    --name "$name")
  # The showtimes list: a page of 100 as it is, with its seats counted (`seatsLeft=true`,
  # every seat of every listed showtime visited), and the picker's page of 20 counted.
  for page in "list100 limit=100" "list100_seats limit=100&seatsLeft=true" \
    "list20_seats limit=20&seatsLeft=true"; do
    read -r label query <<<"$page"
    out+=$'\n'$(build/boxoffice-bench get --port "${api##*:}" --path "/showtimes?$query" \
      --connections 4 --threads "$threads" --seconds 5 --name "${name}_$label")
  done
  stop_serve
  echo "$out"
  audit=$(build/boxoffice audit --db "$db" 2>/dev/null) || failed=1
  echo "${audit/result audit/result ${name}_audit}"
  last_out=$out
}

run chain_small "$small"
small_out=$last_out
run chain_full "$chain"
chain_out=$last_out
line() { grep -m1 "^result $1 " <<<"$2"; }
worst=0
for route in hold seatmap; do
  suffix=""
  [ "$route" = seatmap ] && suffix=_seatmap
  for q in p50 p99; do
    a=$(field "${q}_ms" "$(line "chain_full$suffix" "$chain_out")")
    b=$(field "${q}_ms" "$(line "chain_small$suffix" "$small_out")")
    r=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
    echo "ratio chain_vs_small_${route}_$q $r"
    worst=$(awk -v w="$worst" -v r="$r" 'BEGIN { print (r > w ? r : w) }')
  done
done
echo "ratio chain_vs_small $worst"
awk -v a="$(field rps "$(line chain_full_list100_seats "$chain_out")")" \
  -v b="$(field rps "$(line chain_full_list100 "$chain_out")")" \
  'BEGIN { printf "ratio chain_list100_seats_vs_plain %.2f\n", (b > 0 ? a / b : 0) }'
exit "$failed"
