#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang (ASan + UBSan) and runs each for a set
# time, starting from its committed seed corpus (fuzz/corpus/TARGET). New inputs the run
# finds go to build-fuzz/corpus/TARGET, never into the committed seeds.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default: 60 s, every target)
#
# A crash, a leak, a timeout or a broken property (the targets abort on one) fails the run;
# the input that did it is kept as build-fuzz/crash-* for a test to replay.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(http_request json_bodies jwt gateway_signature seats_times_cursor)
jobs=$(nproc 2>/dev/null || echo 2)

scripts/deps.sh fuzz
cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1" -DBOX_SANITIZE=fuzzer >/dev/null
cmake --build build-fuzz -j "$jobs" --target "${targets[@]/#/fuzz_}"

export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
failed=0
for t in "${targets[@]}"; do
  work="build-fuzz/corpus/$t"
  mkdir -p "$work"
  log="build-fuzz/fuzz_$t.log"
  echo "fuzz: $t for ${seconds}s"
  if ! "build-fuzz/fuzz_$t" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
      -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="build-fuzz/crash-$t-" \
      "$work" "fuzz/corpus/$t" >"$log" 2>&1; then
    echo "fuzz: $t FAILED (log: $log)"
    tail -n 40 "$log"
    failed=1
  fi
  # The last status line (executions, coverage, corpus) and the final stats.
  grep -E "^#[0-9]+.*(DONE|pulse|NEW|REDUCE)" "$log" | tail -n 1 || true
  grep -E "^stat::(number_of_executed_units|peak_rss_mb)" "$log" || true
done
[ "$failed" = 0 ] && echo "fuzz: ${#targets[@]} targets, ${seconds}s each, no crash"
exit "$failed"
