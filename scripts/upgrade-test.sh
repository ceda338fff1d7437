#!/usr/bin/env bash
# A rolling upgrade on one PostgreSQL database: the previous release's `serve` (built from
# git) runs on its schema; the new `serve` starts beside it and migrates; both then sell
# from the same seats: a hold or checkout made by either is seen, refused or carried on by
# the other, the old one keeps working on the migrated schema, and `boxoffice audit` finds
# nothing wrong. docs/operations.md, "Upgrading".
#
#   scripts/upgrade-test.sh [PREVIOUS]   (a commit or tag; default: scripts/previous-release)
#
# The previous binary is built into build-previous/ (its source from `git archive`, a
# release build of the one target); UPGRADE_PREVIOUS_BIN=PATH uses a binary already built.
set -euo pipefail
cd "$(dirname "$0")/.."
previous=${1:-$(grep -v '^#' scripts/previous-release | head -1)}
new=$(pwd)/build/boxoffice
[ -x "$new" ] || { echo "upgrade-test: $new not built (make build)" >&2; exit 1; }
fail() { echo "upgrade-test: $*" >&2; exit 1; }

old=${UPGRADE_PREVIOUS_BIN:-}
if [ -z "$old" ]; then
  commit=$(git rev-parse --short "$previous^{commit}") || fail "no commit $previous (a clone with its history is needed)"
  src=build-previous/src-$commit
  if [ ! -x "$src/build/boxoffice" ]; then
    echo "upgrade-test: building the previous release $commit into $src"
    rm -rf "$src" && mkdir -p "$src"
    git archive "$commit" | tar -x -C "$src"
    (cd "$src" && scripts/configure.sh build -DCMAKE_BUILD_TYPE=Release >/dev/null &&
      cmake --build build -j "$(nproc)" --target boxoffice >/dev/null)
  fi
  old=$(pwd)/$src/build/boxoffice
fi

old=$(realpath "$old")
if [ -z "${BOXOFFICE_TEST_PG_URL:-}" ]; then
  UPGRADE_PREVIOUS_BIN=$old exec scripts/with-postgres.sh "$0" "$previous"
fi
source scripts/lib.sh
dir=$(mktemp -d /tmp/boxoffice-upgrade.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

secret=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
gateway_secret=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
export BOXOFFICE_DB=$BOXOFFICE_TEST_PG_URL BOXOFFICE_JWT_SECRET=$secret
gw_port=$(free_port)
old_port=$(free_port)
new_port=$(free_port)
while [ "$new_port" = "$old_port" ] || [ "$new_port" = "$gw_port" ]; do new_port=$(free_port); done

await() {  # URL PID LOG
  for _ in $(seq 1 150); do
    curl -fsS "$1" >/dev/null 2>&1 && return 0
    kill -0 "$2" 2>/dev/null || { cat "$3" >&2; fail "$3: the process ended"; }
    sleep 0.1
  done
  cat "$3" >&2
  fail "no answer from $1"
}
call() {  # METHOD PORT PATH TOKEN [BODY] [extra curl args]: prints "STATUS BODY"
  local method=$1 port=$2 path=$3 token=$4 body=${5:-}
  shift 5 || shift $#
  curl -sS -o "$dir/body" -w '%{http_code}' -X "$method" "http://127.0.0.1:$port$path" \
    -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    ${body:+-d "$body"} "$@"
  echo " $(cat "$dir/body")"
}
expect() {  # WANT "STATUS BODY" WHAT
  [ "${2%% *}" = "$1" ] || fail "$3: expected $1, got $2"
  echo "upgrade-test: $3: $1"
}
field() { python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(eval("d" + sys.argv[2]))' "${1#* }" "$2"; }

echo "upgrade-test: previous $("$old" --version 2>/dev/null || echo "(no --version: older than 0.1.0)"), new $("$new" --version)"
"$new" fake-gateway --port "$gw_port" --secret "$gateway_secret" \
  --service-url "http://127.0.0.1:$old_port" --service-url "http://127.0.0.1:$new_port" >"$dir/gateway.log" 2>&1 &
pids+=($!)
await "http://127.0.0.1:$gw_port/healthz" "$!" "$dir/gateway.log"

# The previous release alone: its schema, a demo cinema, a hold.
"$old" migrate >"$dir/old-migrate.log" 2>&1 || { cat "$dir/old-migrate.log" >&2; fail "previous migrate"; }
"$old" seed --demo >"$dir/seed.log" 2>&1 || { cat "$dir/seed.log" >&2; fail "previous seed"; }
serve_flags=(--gateway-url "http://127.0.0.1:$gw_port" --gateway-secret "$gateway_secret")
(cd "$dir" && exec "$old" serve --listen "127.0.0.1:$old_port" "${serve_flags[@]}" >"$dir/old.log" 2>&1) &
pids+=($!)
old_pid=$!
await "http://127.0.0.1:$old_port/readyz" "$old_pid" "$dir/old.log"
t1=$("$new" token --customer 101)
t2=$("$new" token --customer 102)
t3=$("$new" token --customer 103)
showtime=$(curl -fsS "http://127.0.0.1:$old_port/showtimes" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["showtimes"][0]["showtimeId"])')
seats=($(curl -fsS "http://127.0.0.1:$old_port/showtimes/$showtime/seats" |
  python3 -c 'import json,sys; print(" ".join([s["code"] for s in json.load(sys.stdin)["seats"] if s["status"] == "AVAILABLE"][:6]))'))
[ ${#seats[@]} = 6 ] || fail "the demo showtime has fewer than 6 free seats"
r=$(call POST "$old_port" "/showtimes/$showtime/holds" "$t1" "{\"seats\": [\"${seats[0]}\"]}")
expect 201 "$r" "previous release alone: a hold"
hold_before=$(field "$r" '["holdId"]')

# The new release starts beside it and migrates the database under it.
(cd "$dir" && exec "$new" serve --listen "127.0.0.1:$new_port" "${serve_flags[@]}" >"$dir/new.log" 2>&1) &
pids+=($!)
new_pid=$!
await "http://127.0.0.1:$new_port/readyz" "$new_pid" "$dir/new.log"
applied=$(grep -c '"migration applied"' "$dir/new.log" || true)
echo "upgrade-test: the new release applied $applied migration(s) while the previous one served"
kill -0 "$old_pid" || fail "the previous release stopped when the new one migrated"

# Both sell from the same seats.
expect 409 "$(call POST "$new_port" "/showtimes/$showtime/holds" "$t2" "{\"seats\": [\"${seats[0]}\"]}")" \
  "new refuses a seat the previous release held"
r=$(call POST "$new_port" "/showtimes/$showtime/holds" "$t2" "{\"seats\": [\"${seats[1]}\"]}")
expect 201 "$r" "new: a hold"
hold_new=$(field "$r" '["holdId"]')
expect 409 "$(call POST "$old_port" "/showtimes/$showtime/holds" "$t3" "{\"seats\": [\"${seats[1]}\"]}")" \
  "previous refuses a seat the new release held"
r=$(call POST "$old_port" "/showtimes/$showtime/holds" "$t3" "{\"seats\": [\"${seats[2]}\", \"${seats[3]}\"]}")
expect 201 "$r" "previous, on the migrated schema: a hold"
hold_old=$(field "$r" '["holdId"]')
expect 200 "$(call GET "$new_port" "/holds/$hold_before" "$t1" "")" "new reads the hold made before the upgrade"
expect 200 "$(call POST "$old_port" "/holds/$hold_new/extend" "$t2" "")" "previous extends a hold the new release made"
expect 200 "$(call POST "$new_port" "/holds/$hold_old/extend" "$t3" "")" "new extends a hold the previous release made"

# Checkout on either, paid, confirmed; each reads the other's booking.
r=$(call POST "$old_port" "/holds/$hold_before/checkout" "$t1" "" -H "Idempotency-Key: upgrade-1")
expect 201 "$r" "previous: a checkout of the hold made before the upgrade"
booking1=$(field "$r" '["bookingId"]')
session1=$(field "$r" '["payment"]["sessionId"]')
r=$(call POST "$new_port" "/holds/$hold_old/checkout" "$t3" "" -H "Idempotency-Key: upgrade-2")
expect 201 "$r" "new: a checkout of a hold the previous release made"
booking2=$(field "$r" '["bookingId"]')
session2=$(field "$r" '["payment"]["sessionId"]')
for session in "$session1" "$session2"; do
  curl -fsS -X POST "http://127.0.0.1:$gw_port/v1/sessions/$session/pay" \
    -H 'Content-Type: application/json' -d '{"outcome": "SUCCEEDED", "delivery": "normal"}' >/dev/null
done
confirmed() {  # PORT TOKEN BOOKING
  for _ in $(seq 1 100); do
    [ "$(field "$(call GET "$1" "/bookings/$3" "$2" "")" '["status"]')" = CONFIRMED ] && return 0
    sleep 0.1
  done
  fail "booking $3 not CONFIRMED through port $1"
}
confirmed "$new_port" "$t1" "$booking1" && echo "upgrade-test: new reads the previous release's booking CONFIRMED"
confirmed "$old_port" "$t3" "$booking2" && echo "upgrade-test: previous reads the new release's booking CONFIRMED"

# The previous release stops (the rolling restart's last step); the new one serves on.
kill -TERM "$old_pid"
wait "$old_pid" 2>/dev/null || true
expect 201 "$(call POST "$new_port" "/showtimes/$showtime/holds" "$t2" "{\"seats\": [\"${seats[4]}\"]}")" \
  "new alone after the previous release stopped: a hold"
"$new" audit >"$dir/audit.txt" 2>"$dir/audit.log" || { cat "$dir/audit.txt" "$dir/audit.log" >&2; fail "audit found violations"; }
grep '^result audit ' "$dir/audit.txt"
echo "upgrade-test: passed"
