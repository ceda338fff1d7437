#!/usr/bin/env bash
# Best available against picking by hand, under the same storm: every customer wants two
# seats side by side. `holdstorm_pairs` reads the map and picks a free pair by hand (as
# bench/holdstorm.sh does), and when refused takes the first block the 409 offers
# (`alternatives`, the seat picker's one click); `holdstorm_best` asks for the best 2.
# Both run through the Redis gate on PostgreSQL, each on its own fresh showtimes of 300
# seats (15 rows × 20, an aisle after 5 and 15), single-seat gaps allowed, then forbidden
# (`…_nogaps`). Each line gives seats sold per second (`seats_per_s`) and the 409s per
# seat sold (`conflicts_per_seat`: the attempts wasted on seats someone else got first).
# A storm ends for a showtime when the map shows no two free seats side by side or a 409
# offers no alternative (by hand), or when best available answers 409 (no pair left):
# single seats may stay. `boxoffice audit` checks the database after each.
#   bench/holdstorm_best.sh [CONNECTIONS] [SHOWTIMES]
# Prints `result …` lines and `ratio best_vs_pairs_seats_per_s …`, `ratio
# best_vs_pairs_conflicts_per_seat …` (gaps allowed).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
source bench/lib.sh
with_postgres_and_redis "$0" "$@"
connections=${1:-64}
showtimes=${2:-20}
threads=$(nproc)
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
bench_scratch

# Showtimes of the layout above; prints the first id (one database: consecutive ids).
make_hall() {
  local gaps=$1 admin rows first= id
  admin=$(build/boxoffice token --jwt-secret "$bench_secret" --customer 1 --admin)
  rows=$(for r in A B C D E F G H I J K L M N O; do
    printf '{"row":"%s","seats":20,"category":"standard","aisles":[5,15]},' "$r"; done)
  for _ in $(seq 1 "$showtimes"); do
    id=$(curl -sf -X POST "$api/admin/showtimes" -H "Authorization: Bearer $admin" -d "{
      \"title\": \"Premiere\", \"cinema\": \"Bench\", \"hall\": \"1\",
      \"startsAt\": \"2030-01-01T20:00:00.000Z\", \"rows\": [${rows%,}], \"singleSeatGaps\": \"$gaps\",
      \"prices\": {\"standard\": {\"amount\": 1250, \"currency\": \"EUR\"}}}" |
      sed -E 's/.*"showtimeId":([0-9]+).*/\1/')
    first=${first:-$id}
  done
  echo "$first"
}

failed=0
run() {
  local name=$1 gaps=$2 mode=$3 db first out audit
  db=$(schema_url "$name")
  redis-cli -u "$BOXOFFICE_REDIS" FLUSHALL >/dev/null
  start_serve --db "$db" --redis "$BOXOFFICE_REDIS" --redis-timeout 50ms \
    --holds-per-minute 100000 --max-connections $((connections + 1000))
  first=$(make_hall "$gaps")
  # shellcheck disable=SC2086 # the mode's flags are words
  out=$(build/boxoffice-bench holdstorm --port "${api##*:}" --showtime "$first" --showtimes "$showtimes" \
    --connections "$connections" --threads "$threads" --secret "$bench_secret" --seconds 120 \
    $mode --name "$name") || failed=1
  stop_serve
  echo "$out"
  audit=$(build/boxoffice audit --db "$db" 2>/dev/null) || failed=1
  echo "${audit/result audit/result ${name}_audit}"
  last_out=$out
}

echo "seat rules storm: $showtimes showtimes × 300 seats, $connections connections, pairs by hand and best 2" >&2
run holdstorm_pairs allow "--min-seats 2 --max-seats 2 --take-alternatives 1"
pairs=$last_out
run holdstorm_best allow "--best 2"
best=$last_out
run holdstorm_pairs_nogaps forbid "--min-seats 2 --max-seats 2 --take-alternatives 1"
run holdstorm_best_nogaps forbid "--best 2"
awk -v b="$(field seats_per_s "$best")" -v p="$(field seats_per_s "$pairs")" \
  'BEGIN { if (p > 0) printf "ratio best_vs_pairs_seats_per_s %.2f\n", b / p }'
awk -v b="$(field conflicts_per_seat "$best")" -v p="$(field conflicts_per_seat "$pairs")" \
  'BEGIN { if (p > 0) printf "ratio best_vs_pairs_conflicts_per_seat %.3f\n", b / p }'
exit "$failed"
