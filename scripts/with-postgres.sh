#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL 15 cluster: initdb into a temporary directory,
# a free loopback port, torn down afterwards whatever the command's outcome.
# The command sees BOXOFFICE_TEST_PG_URL=postgresql://boxoffice@127.0.0.1:PORT/boxoffice.
set -euo pipefail

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
[ -x "$PG_BIN/initdb" ] || { echo "with-postgres: $PG_BIN/initdb not found (apt-get install postgresql-15)" >&2; exit 1; }

dir=$(mktemp -d /tmp/boxoffice-pg.XXXXXX)
chmod 755 "$dir"
# PostgreSQL refuses to run as root: run the server as the postgres user when we are root.
as_pg=()
if [ "$(id -u)" = 0 ]; then
  chown postgres: "$dir"
  as_pg=(runuser -u postgres --)
fi

source "$(dirname "$0")/lib.sh"
port=$(free_port)

cleanup() {
  "${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT

"${as_pg[@]}" "$PG_BIN/initdb" -D "$dir/data" -U boxoffice -A trust -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 \
  || { cat "$dir/initdb.log" >&2; exit 1; }
# Tests need speed, not durability: fsync off. max_connections covers 64-thread races.
"${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
  -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c fsync=off \
      -c synchronous_commit=off -c full_page_writes=off -c max_connections=300 -c shared_buffers=256MB ${BOXOFFICE_PG_OPTIONS:-}" \
  start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
"${as_pg[@]}" "$PG_BIN/createdb" -h 127.0.0.1 -p "$port" -U boxoffice boxoffice

export BOXOFFICE_TEST_PG_URL="postgresql://boxoffice@127.0.0.1:$port/boxoffice"
echo "with-postgres: PostgreSQL on 127.0.0.1:$port" >&2
"$@"
