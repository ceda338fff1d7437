#!/usr/bin/env bash
# Installs the Debian 12 packages boxoffice builds, runs and tests with, if any is missing.
# `scripts/deps.sh bench` also installs what the benchmarks compare against (nginx) and
# drive with (curl, wrk); `scripts/deps.sh fuzz` clang and libFuzzer; `scripts/deps.sh chaos` faketime.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libboost-dev libpq-dev libsqlite3-dev nlohmann-json3-dev libssl-dev libcli11-dev
  libgtest-dev libhiredis-dev librdkafka-dev
  redis-server
  postgresql-15 postgresql-contrib
)
if [ "${1:-}" = bench ]; then
  packages+=(nginx-light curl wrk)
fi
# libFuzzer ships with clang's runtime libraries (make fuzz).
if [ "${1:-}" = fuzz ]; then
  packages+=(clang libclang-rt-14-dev)
fi
# An instance with its clock moved (make chaos).
if [ "${1:-}" = chaos ]; then
  packages+=(faketime curl)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps: installing ${missing[*]}" >&2
sudo=()
[ "$(id -u)" = 0 ] || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
# The postgresql package must not start a cluster of its own: tests start theirs.
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
