#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang (ASan + UBSan) and runs each for a set
# time, starting from its committed seed corpus (fuzz/corpus/TARGET). New inputs the run
# finds go to build-fuzz/corpus/TARGET, never into the committed seeds.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default: 60 s, every target)
#
# FUZZ_PHASE=build only builds them, FUZZ_PHASE=run only runs them (scripts/check.sh builds
# them while other tests run).
#
# A crash, a leak, a timeout or a broken property (the targets abort on one) fails the run;
# the input that did it is kept as build-fuzz/crash-* for a test to replay.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(routes http_request json_bodies jwt gateway_signature seats_times_cursor ticket_code)
jobs=$(nproc 2>/dev/null || echo 2)

phase=${FUZZ_PHASE:-all}
case "$phase" in all | build | run) ;; *) echo "fuzz.sh: FUZZ_PHASE must be build or run" >&2; exit 2 ;; esac
# Each target once (a pid per name below).
mapfile -t targets < <(printf '%s\n' "${targets[@]}" | awk '!seen[$0]++')
if [ "$phase" != run ]; then
  scripts/deps.sh fuzz
  scripts/configure.sh build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1" -DBOX_SANITIZE=fuzzer
  cmake --build build-fuzz -j "$jobs" --target "${targets[@]/#/fuzz_}"
fi
[ "$phase" = build ] && exit 0

# FUZZ_JOBS: targets at a time (one per core unless set; scripts/check.sh runs one beside
# the TSan suites).
jobs=${FUZZ_JOBS:-$jobs}
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
# One target per core at a time (libFuzzer runs one process each).
# A target's dictionary (fuzz/TARGET.dict) is used when there is one. Whole requests
# (routes) may carry a trailer past Beast's 64 KiB field size, so they may be longer.
fuzz_one() {
  local t=$1 work="build-fuzz/corpus/$1" log="build-fuzz/fuzz_$1.log"
  local extra=(-max_len=65536)
  [ "$t" = routes ] && extra=(-max_len=140000)
  [ -f "fuzz/$t.dict" ] && extra+=(-dict="fuzz/$t.dict")
  mkdir -p "$work"
  "build-fuzz/fuzz_$t" -max_total_time="$seconds" "${extra[@]}" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="build-fuzz/crash-$t-" \
    "$work" "fuzz/corpus/$t" >"$log" 2>&1
}
echo "fuzz: ${targets[*]}, ${seconds}s each, $jobs at a time"
declare -A pids
failed=0
report() {
  local t=$1 log="build-fuzz/fuzz_$1.log"
  if ! wait "${pids[$t]}"; then
    echo "fuzz: $t FAILED (log: $log)"
    tail -n 40 "$log"
    failed=1
  fi
  # The last status line (executions, coverage, corpus) and the final stats.
  echo "fuzz: $t"
  grep -E "^#[0-9]+.*(DONE|pulse|NEW|REDUCE)" "$log" | tail -n 1 || true
  grep -E "^stat::(number_of_executed_units|peak_rss_mb)" "$log" || true
}
running=()
for t in "${targets[@]}"; do
  if [ ${#running[@]} -ge "$jobs" ]; then
    report "${running[0]}"
    running=("${running[@]:1}")
  fi
  fuzz_one "$t" &
  pids[$t]=$!
  running+=("$t")
done
for t in "${running[@]}"; do report "$t"; done
[ "$failed" = 0 ] && echo "fuzz: ${#targets[@]} targets, ${seconds}s each, no crash"
exit "$failed"
