#!/usr/bin/env bash
# Starts boxoffice on the embedded default (SQLite in var/) with demo data and prints
# tokens to try it with. Ctrl-C stops it.
set -euo pipefail
cd "$(dirname "$0")/.."

export BOXOFFICE_DB=${BOXOFFICE_DB:-sqlite:var/boxoffice.db}
export BOXOFFICE_JWT_SECRET=${BOXOFFICE_JWT_SECRET:-dev-only-secret-change-me-in-production-0001}
export BOXOFFICE_LISTEN=${BOXOFFICE_LISTEN:-127.0.0.1:8080}

build/boxoffice seed --demo
customer=$(build/boxoffice token --customer 42 --ttl 24h)
admin=$(build/boxoffice token --customer 1 --admin --ttl 24h)
cat <<TXT

boxoffice on http://$BOXOFFICE_LISTEN  (database $BOXOFFICE_DB)
  curl -s http://$BOXOFFICE_LISTEN/showtimes?limit=3
  curl -s http://$BOXOFFICE_LISTEN/showtimes/1/seats
  curl -s -X POST http://$BOXOFFICE_LISTEN/showtimes/1/holds \\
       -H "Authorization: Bearer $customer" -d '{"seats": ["A5", "A6"]}'
Customer 42 token: $customer
Admin token:       $admin

TXT
exec build/boxoffice serve
