#!/usr/bin/env bash
# Proves the README's two commands on a truly fresh Debian 12: debootstraps a minimal
# bookworm (Debian's own repositories only: main, updates, security) into DIR, copies a
# clean clone of this repository's HEAD into it, and inside it with chroot runs `make run`
# until /readyz answers (then stops it) and `make check`; then `make deb`, and installs the
# package with dpkg -i and apt-get -f install into a second fresh bookworm (DIR-install),
# where the service, started as its unit starts it, must serve /healthz. Not part of CI (it takes about as
# long as make check, plus the debootstrap); run it before claiming the README's commands
# work on a fresh machine.
#
#   sudo scripts/fresh-debian.sh [DIR]     (default /var/tmp/boxoffice-fresh)
#
# FRESH_KEEP=1 reuses an existing DIR's system (only the clone is fresh); by default DIR is
# made anew. FRESH_STEPS="run", "check" or "deb" runs only those steps. The chroot shares this
# machine's network: ports 8080 and 9090 (make run) must be free.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
root=${1:-/var/tmp/boxoffice-fresh}
steps=${FRESH_STEPS:-run check deb}
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
if [[ " $steps " == *" deb "* ]]; then
  log "make deb"
  in_chroot 'cd /src/boxoffice && make deb' >"$root/tmp/make-deb.log" 2>&1 || { tail -n 40 "$root/tmp/make-deb.log"; exit 1; }
  deb=$(ls "$root"/src/boxoffice/build/boxoffice_*_amd64.deb)
  target="$root-install"
  if [ "${FRESH_KEEP:-}" != 1 ] || [ ! -f "$target/etc/debian_version" ]; then
    log "debootstrap a second bookworm into $target, for the package alone"
    rm -rf "$target"
    debootstrap --variant=minbase bookworm "$target" "$mirror" >/dev/null
    cp "$root/etc/apt/sources.list" "$target/etc/apt/sources.list"
  fi
  cp /etc/resolv.conf "$target/etc/resolv.conf"
  for m in proc:/proc sysfs:/sys devtmpfs:/dev devpts:/dev/pts; do
    mkdir -p "$target${m#*:}"
    mount -t "${m%%:*}" "${m%%:*}" "$target${m#*:}"
    mounts+=("$target${m#*:}")
  done
  cp "$deb" "$target/tmp/"
  name=$(basename "$deb")
  in_target() {
    chroot "$target" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin /bin/bash -c "$1"
  }
  log "dpkg -i $name; apt-get -f install"
  in_target "apt-get update -qq; dpkg -i /tmp/$name >/tmp/dpkg.log 2>&1; echo \"dpkg -i exit \$?\";
    DEBIAN_FRONTEND=noninteractive apt-get -f install -y -qq >/tmp/apt.log 2>&1 && dpkg -s boxoffice | grep -E '^(Status|Version|Depends):'"
  # No systemd runs in a chroot: start the service as its unit does (its user, its
  # settings files, its state directory made as StateDirectory= makes it, migrate, serve).
  log "the service started as boxoffice.service starts it"
  in_target 'set -e; unit=/lib/systemd/system/boxoffice.service
    user=$(sed -n "s/^User=//p" $unit); pre=$(sed -n "s/^ExecStartPre=//p" $unit); start=$(sed -n "s/^ExecStart=//p" $unit)
    install -d -o "$user" -g "$user" -m 0750 /var/lib/boxoffice
    set -a; . /etc/boxoffice/boxoffice.env; . /etc/boxoffice/secrets.env; set +a
    cd /var/lib/boxoffice
    runuser -u "$user" -- $pre >/tmp/migrate.log 2>&1
    (setsid runuser -u "$user" -- $start >/tmp/serve.log 2>&1 & echo $! >/tmp/serve.pid)
    for i in $(seq 1 100); do
      if exec 3<>/dev/tcp/127.0.0.1/8080 2>/dev/null; then
        printf "GET /healthz HTTP/1.0\r\n\r\n" >&3; answer=$(head -1 <&3); exec 3>&-
        case "$answer" in *" 200"*) echo "GET /healthz: $answer"; ls -l /var/lib/boxoffice; break ;; esac
      fi
      sleep 0.1
    done
    kill -TERM -- -"$(cat /tmp/serve.pid)" 2>/dev/null || true
    case "$answer" in *" 200"*) ;; *) cat /tmp/serve.log; exit 1 ;; esac' || { log "the installed package did not serve /healthz"; exit 1; }
  log "the installed package served /healthz"
fi
log "done in $(( ($(date +%s) - started) / 60 )) minutes"
