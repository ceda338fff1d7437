# Shared by the bench/*.sh scripts. Source it after scripts/lib.sh; its server functions
# expect $tmp (a scratch directory), and start_serve sets $api.

bench_secret=bench-secret-bench-secret-bench-secret-01

# What every benchmark needs first: the reference engines' packages and fresh binaries.
bench_setup() {
  scripts/deps.sh bench
  cmake --build build --target boxoffice boxoffice-bench >/dev/null
}

# Runs the calling script ("$0" "$@") again under a throwaway PostgreSQL and Redis, unless
# it already runs under them.
with_postgres_and_redis() {
  if [ -z "${BOXOFFICE_TEST_PG_URL:-}" ] || [ -z "${BOXOFFICE_REDIS:-}" ]; then
    bench_setup
    exec scripts/with-postgres.sh scripts/with-redis.sh "$@"
  fi
}

# Waits until URL answers 2xx (10 s at most).
wait_http() {
  for _ in $(seq 1 100); do
    curl -sf -o /dev/null "$1" && return 0
    sleep 0.1
  done
  echo "no answer from $1" >&2
  return 1
}

# Starts `serve` with the flags given (after the bench defaults) on a free port; sets $api
# and $serve_pid. BOXOFFICE_REDIS (set by with-redis.sh) would be read as --redis: only
# the flags decide.
start_serve() {
  local port
  port=$(free_port)
  env -u BOXOFFICE_REDIS build/boxoffice serve --listen "127.0.0.1:$port" \
    --jwt-secret "$bench_secret" --events-file "$tmp/events.jsonl" "$@" 2>"$tmp/serve.log" &
  serve_pid=$!
  api="http://127.0.0.1:$port"
  wait_http "$api/healthz" || { cat "$tmp/serve.log" >&2; return 1; }
}

stop_serve() {
  kill "$serve_pid"
  wait "$serve_pid" 2>/dev/null || true
  serve_pid=
}

# Creates $1 showtimes of 300 seats (15 rows × 20) through the API; prints the first id.
make_showtimes() {
  local admin rows first= id
  admin=$(build/boxoffice token --jwt-secret "$bench_secret" --customer 1 --admin)
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

# Serves the file $tmp/www$1 with nginx (one worker per core, keep-alive, no access log) on
# a free port; sets $nginx_port.
start_nginx() {
  nginx_port=$(free_port)
  chmod -R a+rX "$tmp"  # nginx's workers run as an unprivileged user
  cat >"$tmp/nginx.conf" <<CONF
worker_processes $(nproc);
pid $tmp/nginx.pid;
error_log $tmp/nginx.error.log;
events { worker_connections 16384; }
http {
  access_log off;
  keepalive_requests 1000000;
  keepalive_timeout 60s;
  default_type application/json;
  server {
    listen 127.0.0.1:$nginx_port backlog=4096;
    root $tmp/www;
    location / { add_header Cache-Control "public, max-age=1"; etag on; }
  }
}
CONF
  nginx -c "$tmp/nginx.conf" -g 'daemon off;' &
  nginx_pid=$!
  wait_http "http://127.0.0.1:$nginx_port$1"
}

# The value of key=… in a result line.
field() { sed -E "s/.* $1=([0-9.]+).*/\1/" <<<"$2"; }

# The value of one series of serve's /metrics, e.g. metric 'boxoffice_gate_total{outcome="rejected"}'.
metric() {
  curl -sf "$api/metrics" | awk -v s="$1" 'index($0, s " ") == 1 { print $2 }'
}
