#!/usr/bin/env bash
# Memory of the seat-map cache under an anonymous crawl (docs/operations.md, "Memory"):
# `serve` on SQLite with SHOWTIMES showtimes of 1,000 seats (40 rows × 25), every seat map
# read once, as a crawler would, then read again; the process's RSS before the crawl, after
# it and after the second pass, for each --seat-map-cache-bytes given.
#
#   bench/seatmap_memory.sh [SHOWTIMES] [CACHE_BYTES...]   (default: 1230; 33554432)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib.sh
source scripts/lib.sh
# shellcheck source=bench/lib.sh
source bench/lib.sh

showtimes=${1:-1230}
shift || true
budgets=("$@")
[ ${#budgets[@]} -gt 0 ] || budgets=(33554432)
bench_setup
bench_scratch

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$serve_pid/status"; }

for budget in "${budgets[@]}"; do
  rm -f "$tmp"/crawl.db*
  start_serve --db "sqlite:$tmp/crawl.db" --seat-map-cache-bytes "$budget"
  admin=$(build/boxoffice token --jwt-secret "$bench_secret" --customer 1 --admin)
  rows=$(for r in A B C D E F G H I J K L M N O P Q R S T U V W X Y Z AA AB AC AD AE AF AG AH AI AJ AK AL AM AN; do
    printf '{"row":"%s","seats":25,"category":"standard"},' "$r"; done)
  body="{\"title\": \"Crawl\", \"cinema\": \"Bench\", \"hall\": \"1\",
    \"startsAt\": \"2099-01-01T20:00:00.000Z\", \"rows\": [${rows%,}],
    \"prices\": {\"standard\": {\"amount\": 1250, \"currency\": \"EUR\"}}}"
  ids=()
  for _ in $(seq 1 "$showtimes"); do
    ids+=("$(curl -sf -X POST "$api/admin/showtimes" -H "Authorization: Bearer $admin" -d "$body" |
      sed -E 's/.*"showtimeId":([0-9]+).*/\1/')")
  done
  before=$(rss_kb)
  for id in "${ids[@]}"; do curl -sf -o /dev/null "$api/showtimes/$id/seats"; done
  after=$(rss_kb)
  for id in "${ids[@]}"; do curl -sf -o /dev/null "$api/showtimes/$id/seats"; done
  again=$(rss_kb)
  cached=$(curl -sf "$api/metrics" | awk '/^boxoffice_seatmap_cache_bytes / {print $2}')
  entries=$(curl -sf "$api/metrics" | awk '/^boxoffice_seatmap_cache_entries / {print $2}')
  echo "seatmap_memory showtimes=$showtimes cache_bytes=$budget rss_before_kb=$before" \
    "rss_after_crawl_kb=$after rss_after_second_crawl_kb=$again cache_bytes_used=$cached" \
    "cache_entries=$entries"
  stop_serve
done
