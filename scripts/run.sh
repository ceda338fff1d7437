#!/usr/bin/env bash
# Starts boxoffice on the embedded default (SQLite in var/) with demo data and prints
# tokens to try it with. Ctrl-C stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p var

export BOXOFFICE_DB=${BOXOFFICE_DB:-sqlite:var/boxoffice.db}
export BOXOFFICE_JWT_SECRET=${BOXOFFICE_JWT_SECRET:-dev-only-secret-change-me-in-production-0001}
export BOXOFFICE_LISTEN=${BOXOFFICE_LISTEN:-127.0.0.1:8080}
export BOXOFFICE_GATEWAY_SECRET=${BOXOFFICE_GATEWAY_SECRET:-dev-only-gateway-secret-0001}
gateway_listen=${GATEWAY_LISTEN:-127.0.0.1:9090}
export BOXOFFICE_GATEWAY_URL=${BOXOFFICE_GATEWAY_URL:-http://$gateway_listen}

# The stand-in payment gateway runs beside the service and stops with it.
build/boxoffice fake-gateway --listen "$gateway_listen" --secret "$BOXOFFICE_GATEWAY_SECRET" \
  --service-url "${BOXOFFICE_PUBLIC_URL:-http://$BOXOFFICE_LISTEN}" 2>var/fake-gateway.log &
gateway_pid=$!
trap 'kill $gateway_pid 2>/dev/null || true' EXIT

build/boxoffice seed --demo
customer=$(build/boxoffice token --customer 42 --ttl 24h)
second=$(build/boxoffice token --customer 43 --ttl 24h)
admin=$(build/boxoffice token --customer 1 --admin --ttl 24h)
door=$(build/boxoffice token --customer 900 --door --ttl 24h)
cat <<TXT

boxoffice on http://$BOXOFFICE_LISTEN  (database $BOXOFFICE_DB)

Open the seat picker in a browser (each link signs in one demo customer, for that tab):
  customer 42:  http://$BOXOFFICE_LISTEN/#token=$customer
  customer 43:  http://$BOXOFFICE_LISTEN/#token=$second
  (open both, side by side, and race for a seat)
  admin page:   http://$BOXOFFICE_LISTEN/#/admin?token=$admin
  door page:    http://$BOXOFFICE_LISTEN/door#token=$door
  (a bought booking's tickets are under "My bookings"; type a ticket's code at the door)

Or use the API with curl:
  curl -s http://$BOXOFFICE_LISTEN/showtimes?limit=3
  curl -s http://$BOXOFFICE_LISTEN/showtimes/1/seats
  curl -s -X POST http://$BOXOFFICE_LISTEN/showtimes/1/holds \\
       -H "Authorization: Bearer $customer" -d '{"seats": ["A5", "A6"]}'
Then pay for it (HOLD_ID from the answer above; SESSION_ID from the checkout's answer):
  curl -s -X POST http://$BOXOFFICE_LISTEN/holds/HOLD_ID/checkout \\
       -H "Authorization: Bearer $customer" -H "Idempotency-Key: order-1"
  curl -s -X POST $BOXOFFICE_GATEWAY_URL/v1/sessions/SESSION_ID/pay -d '{"outcome": "SUCCEEDED"}'
  curl -s http://$BOXOFFICE_LISTEN/bookings/BOOKING_ID -H "Authorization: Bearer $customer"
  curl -s http://$BOXOFFICE_LISTEN/bookings/BOOKING_ID/tickets -H "Authorization: Bearer $customer"
  curl -s -X POST http://$BOXOFFICE_LISTEN/checkin -H "Authorization: Bearer $door" \
       -d '{"code": "TICKET_CODE", "showtimeId": 1}'
Fake payment gateway on $BOXOFFICE_GATEWAY_URL (log: var/fake-gateway.log)
Customer 42 token: $customer
Admin token:       $admin

TXT
build/boxoffice serve
