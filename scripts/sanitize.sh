#!/usr/bin/env bash
# Builds the tests with a sanitizer in a build folder of their own and runs them on a
# throwaway PostgreSQL (scripts/with-postgres.sh), as `make test` does.
#
#   scripts/sanitize.sh address [build|test]
#       AddressSanitizer + UndefinedBehaviorSanitizer, every test (the end-to-end suites
#       start the sanitized binary too)
#   scripts/sanitize.sh thread [build|test]
#       ThreadSanitizer on the suites that race threads in one process (core, http, store
#       contract, gate, admission and seat-map cache, jobs); the end-to-end suites run
#       their threads in other processes, which TSan cannot watch
#
# With `build` or `test`, only that half (scripts/check.sh builds other trees while the ASan
# tests run). SANITIZE_TEST_JOBS sets how many tests run at once. Any report fails the run (halt_on_error). Suppressions are in
# scripts/sanitizers/, each with its reason.
#
# The seeds' race (StoreContract.HarderRace…) runs BOXOFFICE_RACE_ROUNDS rounds here, 200
# unless set (1,000 in `make test`): sanitized, each round is several times slower, and 200
# rounds of 64 threads still release every kind of conflict at once thousands of times.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:?usage: scripts/sanitize.sh address|thread [build|test]}
phase=${2:-all}
case "$phase" in all | build | test) ;; *) echo "sanitize.sh: phase must be build or test" >&2; exit 2 ;; esac
jobs=$(nproc 2>/dev/null || echo 2)
here=$(pwd)
case "$mode" in
  address)
    dir=build-asan
    # Every test and the binary the end-to-end suites start; not the load generator or the
    # chaos driver, which no test runs (the plain build keeps them compiling).
    targets=(boxoffice core_test http_test store_contract_test gate_test api_test jobs_test
      e2e_test bench_test)
    exclude='^$'
    # Most of these tests wait (expiries, timeouts, other processes): 4 at a time on 2 cores.
    parallel=$((jobs * 2))
    export ASAN_OPTIONS="abort_on_error=0:halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=0:strict_string_checks=1"
    export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
    export LSAN_OPTIONS="suppressions=$here/scripts/sanitizers/lsan.supp:print_suppressions=0"
    ;;
  thread)
    dir=build-tsan
    targets=(core_test http_test store_contract_test gate_test api_test jobs_test)
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$here/scripts/sanitizers/tsan.supp"
    # Left out under TSan only (they run plain and under ASan): the Kafka relay suites, whose
    # librdkafka mock cluster (not instrumented) crashes inside TSan's runtime at start
    # (SEGV reading the zero page in a librdkafka thread, before any of our code runs).
    # The store suites' PostgresShards variants run under ASan only: a ShardedStore adds
    # routing on the caller's thread and no thread of its own beyond each shard's PgStore,
    # which the Postgres variants race here already.
    exclude='KafkaRelay\.|/PostgresShards( |$)'
    parallel=$jobs
    ;;
  *)
    echo "usage: scripts/sanitize.sh address|thread [build|test]" >&2
    exit 2
    ;;
esac

if [ "$phase" != test ]; then
  # -O1: sanitizers need no more, and it keeps the build within CI's time on 2 cores.
  scripts/configure.sh "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1" \
    -DBOX_SANITIZE="$mode"
  cmake --build "$dir" -j "$jobs" --target "${targets[@]}"
fi
[ "$phase" = build ] && exit 0

export BOXOFFICE_TEST_REQUIRE_PG=1
export BOXOFFICE_RACE_ROUNDS=${BOXOFFICE_RACE_ROUNDS:-200}
# Sanitized code runs several times slower: each test gets longer before ctest gives up.
# (Suites of executables not built here show up as *_NOT_BUILT: not ours to run.)
exec scripts/with-postgres.sh ctest --test-dir "$dir" --output-on-failure \
  -j "${SANITIZE_TEST_JOBS:-$parallel}" --timeout 900 --no-tests=error \
  -E "_NOT_BUILT\$|$exclude"
