#!/usr/bin/env bash
# What CI runs (`make check`):
#
#   1. the release build of the service, the load generator and the chaos driver (build/);
#   2. every test (unit, store contract and end-to-end, on SQLite, throwaway PostgreSQL
#      servers, Redis and Redis Cluster) under AddressSanitizer + UndefinedBehaviorSanitizer
#      (scripts/sanitize.sh address): the one run of the whole suite, sanitized;
#   3. on the release build: the premiere through haproxy on 2 shards and a Redis Cluster
#      with an instance and a Redis master killed mid-run, and the seat picker in Chromium;
#   4. the suites that race threads in one process under ThreadSanitizer;
#   5. beside them, each fuzz target for FUZZ_SECONDS (20 s), one at a time;
#   3b. on the release build, the Debian package (scripts/package-test.sh: lintian,
#      systemd-analyze verify, the packaged binary serving) and the alert rules and dashboard
#      (scripts/monitoring-test.sh: promtool test rules, metric names against a live serve);
#   0. before all of these, clang's thread-safety analysis of the binary's own files
#      (scripts/thread-safety.sh: -fsyntax-only, no binary); the rest of src/ is analysed,
#      as errors, while the clang fuzz tree of step 5 compiles it (CMakeLists.txt).
#
# While the sanitized tests of step 2 run, and then the premiere and the browser tests, the
# release, TSan and fuzz trees are built beside them at low CPU priority: the tests get the
# cores first (their timeouts are not stretched), the builds what the tests leave idle. `make test` runs every suite on the release build instead:
# the quick check after a change.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
step() { echo "== check: $* ($(date -u +%H:%M:%S))"; }

step "packages"
for part in "" cluster browser fuzz package; do scripts/deps.sh $part; done
step "thread-safety analysis of the binary's files (clang -Wthread-safety; the library's in the fuzz build)"
scripts/thread-safety.sh $(sed -n '/^add_executable(boxoffice /,/)/p' CMakeLists.txt | grep -o 'src/app/[a-z_]*\.cc')
step "ASan+UBSan build"
scripts/sanitize.sh address build
step "every test under ASan+UBSan; the release, TSan and fuzz builds beside them"
mkdir -p build
# Each build beside the tests in a process group of its own (job control), so that a
# failure or an interrupt ends its compilers too, not only its shell.
set -m
stop_builds() {
  for group in ${release:-} ${sanitizers:-}; do kill -TERM -- "-$group" 2>/dev/null || true; done
}
trap stop_builds EXIT
# Two builds beside the tests, at low CPU priority: the release tree first (the premiere
# and the browser tests need it next), the TSan and fuzz trees at the lowest.
(
  set -e
  nice -n 10 scripts/configure.sh build -DCMAKE_BUILD_TYPE=Release
  nice -n 10 cmake --build build -j "$jobs" --target boxoffice boxoffice-bench boxoffice-chaos
) >build/check-release-build.log 2>&1 &
release=$!
(
  set -e
  nice -n 19 scripts/sanitize.sh thread build
  FUZZ_PHASE=build nice -n 19 scripts/fuzz.sh
) >build/check-sanitizer-builds.log 2>&1 &
sanitizers=$!
set +m
fail() {
  [ -n "${1:-}" ] && { tail -n 60 "$1"; echo "== check: a build beside the tests failed ($1)"; }
  exit 1  # (stop_builds ends what still runs)
}
SANITIZE_TEST_JOBS=3 scripts/sanitize.sh address test || fail
step "waiting for the release build"
wait "$release" || fail build/check-release-build.log
step "the Debian package, the alert rules and the dashboard"
scripts/package-test.sh build || fail
scripts/monitoring-test.sh build || fail
step "the premiere through haproxy with faults"
CHAOS=1 bench/premiere_cluster.sh 60 4 3 120 || fail
step "the seat picker in Chromium"
scripts/browser-test.sh || fail
step "waiting for the TSan and fuzz builds"
wait "$sanitizers" || fail build/check-sanitizer-builds.log
# The race suites wait on their databases much of the time: the fuzzers run beside them,
# one target at a time (libFuzzer's time is wall time: each still runs FUZZ_SECONDS).
step "the race suites under TSan, and each fuzz target beside them"
set -m
FUZZ_PHASE=run FUZZ_JOBS=1 scripts/fuzz.sh "${FUZZ_SECONDS:-20}" >build/check-fuzz.log 2>&1 &
fuzzing=$!
set +m
stop_fuzzing() { kill -TERM -- "-$fuzzing" 2>/dev/null || true; }
trap 'stop_builds; stop_fuzzing' EXIT
scripts/sanitize.sh thread test || fail
step "waiting for the fuzzers"
wait "$fuzzing" || { cat build/check-fuzz.log; echo "== check: fuzzing failed"; exit 1; }
cat build/check-fuzz.log
step "all passed"
