#!/usr/bin/env bash
# Every benchmark, one after another, then the report: `make bench` (quick, a few minutes
# on 2 cores) writes docs/benchmarks.md and its plots in docs/bench/; `make bench-full`
# (longer runs, more connections) writes docs/benchmarks-full.md and docs/bench-full/.
# The run's lines are kept in var/bench/<time>-<mode>.txt and beside the plots (run.txt);
# everything the scripts printed, in var/bench/<time>-<mode>.log.
#   bench/all.sh quick|full
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-quick}
case "$mode" in
  quick) report=docs/benchmarks.md plots=docs/bench
    # (60 showtimes: a storm of about 3 s. With 20 it lasted 1 s, and its p99 was mostly the
    # first moments of a fresh `serve`: 22–38 ms, against 13–14 ms over 80 showtimes.)
    scenarios=("seatmap bench/seatmap.sh 64 5" "allocations bench/allocations.sh 3"
      "holdstorm bench/holdstorm.sh 64 60"
      "holdstorm_best bench/holdstorm_best.sh 64 20"
      "premiere bench/premiere.sh 500 10 30" "premiere bench/premiere.sh 500 10 30 sqlite"
      "premiere_cluster bench/premiere_cluster.sh 500 10 30"
      "chain bench/chain.sh 100 7 64"
      "slowgateway bench/slowgateway.sh 64 10") ;;
  full) report=docs/benchmarks-full.md plots=docs/bench-full
    scenarios=("seatmap bench/seatmap.sh 256 30" "allocations bench/allocations.sh 10"
      "holdstorm bench/holdstorm.sh 10000 20"
      "holdstorm_best bench/holdstorm_best.sh 1000 20"
      "premiere bench/premiere.sh 5000 10 30" "premiere bench/premiere.sh 5000 10 30 sqlite"
      "premiere_cluster bench/premiere_cluster.sh 5000 10 30"
      "chain bench/chain.sh 500 7 256"
      "slowgateway bench/slowgateway.sh 256 20") ;;
  *) echo "usage: bench/all.sh quick|full" >&2; exit 2 ;;
esac
mkdir -p var/bench "$plots"
out="var/bench/$(date -u +%Y%m%dT%H%M%SZ)-$mode.txt"
{
  echo "# \`make bench\` ($mode), $(date -u +%FT%TZ)"
  echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(awk '/^MemTotal:/ { printf "%.0f", $2 / 1048576 }' /proc/meminfo) GiB, $(. /etc/os-release && echo "$PRETTY_NAME")"
  echo "# versions: $(g++ --version | head -1); $(/usr/lib/postgresql/15/bin/postgres --version); Redis $(redis-server --version | sed -E 's/.*v=([^ ]+).*/\1/'); $(nginx -v 2>&1 | sed 's/nginx version: //'); boxoffice $(git rev-parse --short HEAD 2>/dev/null || echo unknown), Release build"
  for s in "${scenarios[@]}"; do
    read -r name command <<<"$s"
    echo "scenario $name $command"
    # shellcheck disable=SC2086 # the command's arguments are words
    $command || { echo "# $name: FAILED (exit $?)"; }
  done
} 2>&1 | tee "${out%.txt}.log" | grep -E '^(#|scenario|result|latency|ratio)' | tee "$out"
cp "$out" "$plots/run.txt"
build/boxoffice-bench report --in "$plots/run.txt" --out "$report" --plots "$plots"
echo "written: $out, $report, $plots/*.svg" >&2
grep -q ': FAILED (exit' "$out" && exit 1
exit 0
