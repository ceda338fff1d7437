#!/usr/bin/env bash
# The operator's monitoring files, tested with the real tools (make check):
#   1. promtool checks deploy/prometheus/alerts.yml and runs its unit tests (alerts_test.yml);
#   2. every boxoffice_ metric the alerts and the Grafana dashboard (deploy/grafana/) name is
#      one a running `serve` exposes: serve on PostgreSQL with the Redis seat gate, a few
#      requests so that the per-route series exist, then its /metrics scraped. An unknown
#      name fails, and so does a route the queries select that the service never reports.
#   scripts/monitoring-test.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
fail() { echo "monitoring-test: $*" >&2; exit 1; }

# 1. The rules and their unit tests (then the rest again, with a PostgreSQL and a Redis).
if [ -z "${BOXOFFICE_TEST_PG_URL:-}" ] || [ -z "${BOXOFFICE_REDIS:-}" ]; then
  (cd deploy/prometheus && promtool check rules alerts.yml && promtool test rules alerts_test.yml)
  exec scripts/with-postgres.sh scripts/with-redis.sh "$0" "$build"
fi

# 2. The names, against a live serve.
source scripts/lib.sh
dir=$(mktemp -d /tmp/boxoffice-monitoring.XXXXXX)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
port=$(free_port)
secret=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
export BOXOFFICE_DB=$BOXOFFICE_TEST_PG_URL BOXOFFICE_JWT_SECRET=$secret
"$build/boxoffice" seed --demo >"$dir/seed.log" 2>&1 || { cat "$dir/seed.log" >&2; fail "seed"; }
# With --smtp (where nothing listens: the e-mail sender's metrics are there, its mail waits).
(cd "$dir" && exec "$OLDPWD/$build/boxoffice" serve --listen "127.0.0.1:$port" \
  --gateway-secret "$secret" --smtp "smtp://127.0.0.1:$(free_port)" >"$dir/serve.log" 2>&1) &
pid=$!
base=http://127.0.0.1:$port
for _ in $(seq 1 100); do
  curl -fsS "$base/readyz" >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || { cat "$dir/serve.log" >&2; fail "serve ended"; }
  sleep 0.1
done
curl -fsS "$base/readyz" >/dev/null || { cat "$dir/serve.log" >&2; fail "serve is not ready"; }
token=$("$build/boxoffice" token --customer 7)
showtime=$(curl -fsS "$base/showtimes" | python3 -c 'import json,sys; print(json.load(sys.stdin)["showtimes"][0]["showtimeId"])')
curl -fsS "$base/showtimes/$showtime/seats" >/dev/null
seat=$(curl -fsS "$base/showtimes/$showtime/seats" |
  python3 -c 'import json,sys; print(next(s["code"] for s in json.load(sys.stdin)["seats"] if s["status"] == "AVAILABLE"))')
curl -sS -o /dev/null -X POST "$base/showtimes/$showtime/holds" -H "Authorization: Bearer $token" \
  -H 'Content-Type: application/json' -d "{\"seats\": [\"$seat\"]}"
curl -fsS "$base/metrics" >"$dir/metrics.txt"

# The names the service exposes: every family it declares (histograms with their series).
python3 - "$dir/metrics.txt" deploy/prometheus/alerts.yml deploy/grafana/boxoffice.json <<'PY'
import json, re, sys
exposed, routes = set(), set()
for line in open(sys.argv[1]):
    m = re.match(r'# TYPE (\S+) (\S+)', line)
    if m:
        name, kind = m.groups()
        exposed.add(name)
        if kind == 'histogram':
            exposed.update(name + s for s in ('_bucket', '_sum', '_count'))
    m = re.match(r'boxoffice_http_requests_total\{route="([^"]*)"', line)
    if m:
        routes.add(m.group(1))
queries = {}
queries['alerts.yml'] = open(sys.argv[2]).read()
dash = json.load(open(sys.argv[3]))
queries['boxoffice.json'] = '\n'.join(t['expr'] for p in dash['panels'] for t in p.get('targets', []))
queries['boxoffice.json'] += '\n' + json.dumps(dash.get('templating', {}))
bad = []
for where, text in queries.items():
    for name in sorted(set(re.findall(r'\bboxoffice_[a-z0-9_]+', text))):
        if name not in exposed:
            bad.append(f'{where}: {name} is not a metric serve exposes')
    for route in sorted(set(re.findall(r'route="([^"]+)"', text))):
        if route not in routes:
            bad.append(f'{where}: route "{route}" is not one serve reports')
if bad:
    print('\n'.join(bad), file=sys.stderr)
    sys.exit(1)
print(f'monitoring-test: {len(exposed)} metric names exposed; every one the alerts and the dashboard name is among them')
PY
echo "monitoring-test: passed"
