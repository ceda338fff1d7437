#!/usr/bin/env bash
# Clang's thread-safety analysis over every source file of src/ (-fsyntax-only: no binary),
# as errors: a member BOX_GUARDED_BY a Mutex read or written without it, a function that
# BOX_REQUIRES a lock called without it, a lock taken twice or never released
# (core/sync.h). `make thread-safety`.
#
#   scripts/thread-safety.sh [FILE...]   (every .cc of src/ unless files are named)
#
# `make check` names only the binary's own files (src/app/ outside box_app): every other
# file of src/ is analysed there while the clang fuzz tree compiles it (CMakeLists.txt adds
# the same warnings, as errors, to any clang build).
#
# Clang 14 (Debian 12) compiles C++20 coroutines but does not announce them
# (__cpp_impl_coroutine), so Asio and libstdc++'s <coroutine> are told so here.
set -euo pipefail
cd "$(dirname "$0")/.."
clang=${CLANGXX:-clang++}
command -v "$clang" >/dev/null || { echo "thread-safety: $clang not found (scripts/deps.sh installs clang)" >&2; exit 1; }
flags=(-std=c++20 -fsyntax-only -Wthread-safety -Wthread-safety-beta -Werror=thread-safety
       -Werror=thread-safety-beta -Wno-unknown-warning-option
       -D__cpp_impl_coroutine=201902L -DBOOST_ASIO_HAS_CO_AWAIT=1 -DBOOST_ASIO_HAS_STD_COROUTINE=1
       -Isrc -I. -isystem /usr/include/postgresql -isystem /usr/include/hiredis)
if [ $# -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(find src -name '*.cc' | sort)
fi
[ ${#files[@]} -gt 0 ] || { echo "thread-safety: no source files found under src/" >&2; exit 1; }
started=$(date +%s)
printf '%s\n' "${files[@]}" |
  xargs -P "$(nproc 2>/dev/null || echo 2)" -I{} sh -c '"$0" "$@" {} 2>&1 || echo "thread-safety: FAILED {}"' "$clang" "${flags[@]}" |
  tee /tmp/thread-safety.$$ | grep -E "error|warning|FAILED" || true
if grep -q "FAILED" /tmp/thread-safety.$$; then
  rm -f /tmp/thread-safety.$$
  echo "thread-safety: failed" >&2
  exit 1
fi
rm -f /tmp/thread-safety.$$
echo "thread-safety: ${#files[@]} files clean in $(( $(date +%s) - started )) s"
