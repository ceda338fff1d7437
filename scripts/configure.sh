#!/usr/bin/env bash
# Configures a CMake build folder: scripts/configure.sh DIR [CMAKE ARGUMENTS...]
# A new folder uses Ninja when it is there (scripts/deps.sh installs it): it compiles a
# target's files while the libraries that target links are still being built, where make
# waits for them, which keeps both cores busy. An existing folder keeps its generator.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: scripts/configure.sh DIR [CMAKE ARGUMENTS...]}
shift
generator=()
if [ ! -f "$dir/CMakeCache.txt" ] && command -v ninja >/dev/null; then
  generator=(-G Ninja)
fi
exec cmake -S . -B "$dir" "${generator[@]}" "$@" >/dev/null
