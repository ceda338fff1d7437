#!/usr/bin/env bash
# Builds and runs every test: unit, store contract and end-to-end, on SQLite and on a
# throwaway PostgreSQL 15 started for the run (scripts/with-postgres.sh), then a premiere
# through haproxy on 2 shards and a Redis Cluster with an instance and a Redis master
# killed mid-run (bench/premiere_cluster.sh with CHAOS=1), then the seat picker's tests in
# a real Chromium (scripts/browser-test.sh). Arguments go to ctest (and then the last two
# are left out: `scripts/test.sh -R Holds` runs what it names).
set -euo pipefail
cd "$(dirname "$0")/.."

export BOXOFFICE_TEST_REQUIRE_PG=1
jobs=$(nproc 2>/dev/null || echo 2)
scripts/with-postgres.sh ctest --test-dir build --output-on-failure -j "$jobs" "$@"
[ $# -gt 0 ] && exit 0
CHAOS=1 bench/premiere_cluster.sh 60 4 3 120
scripts/browser-test.sh
