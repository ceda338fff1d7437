#!/usr/bin/env bash
# Builds and runs every test: unit, store contract and end-to-end, on SQLite and on a
# throwaway PostgreSQL 15 started for the run (scripts/with-postgres.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

export BOXOFFICE_TEST_REQUIRE_PG=1
jobs=$(nproc 2>/dev/null || echo 2)
exec scripts/with-postgres.sh ctest --test-dir build --output-on-failure -j "$jobs" "$@"
