#!/usr/bin/env bash
# Installs the Debian 12 packages boxoffice builds, runs and tests with, if any is missing.
# `scripts/deps.sh bench` also installs what the benchmarks compare against (nginx) and
# drive with (curl, wrk); `scripts/deps.sh package` lintian and promtool; `scripts/deps.sh fuzz` clang and libFuzzer; `scripts/deps.sh chaos` faketime;
# `scripts/deps.sh browser` Debian's Chromium and the browser tests' npm packages (playwright-core,
# axe-core) from tests/browser/package-lock.json; `scripts/deps.sh cluster` haproxy.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libboost-dev libpq-dev libsqlite3-dev nlohmann-json3-dev libssl-dev libcli11-dev
  libgtest-dev libhiredis-dev librdkafka-dev tzdata
  libqrencode-dev libpng-dev libcurl4-openssl-dev libhowardhinnant-date-dev
  zlib1g-dev libbrotli-dev
  redis-server
  postgresql-15 postgresql-contrib
  # The tickets' end-to-end test reads the QR codes back (zbarimg) from the PNG and from the
  # SVG rasterised (rsvg-convert), and receives the e-mail with a real SMTP server (aiosmtpd).
  zbar-tools librsvg2-bin python3-aiosmtpd
)
if [ "${1:-}" = bench ]; then
  packages+=(nginx-light libnginx-mod-http-brotli-static curl wrk)
fi
# libFuzzer ships with clang's runtime libraries (make fuzz).
if [ "${1:-}" = fuzz ]; then
  packages+=(clang libclang-rt-14-dev)
fi
# An instance with its clock moved (make chaos).
if [ "${1:-}" = chaos ]; then
  packages+=(faketime curl)
fi
# The Debian package's checks and the alert rules' tests (make package-test, monitoring-test;
# python3 reads the metric names out of the rules, the dashboard and /metrics).
if [ "${1:-}" = package ]; then
  packages+=(lintian curl prometheus python3)
fi
# Several instances behind a balancer (scripts/cluster.sh, bench premiere_cluster).
if [ "${1:-}" = cluster ]; then
  packages+=(haproxy curl)
fi
# The seat picker's tests in a real browser (scripts/browser-test.sh), on Debian's nodejs and
# npm when there is no node or npm on the PATH; a Node.js installed otherwise is kept.
if [ "${1:-}" = browser ]; then
  packages+=(chromium fonts-dejavu-core)
  command -v node >/dev/null || packages+=(nodejs)
  command -v npm >/dev/null || packages+=(npm)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}" >&2
  sudo=()
  [ "$(id -u)" = 0 ] || sudo=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  # The postgresql package must not start a cluster of its own: tests start theirs.
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ "${1:-}" = browser ]; then
  # playwright-core 1.61 is the last release for Node.js 18 (1.62 asks for 20); the test
  # runner's --test-concurrency needs 18.19. Debian 12's nodejs is 18.20.
  if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 18 || (a === 18 && b >= 19) ? 0 : 1)' 2>/dev/null \
     || ! command -v npm >/dev/null; then
    echo "deps: the browser tests need Node.js 18.19 or later and npm (found: node $(node --version 2>/dev/null || echo none)," \
      "npm $(npm --version 2>/dev/null || echo none)); on Debian 12: apt-get install nodejs npm" >&2
    exit 1
  fi
  dir=$(cd "$(dirname "$0")/../tests/browser" && pwd)
  # The exact versions of the committed lockfile, installed again only when it changes.
  if ! cmp -s "$dir/package-lock.json" "$dir/node_modules/.package-lock.json.installed" 2>/dev/null; then
    echo "deps: npm ci in tests/browser" >&2
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    cp "$dir/package-lock.json" "$dir/node_modules/.package-lock.json.installed"
  fi
fi
