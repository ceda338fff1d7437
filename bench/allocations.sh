#!/usr/bin/env bash
# Heap allocations per request in `serve` (embedded profile), counted by a preloaded
# counter (build/libboxoffice-alloc-count.so): the premiere's common requests, each read
# by the load generator for a short and a long run on a fresh instance, the difference in
# allocations divided by the difference in requests (so start-up and set-up drop out).
#   result allocations_<route> per_request=N requests=R
#   bench/allocations.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
source bench/lib.sh
seconds=${1:-3}
bench_setup
bench_scratch
counter=$PWD/build/libboxoffice-alloc-count.so
[ -f "$counter" ] || { echo "allocations: $counter is missing (make build)" >&2; exit 1; }

# One fresh instance: a showtime, then `path` read for $2 seconds; prints "allocations requests".
count() {
  local path=$1 run_seconds=$2 out requests
  rm -f "$tmp/alloc.db" "$tmp/alloc.txt"
  LD_PRELOAD=$counter BOXOFFICE_ALLOC_COUNT_OUT=$tmp/alloc.txt start_serve --db "sqlite:$tmp/alloc.db"
  local showtime
  showtime=$(make_showtimes 1)
  path=${path//\{id\}/$showtime}
  curl -sf -o /dev/null "$api$path"
  out=$(build/boxoffice-bench get --port "${api##*:}" --path "$path" --connections 8 \
    --threads 1 --seconds "$run_seconds" --name alloc)
  requests=$(field requests "$out")
  stop_serve
  echo "$(sed -E 's/allocations=//' "$tmp/alloc.txt") $((requests + 1))"
}

for route in "seatmap /showtimes/{id}/seats" "showtime /showtimes/{id}" \
  "showtimes /showtimes?limit=20"; do
  read -r name path <<<"$route"
  read -r a_short r_short <<<"$(count "$path" 1)"
  read -r a_long r_long <<<"$(count "$path" "$seconds")"
  awk -v n="$name" -v a="$((a_long - a_short))" -v r="$((r_long - r_short))" \
    'BEGIN { printf "result allocations_%s per_request=%.1f requests=%d\n", n, a / r, r }'
done
