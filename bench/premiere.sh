#!/usr/bin/env bash
# The premiere: 10 showtimes × 300 seats on sale at once in the production profile
# (PostgreSQL, the Redis gate, the fake payment gateway). Each connection is a customer who
# reads the seat map MAP_READS times, holds 1–8 adjacent seats, checks out, pays, and waits
# for the booking to be confirmed; then the next customer. Until everything is sold out.
# `boxoffice audit` checks the invariants afterwards. The reference is nginx serving the
# seat map's bytes (and its gzip and br files), read at the same concurrency by the same
# client. Then premiere_live: customers who read the map once and follow its stream.
# With STORE=sqlite, the embedded profile instead (SQLite, no Redis): the closed loop only,
# named premiere_sqlite.
#   bench/premiere.sh [CONNECTIONS] [SHOWTIMES] [MAP_READS] [STORE]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
source bench/lib.sh
with_postgres_and_redis "$0" "$@"
connections=${1:-500}
showtimes=${2:-10}
map_reads=${3:-30}
store=${4:-postgres}
name=premiere
[ "$store" = sqlite ] && name=premiere_sqlite
threads=$(nproc)
ulimit -n 65536 2>/dev/null || true
bench_scratch

start_gateway

redis-cli -u "$BOXOFFICE_REDIS" FLUSHALL >/dev/null
# Every customer holds once, so the per-customer rate limit never bites; it is raised only
# so that a lost hold's retry is not turned away.
if [ "$store" = sqlite ]; then
  db="sqlite:$tmp/premiere.db"
  start_serve --db "$db" \
    --gateway-url "http://127.0.0.1:$gateway_port" --gateway-secret "$gateway_secret" \
    --holds-per-minute 100000 --max-connections 100000
else
  db=$BOXOFFICE_TEST_PG_URL
  start_serve --db "$db" --redis "$BOXOFFICE_REDIS" \
    --gateway-url "http://127.0.0.1:$gateway_port" --gateway-secret "$gateway_secret" \
    --holds-per-minute 100000 --max-connections 100000
fi
first=$(make_showtimes "$showtimes")
[ "$store" = sqlite ] || statements_reset
# What the closed loop costs each part, in CPU (the rest of the machine's busy time is the
# load generator's and the kernel's).
cpu_before=$(cpu_snapshot "$serve_pid" "$gateway_pid")
echo "premiere: $showtimes showtimes × 300 seats, $connections connections, $map_reads map reads per hold, $threads client threads" >&2
ours=$(build/boxoffice-bench premiere --port "${api##*:}" --gateway-port "$gateway_port" \
  --showtime "$first" --showtimes "$showtimes" --connections "$connections" \
  --threads "$threads" --map-reads "$map_reads" --secret "$bench_secret" --seconds 240 \
  --max-seats 8 --name "$name") || true
echo "$ours"
cpu_after=$(cpu_snapshot "$serve_pid" "$gateway_pid")
open="sold_out=yes"
runs=1
if [ "$store" != sqlite ]; then
statements=$(statements_total)
bookings=$(psql -qAt "$BOXOFFICE_TEST_PG_URL" -c "SELECT count(*) FROM booking WHERE status = 'CONFIRMED'")
cpu_result "$name" purchases "$bookings" "serve postgres redis gateway machine_busy" \
  "$cpu_before" "$cpu_after" 1 ms_per_purchase
runs=2
# Open loop: customers due at half the rate at which the closed loop completed purchases,
# on showtimes of their own, so the latency is that of a service at half load, not of 500
# connections queueing. (Not half its customers_per_s: that counts every turn of a
# connection, most of which in the closed loop's crowd only read maps of a showtime
# already sold out or lose their hold, while nearly every open-loop customer buys; at half
# that rate the open loop bought as fast as the closed loop did, a full load.)
open_rate=$(awk -v r="$(field purchases_per_s "$ours")" 'BEGIN { printf "%d", r / 2 }')
# (A closed run that sold nothing leaves no rate: the open loop then runs at 1 customer/s
# rather than as a closed loop, which --rate 0 means.)
[ "${open_rate:-0}" -ge 1 ] || open_rate=1
open_first=$(make_showtimes "$showtimes")
open=$(build/boxoffice-bench premiere --port "${api##*:}" --gateway-port "$gateway_port" \
  --showtime "$open_first" --showtimes "$showtimes" --connections "$connections" \
  --threads "$threads" --map-reads "$map_reads" --secret "$bench_secret" --seconds 240 \
  --max-seats 8 --rate "$open_rate" --name premiere_open) || true
echo "$open"
echo "# premiere_open: worst p99 of any route $(grep '^result premiere_open_' <<<"$open" | sed -E 's/.* p99_ms=([0-9.]+).*/\1/' | sort -g | tail -1) ms at $open_rate customers/s"
# premiere_live: the closed loop again on fresh showtimes, each customer reading the map
# once and then following its seat-change stream, as the seat picker does (--live 1), and
# trying a lost hold again from that view; against the polling customers above.
runs=3
live_first=$(make_showtimes "$showtimes")
live=$(build/boxoffice-bench premiere --port "${api##*:}" --gateway-port "$gateway_port" \
  --showtime "$live_first" --showtimes "$showtimes" --connections "$connections" \
  --threads "$threads" --secret "$bench_secret" --seconds 240 --max-seats 8 --live 1 \
  --name premiere_live) || true
echo "$live"
grep -q "sold_out=yes" <<<"$live" || open="premiere_live not sold out"
awk -v a="$(field purchases_per_s "$live")" -v b="$(field purchases_per_s "$ours")" \
  'BEGIN { printf "ratio premiere_live_vs_polling %.2f\n", (b > 0 ? a / b : 0) }'
fi
path="/showtimes/$first/seats"
save_map_for_nginx "$path"
stop_serve
audit=$(build/boxoffice audit --db "$db" 2>/dev/null) && audited=0 || audited=1
echo "${audit/result audit/result ${name}_audit}"
if [ "$store" != sqlite ]; then
  # Every statement the sale cost (holds that lost, the customers' polling of their booking
  # and the jobs included), per booking confirmed.
  awk -v s="$statements" -v b="$bookings" 'BEGIN { if (b > 0) printf "ratio premiere_statements_per_purchase %.1f\n", s / b }'
  echo "# premiere: $statements statements for $bookings bookings"
fi

start_nginx "$path"
ref=$(build/boxoffice-bench get --port "$nginx_port" --path "$path" --connections "$connections" \
  --threads "$threads" --seconds 10 --name "${name}_nginx")
echo "$ref"
ours_rps=$(field rps "$(head -1 <<<"$ours")")
ratio_name=premiere_vs_nginx
[ "$store" = sqlite ] && ratio_name=premiere_sqlite_vs_nginx
awk -v n="$ratio_name" -v a="$ours_rps" -v b="$(field rps "$ref")" 'BEGIN { printf "ratio %s %.2f\n", n, a / b }'
# Sold out means every seat booked and paid, not only none left to hold.
booked=$(field seats_booked "$audit")
if ! grep -q "sold_out=yes" <<<"$ours" || ! grep -q "sold_out=yes" <<<"$open" ||
  [ "$booked" != $((runs * showtimes * 300)) ]; then
  echo "# $name: not sold out: ${booked:-no} of $((runs * showtimes * 300)) seats booked"
  exit 1
fi
exit "$audited"
