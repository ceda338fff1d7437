#!/usr/bin/env bash
# The seat map of a hot 300-seat showtime served by boxoffice (from its per-instance cache)
# against nginx serving the same bytes as a static file: the same client
# (boxoffice-bench), the same concurrency, in one run, so the ratio means something on a
# shared, noisy machine. Also reports the store queries boxoffice made meanwhile.
#   bench/seatmap.sh [CONNECTIONS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
connections=${1:-64}
seconds=${2:-10}
threads=$(nproc)

scripts/deps.sh bench
cmake --build build --target boxoffice boxoffice-bench >/dev/null

tmp=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

secret=bench-secret-bench-secret-bench-secret-01
port=$(free_port)
build/boxoffice serve --db "sqlite:$tmp/bench.db" --listen "127.0.0.1:$port" \
  --jwt-secret "$secret" --events-file "$tmp/events.jsonl" 2>"$tmp/serve.log" &
pids+=($!)
for _ in $(seq 1 100); do
  curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break
  sleep 0.1
done
api="http://127.0.0.1:$port"
admin=$(build/boxoffice token --jwt-secret "$secret" --customer 1 --admin)
rows=$(for r in A B C D E F G H I J K L M N O; do printf '{"row":"%s","seats":20,"category":"standard"},' "$r"; done)
showtime=$(curl -sf -X POST "$api/admin/showtimes" -H "Authorization: Bearer $admin" -d "{
  \"title\": \"Premiere\", \"cinema\": \"Bench\", \"hall\": \"1\",
  \"startsAt\": \"2030-01-01T20:00:00.000Z\", \"rows\": [${rows%,}],
  \"prices\": {\"standard\": {\"amount\": 1250, \"currency\": \"EUR\"}}}" |
  sed -E 's/.*"showtimeId":([0-9]+).*/\1/')
# A map mid-sale: 60 seats held by 30 customers.
for c in $(seq 2 31); do
  token=$(build/boxoffice token --jwt-secret "$secret" --customer "$c")
  row=$(printf "\\x$(printf %x $((65 + c % 15)))")
  curl -sf -o /dev/null -X POST "$api/showtimes/$showtime/holds" -H "Authorization: Bearer $token" \
    -d "{\"seats\": [\"$row$((c / 15 * 2 + 1))\", \"$row$((c / 15 * 2 + 2))\"]}"
done
path="/showtimes/$showtime/seats"
mkdir -p "$tmp/www$(dirname "$path")"
curl -sf "$api$path" -o "$tmp/www$path"
bytes=$(stat -c %s "$tmp/www$path")
chmod -R a+rX "$tmp"  # nginx's workers run as an unprivileged user

nginx_port=$(free_port)
cat >"$tmp/nginx.conf" <<CONF
worker_processes $threads;
pid $tmp/nginx.pid;
error_log $tmp/nginx.error.log;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
  keepalive_timeout 60s;
  default_type application/json;
  server {
    listen 127.0.0.1:$nginx_port;
    root $tmp/www;
    location / { add_header Cache-Control "public, max-age=1"; etag on; }
  }
}
CONF
nginx -c "$tmp/nginx.conf" -g 'daemon off;' &
pids+=($!)
for _ in $(seq 1 100); do
  curl -sf -o /dev/null "http://127.0.0.1:$nginx_port$path" && break
  sleep 0.1
done

loads() {
  curl -sf "$api/metrics" | awk '/^boxoffice_seatmap_cache_total\{outcome="loaded"\}/ {print $2}'
}
echo "seat map: $bytes bytes, showtime $showtime; $connections connections, $threads client threads, ${seconds}s each" >&2
before=$(loads)
ours=$(build/boxoffice-bench get --port "$port" --path "$path" --connections "$connections" \
  --threads "$threads" --seconds "$seconds" --name seatmap)
after=$(loads)
ref=$(build/boxoffice-bench get --port "$nginx_port" --path "$path" --connections "$connections" \
  --threads "$threads" --seconds "$seconds" --name seatmap_nginx)
echo "$ours"
echo "$ref"
queries=$(awk -v a="$after" -v b="$before" 'BEGIN { print a - b }')
echo "result seatmap_store queries=$queries per_second=$(awk -v q="$queries" -v s="$seconds" 'BEGIN { printf "%.2f", q / s }')"
rps() { sed -E 's/.* rps=([0-9.]+).*/\1/' <<<"$1"; }
echo "ratio seatmap_vs_nginx $(awk -v a="$(rps "$ours")" -v b="$(rps "$ref")" 'BEGIN { printf "%.2f\n", a / b }')"
