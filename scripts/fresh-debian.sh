#!/usr/bin/env bash
# Proves the README's two commands on a truly fresh Debian 12: debootstraps a minimal
# bookworm (Debian's own repositories only: main, updates, security) into DIR, copies a
# clean clone of this repository's HEAD into it, and inside it with chroot runs `make run`
# until /readyz answers (then stops it) and `make check`. Not part of CI (it takes about as
# long as make check, plus the debootstrap); run it before claiming the README's commands
# work on a fresh machine.
#
#   sudo scripts/fresh-debian.sh [DIR]     (default /var/tmp/boxoffice-fresh)
#
# FRESH_KEEP=1 reuses an existing DIR's system (only the clone is fresh); by default DIR is
# made anew. FRESH_STEPS="run" or "check" runs only that step. The chroot shares this
# machine's network: ports 8080 and 9090 (make run) must be free.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
root=${1:-/var/tmp/boxoffice-fresh}
steps=${FRESH_STEPS:-run check}
mirror=${FRESH_MIRROR:-http://deb.debian.org/debian}

[ "$(id -u)" = 0 ] || { echo "fresh-debian: run as root (debootstrap, chroot, mount)" >&2; exit 1; }
command -v debootstrap >/dev/null || {
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
}
log() { echo "== fresh-debian: $* ($(date -u +%H:%M:%S))"; }
started=$(date +%s)

if [ "${FRESH_KEEP:-}" != 1 ] || [ ! -f "$root/etc/debian_version" ]; then
  log "debootstrap bookworm into $root"
  rm -rf "$root"
  debootstrap --variant=minbase bookworm "$root" "$mirror" >/dev/null
  cat >"$root/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb http://security.debian.org/debian-security bookworm-security main
EOF
fi

mounts=()
unmount_all() {
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[$i]}" 2>/dev/null || true; done
}
trap unmount_all EXIT
bind() {  # type source target
  mkdir -p "$root$3"
  mount -t "$1" "$2" "$root$3"
  mounts+=("$root$3")
}
bind proc proc /proc
bind sysfs sys /sys
bind devtmpfs udev /dev
bind devpts devpts /dev/pts
bind tmpfs shm /dev/shm
cp /etc/resolv.conf "$root/etc/resolv.conf"

log "a clean clone of $(git rev-parse --short HEAD)"
rm -rf "$root/src/boxoffice"
mkdir -p "$root/src"
git clone -q "$repo" "$root/src/boxoffice"

# A network that inspects TLS (a site proxy with its own certificate authority, added on
# this machine under /usr/local/share/ca-certificates) must be trusted inside too, or npm
# cannot reach its registry; nothing else of this machine goes in.
extra_ca=()
for crt in /usr/local/share/ca-certificates/*.crt; do [ -f "$crt" ] && extra_ca+=("$crt"); done
ca_env=()
if [ ${#extra_ca[@]} -gt 0 ]; then
  ca_env=(NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt)
fi
in_chroot() {
  chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 "${ca_env[@]}" \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin /bin/bash -c "$1"
}
log "what the fresh system has: $(in_chroot 'command -v node make gcc cmake || true' | tr '\n' ' ')"
# The README's commands need make first (a fresh Debian has none), as .ci/run installs it.
in_chroot 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq make >/dev/null'
if [ ${#extra_ca[@]} -gt 0 ]; then
  log "trusting this network's certificate authorities: ${extra_ca[*]}"
  in_chroot 'DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ca-certificates >/dev/null'
  mkdir -p "$root/usr/local/share/ca-certificates"
  cp "${extra_ca[@]}" "$root/usr/local/share/ca-certificates/"
  in_chroot 'update-ca-certificates >/dev/null'
fi

if [[ " $steps " == *" run "* ]]; then
  log "make run, until /readyz answers"
  in_chroot 'cd /src/boxoffice && (setsid make run >/tmp/make-run.log 2>&1 & echo $! >/tmp/make-run.pid)'
  ready=0
  for _ in $(seq 1 2400); do  # the first run builds: up to 40 minutes
    if in_chroot 'exec 3<>/dev/tcp/127.0.0.1/8080 && printf "GET /readyz HTTP/1.0\r\n\r\n" >&3 && head -1 <&3' 2>/dev/null |
      grep -q " 200"; then
      ready=1
      break
    fi
    if ! in_chroot 'kill -0 "$(cat /tmp/make-run.pid)"' 2>/dev/null; then break; fi
    sleep 1
  done
  in_chroot 'kill -TERM -- -"$(cat /tmp/make-run.pid)"' 2>/dev/null || true
  sleep 2
  in_chroot 'kill -KILL -- -"$(cat /tmp/make-run.pid)"' 2>/dev/null || true
  if [ "$ready" != 1 ]; then
    tail -n 40 "$root/tmp/make-run.log"
    log "make run did not answer /readyz"
    exit 1
  fi
  log "make run answered /readyz"
fi

if [[ " $steps " == *" check "* ]]; then
  log "make check"
  in_chroot 'cd /src/boxoffice && make check' 2>&1 | tee "$root/tmp/make-check.log" | grep -E "^== check|FAILED|Failed|passed" || true
  if ! grep -q "== check: all passed" "$root/tmp/make-check.log"; then
    tail -n 60 "$root/tmp/make-check.log"
    log "make check failed"
    exit 1
  fi
fi
log "done in $(( ($(date +%s) - started) / 60 )) minutes"
