#!/usr/bin/env bash
# Cancelling full halls: SHOWTIMES showtimes of 300 seats sold out in single-seat bookings
# (300 bookings each) on PostgreSQL with the fake payment gateway, then each cancelled
# through the API. Measured: the cancel's answer (one transaction: the showtime, every
# booking REFUNDED with its refund intent and event, every seat freed), and how long the
# refund worker takes until the gateway has accepted every refund, followed in /metrics
# (boxoffice_cancelled_showtime_refunds). `boxoffice audit` checks the invariants after.
# The reference is pgbench's simple-update transaction (an UPDATE, a SELECT, an INSERT and
# a commit) from one client on the same PostgreSQL: the ratio says how many such
# transactions one booking's share of the cancel costs.
#   bench/cancel.sh [SHOWTIMES]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
source bench/lib.sh
with_postgres_and_redis "$0" "$@"
showtimes=${1:-3}
threads=$(nproc)
bench_scratch

start_gateway
db=$(schema_url bench_cancel)
start_serve --db "$db" \
  --gateway-url "http://127.0.0.1:$gateway_port" --gateway-secret "$gateway_secret" \
  --holds-per-minute 100000 --max-connections 100000
ids=$(make_showtime_ids "$showtimes")
first=${ids%%,*}
echo "cancel: selling $showtimes showtimes × 300 seats in single-seat bookings" >&2
sold=$(build/boxoffice-bench premiere --port "${api##*:}" --gateway-port "$gateway_port" \
  --showtime "$first" --showtimes "$showtimes" --connections 64 --threads "$threads" \
  --map-reads 1 --secret "$bench_secret" --seconds 240 --max-seats 1 --name cancel_sale) || true
grep -q "sold_out=yes" <<<"$sold" || { echo "$sold"; echo "# cancel: the halls did not sell out"; exit 1; }

admin=$(build/boxoffice token --jwt-secret "$bench_secret" --customer 1 --admin)
total_ms=0 total_bookings=0 worst_drain=0
for id in ${ids//,/ }; do
  bookings=$(psql -qAt "$db" -c "SELECT count(*) FROM booking WHERE showtime_id = $id AND status = 'CONFIRMED'")
  answer=$(curl -sf -o "$tmp/cancel.json" -w '%{http_code} %{time_total}' -X POST \
    "$api/admin/showtimes/$id/cancel" -H "Authorization: Bearer $admin" -d '{"reason": "bench"}')
  [ "${answer%% *}" = 202 ] || { echo "# cancel: $id answered ${answer%% *}"; exit 1; }
  ms=$(awk -v s="${answer#* }" 'BEGIN { printf "%.1f", s * 1000 }')
  refunded=$(sed -E 's/.*"bookingsRefunded":([0-9]+).*/\1/' "$tmp/cancel.json")
  [ "$refunded" = "$bookings" ] || { echo "# cancel: $id refunded $refunded of $bookings"; exit 1; }
  # Until every refund is issued at the gateway, as /metrics says.
  started=$(date +%s%N)
  drained=
  for _ in $(seq 1 1200); do
    issued=$(curl -sf "$api/metrics" | sed -nE "s/^boxoffice_cancelled_showtime_refunds\{showtime=\"$id\",state=\"issued\"\} ([0-9]+).*/\1/p")
    [ "${issued:-0}" = "$bookings" ] && { drained=$(( ($(date +%s%N) - started) / 1000000 )); break; }
    sleep 0.1
  done
  [ -n "$drained" ] || { echo "# cancel: $id: refunds not all issued after 120 s"; exit 1; }
  echo "result cancel_hall showtime=$id bookings=$bookings cancel_ms=$ms refunds_issued_ms=$drained"
  total_ms=$(awk -v a="$total_ms" -v b="$ms" 'BEGIN { print a + b }')
  total_bookings=$((total_bookings + bookings))
  [ "$drained" -gt "$worst_drain" ] && worst_drain=$drained
done
stop_serve
audit=$(build/boxoffice audit --db "$db" 2>/dev/null) && audited=0 || audited=1
echo "${audit/result audit/result cancel_audit}"

pg_bin=/usr/lib/postgresql/15/bin
ref_db=$(schema_url bench_cancel_ref)
"$pg_bin/pgbench" -q -i -s 1 "$ref_db" >/dev/null 2>&1
pgbench_out=$("$pg_bin/pgbench" -n -c 1 -T 10 -b simple-update "$ref_db" 2>&1)
tps=$(sed -nE 's/^tps = ([0-9.]+) \(without initial connection time\)/\1/p' <<<"$pgbench_out")
echo "result pgbench_simple_update clients=1 tps=$tps"
awk -v ms="$total_ms" -v n="$total_bookings" -v tps="$tps" 'BEGIN {
  printf "result cancel bookings=%d ms_per_booking=%.3f worst_refunds_issued_ms=%d\n", n, ms / n, '"$worst_drain"'
  printf "ratio cancel_booking_vs_pgbench_txn %.2f\n", (ms / n) / (1000 / tps) }'
exit "$audited"
