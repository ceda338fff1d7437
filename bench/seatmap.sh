#!/usr/bin/env bash
# The seat map of a hot 300-seat showtime served by boxoffice (from its per-instance cache)
# against nginx serving the same bytes as a static file: the same client
# (boxoffice-bench), the same concurrency, in one run, so the ratio means something on a
# shared, noisy machine. Also reports the store queries boxoffice made meanwhile.
#   bench/seatmap.sh [CONNECTIONS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
source bench/lib.sh
connections=${1:-64}
seconds=${2:-10}
threads=$(nproc)
bench_setup

bench_scratch

start_serve --db "sqlite:$tmp/bench.db"
showtime=$(make_showtimes 1)
# A map mid-sale: 60 seats held by 30 customers.
for c in $(seq 2 31); do
  token=$(build/boxoffice token --jwt-secret "$bench_secret" --customer "$c")
  row=$(printf "\\x$(printf %x $((65 + c % 15)))")
  curl -sf -o /dev/null -X POST "$api/showtimes/$showtime/holds" -H "Authorization: Bearer $token" \
    -d "{\"seats\": [\"$row$((c / 15 * 2 + 1))\", \"$row$((c / 15 * 2 + 2))\"]}"
done
path="/showtimes/$showtime/seats"
save_map_for_nginx "$path"
bytes=$(stat -c %s "$tmp/www$path")
start_nginx "$path"

loads() { metric 'boxoffice_seatmap_cache_total{outcome="loaded"}'; }
echo "seat map: $bytes bytes, showtime $showtime; $connections connections, $threads client threads, ${seconds}s each" >&2
before=$(loads)
ours=$(build/boxoffice-bench get --port "${api##*:}" --path "$path" --connections "$connections" \
  --threads "$threads" --seconds "$seconds" --name seatmap)
after=$(loads)
ref=$(build/boxoffice-bench get --port "$nginx_port" --path "$path" --connections "$connections" \
  --threads "$threads" --seconds "$seconds" --name seatmap_nginx)
echo "$ours"
echo "$ref"
# Open loop: both at half of nginx's closed-loop rate, latency counted from when each
# request was due, so a server that falls behind shows it.
rate=$(awk -v r="$(field rps "$ref")" 'BEGIN { printf "%d", r / 2 }')
build/boxoffice-bench get --port "${api##*:}" --path "$path" --connections "$connections" \
  --threads "$threads" --seconds "$seconds" --rate "$rate" --name seatmap_open
build/boxoffice-bench get --port "$nginx_port" --path "$path" --connections "$connections" \
  --threads "$threads" --seconds "$seconds" --rate "$rate" --name seatmap_nginx_open
# The same comparison with wrk as the client.
ours_wrk=$(wrk_result seatmap_wrk "$api$path" "$connections" "$threads" "$seconds")
ref_wrk=$(wrk_result seatmap_nginx_wrk "http://127.0.0.1:$nginx_port$path" "$connections" "$threads" "$seconds")
echo "$ours_wrk"
echo "$ref_wrk"
awk -v a="$(field rps "$ours_wrk")" -v b="$(field rps "$ref_wrk")" 'BEGIN { printf "ratio seatmap_vs_nginx_wrk %.2f\n", a / b }'
queries=$(awk -v a="$after" -v b="$before" 'BEGIN { print a - b }')
echo "result seatmap_store queries=$queries per_second=$(awk -v q="$queries" -v s="$seconds" 'BEGIN { printf "%.2f", q / s }')"
awk -v a="$(field rps "$ours")" -v b="$(field rps "$ref")" 'BEGIN { printf "ratio seatmap_vs_nginx %.2f\n", a / b }'
