#!/usr/bin/env bash
# Every benchmark, one after another: `make bench` (quick, a few minutes on 2 cores) or
# `make bench-full` (longer runs, more connections). Prints every result and ratio line
# and keeps them in var/bench/<time>.txt.
#   bench/all.sh quick|full
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-quick}
mkdir -p var/bench
out="var/bench/$(date -u +%Y%m%dT%H%M%SZ)-$mode.txt"
{
  echo "# boxoffice benchmarks ($mode) $(date -u +%FT%TZ) on $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo "# $(g++ --version | head -1); $(/usr/lib/postgresql/15/bin/postgres --version); $(redis-server --version | cut -d' ' -f3); $(nginx -v 2>&1)"
  if [ "$mode" = full ]; then
    bench/seatmap.sh 256 30
    bench/holdstorm.sh 256 100
    bench/premiere.sh 5000 10 30
  else
    bench/seatmap.sh 64 5
    bench/holdstorm.sh 64 20
    bench/premiere.sh 500 10 30
  fi
} 2>&1 | grep -E '^(#|result|ratio)' | tee "$out"
echo "written to $out" >&2
