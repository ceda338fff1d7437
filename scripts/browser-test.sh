#!/usr/bin/env bash
# The seat picker's tests (tests/browser/*.test.js) in Debian's Chromium driven by
# playwright-core, each suite against its own `build/boxoffice serve` and fake gateway on
# loopback ports. Installs Chromium and the npm packages first (scripts/deps.sh browser).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh browser
[ -x build/boxoffice ] || { echo "browser tests: build/boxoffice is missing (make build)" >&2; exit 1; }
cd tests/browser
# One suite at a time (each starts its own service and Chromium). --test-concurrency is in
# Node.js 18.19 and later, --test-reporter in 18.15 and later; Debian 12's nodejs is 18.20.
# (No path argument: node finds *.test.js here and skips node_modules; from Node 21 on, a path
# argument is a glob.)
exec node --test --test-concurrency=1 --test-reporter=spec "$@"
