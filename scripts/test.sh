#!/usr/bin/env bash
# Builds and runs every test: unit, store contract and end-to-end, on SQLite and on a
# throwaway PostgreSQL 15 started for the run (scripts/with-postgres.sh), then the seat
# picker's tests in a real Chromium (scripts/browser-test.sh). Arguments go to ctest (and
# then the browser tests are left out: `scripts/test.sh -R Holds` runs what it names).
set -euo pipefail
cd "$(dirname "$0")/.."

export BOXOFFICE_TEST_REQUIRE_PG=1
jobs=$(nproc 2>/dev/null || echo 2)
scripts/with-postgres.sh ctest --test-dir build --output-on-failure -j "$jobs" "$@"
[ $# -gt 0 ] || scripts/browser-test.sh
