# Shared by the bench/*.sh scripts. Source it after scripts/lib.sh; its server functions
# expect $tmp (a scratch directory), and start_serve sets $api.

bench_secret=bench-secret-bench-secret-bench-secret-01

# What every benchmark needs first: the reference engines' packages and fresh binaries.
bench_setup() {
  scripts/deps.sh bench
  cmake --build build --target boxoffice boxoffice-bench >/dev/null
}

# A scratch directory ($tmp), removed on exit after every process the script started is
# ended: those whose pids it keeps in serve_pid, nginx_pid, gateway_pid and buyers_pid.
bench_scratch() {
  tmp=$(mktemp -d)
  serve_pid=
  nginx_pid=
  gateway_pid=
  buyers_pid=
  trap bench_cleanup EXIT
}
bench_cleanup() {
  local pid
  for pid in $serve_pid $nginx_pid $gateway_pid $buyers_pid; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}

# Runs the calling script ("$0" "$@") again under a throwaway PostgreSQL and Redis, unless
# it already runs under them.
with_postgres_and_redis() {
  if [ -z "${BOXOFFICE_TEST_PG_URL:-}" ] || [ -z "${BOXOFFICE_REDIS:-}" ]; then
    bench_setup
    # pg_stat_statements counts the statements each scenario costs the database.
    export BOXOFFICE_PG_OPTIONS="-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=top"
    exec scripts/with-postgres.sh scripts/with-redis.sh "$@"
  fi
}

# A fresh schema of the benchmark's PostgreSQL, as a URL: each run starts from an empty
# database.
schema_url() {
  /usr/lib/postgresql/15/bin/psql -q "$BOXOFFICE_TEST_PG_URL" \
    -c "DROP SCHEMA IF EXISTS $1 CASCADE; CREATE SCHEMA $1" >/dev/null
  local sep='?'
  [[ "$BOXOFFICE_TEST_PG_URL" == *\?* ]] && sep='&'
  echo "$BOXOFFICE_TEST_PG_URL${sep}options=-csearch_path%3D$1"
}

# Waits until URL answers 2xx (30 s at most: the machine may still be busy with the last
# scenario's servers going down).
wait_http() {
  for _ in $(seq 1 300); do
    curl -sf -o /dev/null "$1" && return 0
    sleep 0.1
  done
  echo "no answer from $1" >&2
  return 1
}

# Starts `serve` with the flags given (after the bench defaults, and before any in
# $BENCH_SERVE_FLAGS, for trying settings) on a free port; sets $api and $serve_pid.
# BOXOFFICE_REDIS (set by with-redis.sh) would be read as --redis: only the flags decide.
start_serve() {
  local port
  port=$(free_port)
  # shellcheck disable=SC2086 # BENCH_SERVE_FLAGS is a list of words
  env -u BOXOFFICE_REDIS build/boxoffice serve --listen "127.0.0.1:$port" \
    --jwt-secret "$bench_secret" --events-file "$tmp/events.jsonl" "$@" ${BENCH_SERVE_FLAGS:-} \
    2>"$tmp/serve.log" &
  serve_pid=$!
  api="http://127.0.0.1:$port"
  wait_http "$api/healthz" || { cat "$tmp/serve.log" >&2; return 1; }
}

# Starts the fake payment gateway (its flags after these) on a free port with
# $gateway_secret; sets $gateway_port and $gateway_pid.
gateway_secret=bench-gateway-secret-0001
start_gateway() {
  gateway_port=$(free_port)
  build/boxoffice fake-gateway --listen "127.0.0.1:$gateway_port" --secret "$gateway_secret" \
    "$@" 2>"$tmp/gateway.log" &
  gateway_pid=$!
  wait_http "http://127.0.0.1:$gateway_port/healthz"
}

stop_serve() {
  kill "$serve_pid"
  wait "$serve_pid" 2>/dev/null || true
  serve_pid=
}

# Creates $1 showtimes of 300 seats (15 rows × 20) through the API at $api, as an admin of
# $bench_secret; prints their ids, separated by commas (on shards they are not consecutive).
make_showtime_ids() {
  local admin rows ids= id
  admin=$(build/boxoffice token --jwt-secret "$bench_secret" --customer 1 --admin)
  rows=$(for r in A B C D E F G H I J K L M N O; do printf '{"row":"%s","seats":20,"category":"standard"},' "$r"; done)
  for _ in $(seq 1 "$1"); do
    id=$(curl -sf -X POST "$api/admin/showtimes" -H "Authorization: Bearer $admin" -d "{
      \"title\": \"Premiere\", \"cinema\": \"Bench\", \"hall\": \"1\",
      \"startsAt\": \"2030-01-01T20:00:00.000Z\", \"rows\": [${rows%,}],
      \"prices\": {\"standard\": {\"amount\": 1250, \"currency\": \"EUR\"}}}" |
      sed -E 's/.*"showtimeId":([0-9]+).*/\1/')
    ids="$ids${ids:+,}$id"
  done
  echo "$ids"
}

# The same on one database, whose ids follow each other; prints the first id.
make_showtimes() {
  local ids
  ids=$(make_showtime_ids "$1")
  echo "${ids%%,*}"
}

# The seat map at path $1 as boxoffice at $api serves it, in each coding, saved for nginx:
# $tmp/www$1, and beside it $1.gz and $1.br (the very bytes boxoffice sends for gzip and
# br), so nginx's gzip_static and brotli_static serve the same files.
save_map_for_nginx() {
  local file="$tmp/www$1"
  mkdir -p "$(dirname "$file")"
  curl -sf "$api$1" -o "$file"
  curl -sf -H 'Accept-Encoding: gzip' "$api$1" -o "$file.gz"
  curl -sf -H 'Accept-Encoding: br' "$api$1" -o "$file.br"
  echo "# seat map for nginx: $(stat -c %s "$file") bytes, gzip $(stat -c %s "$file.gz"), br $(stat -c %s "$file.br")" >&2
}

# Serves the file $tmp/www$1 with nginx (one worker per core, keep-alive, no access log) on
# a free port, and its precompressed forms ($1.gz, $1.br beside it, if any) to the clients
# that accept them (gzip_static, and brotli_static from libnginx-mod-http-brotli-static);
# sets $nginx_port.
nginx_brotli=/usr/lib/nginx/modules/ngx_http_brotli_static_module.so
start_nginx() {
  nginx_port=$(free_port)
  chmod -R a+rX "$tmp"  # nginx's workers run as an unprivileged user
  [ -f "$nginx_brotli" ] || { echo "bench: $nginx_brotli is missing (scripts/deps.sh bench)" >&2; return 1; }
  cat >"$tmp/nginx.conf" <<CONF
load_module $nginx_brotli;
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
    location / {
      add_header Cache-Control "public, max-age=1"; etag on;
      gzip_static on; gzip_vary on; brotli_static on;
    }
  }
}
CONF
  nginx -c "$tmp/nginx.conf" -g 'daemon off;' &
  nginx_pid=$!
  wait_http "http://127.0.0.1:$nginx_port$1"
}

# The value of key=… in the first result line of $2.
field() { grep -m1 '^result ' <<<"$2" | sed -E "s/.* $1=([0-9.]+).*/\1/"; }

# The value of one series of serve's /metrics, e.g. metric 'boxoffice_gate_total{outcome="rejected"}'.
metric() {
  curl -sf "$api/metrics" | awk -v s="$1" 'index($0, s " ") == 1 { print $2 }'
}

# Reads latencies in microseconds, one per line, and prints the `result NAME …` line (with
# EXTRA appended) and the `latency NAME …` spectrum that boxoffice-bench prints for its own
# routes, so a reference engine's latency sits in the same table and plot:
#   latency_lines NAME SECONDS EXTRA <values
latency_lines() {
  sort -n | awk -v name="$1" -v seconds="$2" -v extra="$3" '
    { v[NR] = $1 }
    function at(q,   i) { i = int(q * NR); if (i < q * NR) i++; if (i < 1) i = 1; return v[i] / 1000 }
    END {
      if (NR == 0) exit
      printf "result %s requests=%d rps=%.0f p50_ms=%.2f p90_ms=%.2f p99_ms=%.2f p999_ms=%.2f max_ms=%.2f errors=0%s\n",
        name, NR, NR / seconds, at(0.5), at(0.9), at(0.99), at(0.999), v[NR] / 1000, extra
      printf "latency %s", name
      for (k = 0; k <= 40; k++) { q = 1 - 10 ^ (-k / 10); printf " %.6g=%.3f", 100 * q, at(q) }
      printf " 100=%.3f\n", v[NR] / 1000
    }'
}

# CPU time (user + system) in ms spent so far by the processes whose pids are given; a
# pid that is gone counts 0. With `tree PID`: that process, its children that exited (it
# waited for them) and those alive, so a server's workers that come and go all count
# (PostgreSQL's backends: `tree "$(pgrep -o -x postgres)"`, the postmaster being the
# oldest). With `machine`: the busy time of every core. Throughput on a shared machine
# swings by a third between runs; the CPU a scenario costs per unit of work much less.
cpu_ms() {
  local ticks=0 pid
  local pids=("$@")
  case "$1" in
    machine)
      ticks=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat)
      pids=()
      ;;
    tree)
      ticks=$(awk '{ print $16 + $17 }' "/proc/$2/stat" 2>/dev/null || echo 0)
      mapfile -t pids < <(echo "$2"; pgrep -P "$2" || true)
      ;;
  esac
  for pid in "${pids[@]}"; do
    ticks=$((ticks + $(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || echo 0)))
  done
  echo $((ticks * 1000 / $(getconf CLK_TCK)))
}

# The CPU spent so far by serve (pid $1), PostgreSQL, Redis and the pids after $1, then the
# machine's busy time, in ms: one line of numbers for cpu_result.
cpu_snapshot() {
  local serve=$1 pid others=()
  shift
  for pid in "$@"; do others+=("$(cpu_ms "$pid")"); done
  echo "$(cpu_ms "$serve") $(cpu_ms tree "$(pgrep -o -x postgres)")" \
    "$(cpu_ms tree "$(pgrep -o -x redis-server)") ${others[*]} $(cpu_ms machine)"
}

# `result NAME_cpu UNIT=COUNT part_ms=… … part_PER_UNIT=…` from two cpu_snapshot lines:
#   cpu_result NAME UNIT COUNT "serve postgres redis [others…] machine_busy" BEFORE AFTER SCALE PER
# with each part's CPU per unit scaled by SCALE and named PER (1 ms_per_purchase, 1000
# us_per_attempt); the machine's busy time is given whole only.
cpu_result() {
  awk -v name="$1" -v unit="$2" -v n="$3" -v parts="$4" -v before="$5" -v after="$6" \
    -v scale="$7" -v per="$8" 'BEGIN {
    k = split(parts, part, " "); split(before, x, " "); split(after, y, " ")
    line = "result " name "_cpu " unit "=" n
    for (i = 1; i <= k; i++) line = line sprintf(" %s_ms=%d", part[i], y[i] - x[i])
    for (i = 1; i < k; i++) if (n > 0) line = line sprintf(" %s_%s=%.2f", part[i], per, scale * (y[i] - x[i]) / n)
    print line
  }'
}

# pg_stat_statements from now on (the extension is created on first use).
statements_reset() {
  psql -qAt "$BOXOFFICE_TEST_PG_URL" -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" \
    -c "SELECT pg_stat_statements_reset()" >/dev/null
}

# Statements run since statements_reset (every client, the jobs included; not these
# queries), and the ten most called with their total execution time, on stderr.
statements_total() {
  psql -qAt "$BOXOFFICE_TEST_PG_URL" -c "SELECT left(regexp_replace(query, '\s+', ' ', 'g'), 90), calls,
    round(total_exec_time::numeric, 1) AS total_ms
    FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%' ORDER BY calls DESC LIMIT 10" >&2
  psql -qAt "$BOXOFFICE_TEST_PG_URL" -c "SELECT COALESCE(sum(calls), 0) FROM pg_stat_statements
    WHERE query NOT LIKE '%pg_stat_statements%'"
}

# wrk (Debian's) against a URL: a result line NAME with its requests/s and p99, so the ratio
# against nginx does not rest on our own load generator alone.
wrk_result() {
  local name=$1 url=$2 connections=$3 threads=$4 seconds=$5 out
  out=$(wrk -t"$threads" -c"$connections" -d"${seconds}s" --latency -H 'Accept-Encoding: gzip, br' "$url")
  awk -v name="$name" '
    /Requests\/sec:/ { rps = $2 }
    $1 == "99%" { v = $2; unit = v; sub(/[0-9.]+/, "", unit); sub(/[a-z]+$/, "", v)
                  p99 = unit == "us" ? v / 1000 : unit == "s" ? v * 1000 : v }
    END { printf "result %s rps=%.0f p99_ms=%.2f client=wrk\n", name, rps, p99 }' <<<"$out"
}

