#!/usr/bin/env bash
# The Debian package checked with Debian's own tools (`make deb` builds it; make check runs
# this after the release build):
#   1. the package holds the binary, the unit, the conffile, the maintainer scripts, the
#      copyright, changelog and manual page, and depends on what dpkg-shlibdeps found;
#   2. lintian reports no error and no warning, and no tag beyond those explained in
#      deploy/debian/lintian-expected;
#   3. systemd-analyze verify accepts the unit as the package installs it;
#   4. boxoffice.env names every flag of the packaged `boxoffice serve`;
#   5. the packaged binary, run with the packaged settings (paths moved into a temporary
#      directory) and the secret made the way postinst makes it, migrates and serves /healthz.
# Installing the package into a fresh Debian 12 with dpkg and apt-get: scripts/fresh-debian.sh.
#   scripts/package-test.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
source scripts/lib.sh
fail() { echo "package-test: $*" >&2; exit 1; }

version=$(sed -nE 's/^project\(boxoffice VERSION ([0-9.]+).*/\1/p' CMakeLists.txt)
[ -n "$version" ] || fail "no version in CMakeLists.txt"
cmake --build "$build" --target boxoffice box_deb_docs >/dev/null
(cd "$build" && cpack -G DEB >cpack.log 2>&1) || { cat "$build/cpack.log" >&2; fail "cpack failed"; }
deb="$build/boxoffice_${version}_amd64.deb"
[ -f "$deb" ] || fail "$deb was not built"
echo "package-test: $deb ($(du -h "$deb" | cut -f1))"

# 1. What is inside.
contents=$(dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|')
for f in /usr/bin/boxoffice /lib/systemd/system/boxoffice.service /etc/boxoffice/boxoffice.env \
         /usr/share/doc/boxoffice/copyright /usr/share/doc/boxoffice/changelog.gz \
         /usr/share/man/man1/boxoffice.1.gz; do
  grep -qx "$f" <<<"$contents" || fail "$f is not in the package"
done
[ "$(dpkg-deb -I "$deb" conffiles)" = /etc/boxoffice/boxoffice.env ] || fail "conffiles: $(dpkg-deb -I "$deb" conffiles)"
for script in postinst prerm postrm; do
  dpkg-deb -I "$deb" "$script" | cmp -s - "deploy/debian/$script" || fail "$script differs"
done
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libc6 libpq5 libsqlite3-0 libhiredis0.14 librdkafka1 libssl3 adduser; do
  grep -q "\b$lib\b" <<<"$depends" || fail "Depends lacks $lib: $depends"
done
echo "package-test: Depends: $depends"

# 2. lintian: errors and warnings fail; every other tag must be one explained.
lintian_out=$(lintian --no-tag-display-limit -I "$deb" 2>&1 || true)
unexpected=$(grep -E '^[EWIP]: ' <<<"$lintian_out" | awk '{ print $1, $3 }' | sort -u |
  while read -r kind tag; do
    case "$kind" in E:|W:) echo "$kind $tag"; continue ;; esac
    grep -qE "^$tag( |$)" deploy/debian/lintian-expected || echo "$kind $tag"
  done)
if [ -n "$unexpected" ]; then
  echo "$lintian_out" >&2
  fail "lintian tags not explained in deploy/debian/lintian-expected: $unexpected"
fi
echo "package-test: lintian: $(grep -cE '^[EWIP]: ' <<<"$lintian_out" || true) tags, each explained"

# 3. The unit, as installed, in a root of its own.
root=$(mktemp -d /tmp/boxoffice-deb.XXXXXX)
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$root"
}
trap cleanup EXIT
dpkg-deb -x "$deb" "$root"
# (verify looks up ExecStart's binary on this machine's /usr/bin: put a link there when
# it is free, for the check only.)
linked=
if [ ! -e /usr/bin/boxoffice ] && [ -w /usr/bin ]; then
  ln -s "$root/usr/bin/boxoffice" /usr/bin/boxoffice && linked=1
fi
verify_out=$(SYSTEMD_LOG_LEVEL=notice systemd-analyze verify "$root/lib/systemd/system/boxoffice.service" 2>&1) || verified=$?
[ -n "$linked" ] && rm -f /usr/bin/boxoffice
[ "${verified:-0}" = 0 ] && [ -z "$verify_out" ] || { echo "$verify_out" >&2; fail "systemd-analyze verify"; }
echo "package-test: systemd-analyze verify: clean"

# 4. Every serve flag is in the settings file.
missing=()
for flag in $("$root/usr/bin/boxoffice" serve --help | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
  [ "$flag" = --help ] && continue
  name=BOXOFFICE_$(tr 'a-z-' 'A-Z_' <<<"${flag#--}")
  grep -qE "^#?$name=" "$root/etc/boxoffice/boxoffice.env" || missing+=("$name")
done
[ ${#missing[@]} = 0 ] || fail "boxoffice.env lacks ${missing[*]}"
echo "package-test: boxoffice.env names every serve flag"

# 5. The packaged binary with the packaged settings: migrate, then serve /healthz.
port=$(free_port)
env_file="$root/test.env"
sed -e "s|/var/lib/boxoffice|$root/state|g" "$root/etc/boxoffice/boxoffice.env" >"$env_file"
echo "BOXOFFICE_LISTEN=127.0.0.1:$port" >>"$env_file"
echo "BOXOFFICE_JWT_SECRET=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" >>"$env_file"
mkdir -p "$root/state"
(
  set -a
  source "$env_file"
  set +a
  cd "$root/state"
  "$root/usr/bin/boxoffice" migrate >"$root/migrate.log" 2>&1 || { cat "$root/migrate.log" >&2; exit 1; }
  exec "$root/usr/bin/boxoffice" serve >"$root/serve.log" 2>&1
) &
server_pid=$!
for _ in $(seq 1 100); do
  curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$root/migrate.log" "$root/serve.log" >&2 2>/dev/null; fail "serve ended"; }
  sleep 0.1
done
curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null || { cat "$root/serve.log" >&2; fail "no /healthz"; }
[ -f "$root/state/boxoffice.db" ] || fail "the database is not where boxoffice.env puts it"
echo "package-test: the packaged binary with the packaged settings serves /healthz"
echo "package-test: passed"
