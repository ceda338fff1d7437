#!/usr/bin/env bash
# Hold throughput on a hot 300-seat showtime, with and without the Redis seat gate, on a
# throwaway PostgreSQL and Redis: bench/gate.sh [THREADS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --build build --target gate-bench >/dev/null
exec scripts/with-postgres.sh scripts/with-redis.sh build/gate-bench "${1:-64}" "${2:-5}"
