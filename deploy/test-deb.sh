#!/bin/sh
# test-deb.sh [--prepare | PACKAGE.deb]: the package as an operator meets it, in a fresh minimal
# Debian 12 (debootstrap --variant=minbase into a temporary directory):
#   1. `apt-get install ./scalws_*.deb` there, with only Debian's packages besides it;
#      the unit is enabled, the group and /var/lib/scalws exist, /etc/scalws is conffiles,
#      the man pages and completion are installed, and nothing failed for want of systemd;
#   2. in its own mount, PID and network namespaces: scalws-controller from the installed
#      paths with its defaults, `scalwsctl instance add/start` of the installed example,
#      a page and /health fetched from it, then a graceful stop;
#   3. `systemd-analyze verify` on the installed unit (with that Debian's systemd);
#   4. `apt-get remove`: the programs go, the state and /etc/scalws stay; `apt-get purge`:
#      nothing of the package is left (state, conffiles, unit symlink), the group stays.
# The minimal root is cached in build/debootstrap/ (a week), so reruns take seconds to set
# up (SCALWS_DEBOOTSTRAP_CACHE=DIR moves the cache: CI, whose every run is a fresh clone,
# keeps it outside); DEBIAN_MIRROR changes the mirror. `--prepare` only makes sure the cache
# holds a minimal root, which needs nothing but the network: deploy/test.sh runs it while
# it builds. Needs root, debootstrap and unshare.
set -eu
cd "$(dirname "$0")/.."
prepare_only=0
deb=${1:-}
if [ "$deb" = "--prepare" ]; then
  prepare_only=1
elif [ -z "$deb" ]; then
  deb=$(ls build/deb/scalws_*.deb 2>/dev/null | grep -v dbgsym | head -n1 || true)
fi
if [ $prepare_only = 0 ] && { [ -z "$deb" ] || [ ! -f "$deb" ]; }; then
  echo "test-deb: no package (deploy/build-deb.sh makes one)" >&2
  exit 1
fi
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${SCALWS_DEBOOTSTRAP_CACHE:-$PWD/build/debootstrap}
cached_root=$cache/bookworm-minbase.tar

step() { printf 'test-deb: %s\n' "$*"; }
fail() {
  printf 'test-deb: FAIL: %s\n' "$*" >&2
  exit 1
}

root=$(mktemp -d /tmp/scalws-deb-test.XXXXXX)
trap 'rm -rf "$root"' EXIT INT TERM

if [ -f "$cached_root" ] && [ -n "$(find "$cached_root" -mtime -7)" ]; then
  step "minimal Debian 12 from the cache ($cached_root)"
  [ $prepare_only = 1 ] && exit 0
  tar -xf "$cached_root" -C "$root"
else
  step "debootstrap --variant=minbase bookworm (cached afterwards in $cache)"
  mkdir -p "$cache"
  debootstrap --variant=minbase bookworm "$root" "$mirror" >"$cache/debootstrap.log" 2>&1 ||
    { tail -n 20 "$cache/debootstrap.log" >&2; fail "debootstrap failed"; }
  tar -cf "$cached_root.tmp.$$" -C "$root" . && mv "$cached_root.tmp.$$" "$cached_root"
  [ $prepare_only = 1 ] && exit 0
fi
mirror_security=$(printf '%s' "$mirror" | sed 's|/debian$|/debian-security|')
cat >"$root/etc/apt/sources.list" <<SOURCES
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb $mirror_security bookworm-security main
SOURCES
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp "$deb" "$root/tmp/"
debname=$(basename "$deb")

# in_root [unshare options] -- SCRIPT: runs SCRIPT with sh in the root, inside a mount
# namespace of its own with /dev, /proc and an empty /run, so nothing is mounted on the host.
in_root() {
  opts=""
  while [ "$1" != "--" ]; do opts="$opts $1"; shift; done
  shift
  # shellcheck disable=SC2086
  unshare --mount --propagation private --fork $opts sh -c '
    set -e
    root=$1
    shift
    mount --rbind /dev "$root/dev"
    mount -t proc proc "$root/proc"
    mount -t tmpfs tmpfs "$root/run"
    if [ -n "${NEW_NET:-}" ]; then ip link set lo up; fi
    exec chroot "$root" /bin/sh -c "$1"
  ' in_root "$root" "$1"
}

# -- 1. install --------------------------------------------------------------------------
step "apt-get install ./$debname"
in_root -- "
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/tmp/apt.log 2>&1 || { cat /tmp/apt.log; exit 1; }
  apt-get install -y -q --no-install-recommends /tmp/$debname >/tmp/install.log 2>&1 ||
    { cat /tmp/install.log; exit 1; }
" || fail "the package does not install"

step "the installed package"
in_root -- '
  set -e
  for f in /usr/sbin/scalwsd /usr/sbin/scalws-controller /usr/sbin/scalws-front /usr/bin/scalwsctl; do
    test -x $f || { echo "missing $f"; exit 1; }
  done
  for f in /lib/systemd/system/scalws-controller.service /usr/lib/sysusers.d/scalws.conf \
           /usr/lib/tmpfiles.d/scalws.conf /usr/share/man/man8/scalwsctl.8.gz \
           /usr/share/man/man8/scalwsd.8.gz /usr/share/man/man8/scalws-controller.8.gz \
           /usr/share/man/man5/scalws.toml.5.gz /usr/share/bash-completion/completions/scalwsctl \
           /usr/share/scalws/example/site.toml /usr/share/scalws/example/www/index.html; do
    test -f $f || { echo "missing $f"; exit 1; }
  done
  test -L /etc/systemd/system/multi-user.target.wants/scalws-controller.service ||
    { echo "the unit is not enabled"; exit 1; }
  getent group scalws >/dev/null || { echo "no group scalws"; exit 1; }
  test "$(stat -c %a:%U /var/lib/scalws)" = 750:root || { echo "/var/lib/scalws is not 0750 root"; exit 1; }
  conffiles=$(dpkg-query -W -f="\${Conffiles}" scalws)
  for f in /etc/scalws/controller.env /etc/scalws/sites/example.toml /etc/logrotate.d/scalws; do
    echo "$conffiles" | grep -q " $f " || { echo "$f is not a conffile"; exit 1; }
  done
  /usr/sbin/scalwsd --version | grep -q "^scalwsd [0-9]" || { echo "scalwsd --version"; exit 1; }
  /usr/sbin/scalwsd --check-config /usr/share/scalws/example/site.toml >/dev/null
' || fail "the installed files"

# -- 2. the controller, an instance, a page ------------------------------------------------
step "scalws-controller with its defaults, the example instance, a page"
NEW_NET=1 in_root --net --pid -- '
  set -e
  get() {  # get PATH: the whole answer of 127.0.0.1:8080 (bash: minbase has no curl)
    bash -c "exec 3<>/dev/tcp/127.0.0.1/8080 &&
      printf \"GET $1 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n\" >&3 && cat <&3"
  }
  /usr/sbin/scalws-controller >/tmp/controller.log 2>&1 &
  controller=$!
  stop() { kill -INT $controller 2>/dev/null || true; wait $controller || true; }
  n=0
  until scalwsctl status >/dev/null 2>&1; do
    n=$((n + 1))
    if [ $n -gt 100 ] || ! kill -0 $controller 2>/dev/null; then
      cat /tmp/controller.log; echo "the controller does not answer"; exit 1
    fi
    sleep 0.1
  done
  scalwsctl instance add example --config /etc/scalws/sites/example.toml --cpus 1 --shared-cpus
  scalwsctl instance start example || { cat /tmp/controller.log; stop; exit 1; }
  page=$(get /)
  echo "$page" | head -n1 | grep -q "^HTTP/1.1 200" || { echo "GET /: $page"; stop; exit 1; }
  echo "$page" | grep -q "It works: ScalWS serves this page" || { echo "GET /: $page"; stop; exit 1; }
  get /health | tail -n1 | grep -qx ok || { echo "GET /health failed"; stop; exit 1; }
  scalwsctl instance show example | grep -q running || { scalwsctl instance show example; stop; exit 1; }
  scalwsctl instance stop example
  stop
  test -f /var/lib/scalws/state.db || { echo "no state.db"; exit 1; }
' || fail "serving from the installed package"

# -- 3. the unit ---------------------------------------------------------------------------
# Verified where it is installed, by that Debian's systemd (installed for this step: the
# minimal root has none, and the unit's dependencies such as sysinit.target come with it).
# --man=no: the man pages it names are checked as files above (minbase has no man-db).
step "systemd-analyze verify scalws-controller.service"
in_root -- '
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q --no-install-recommends systemd >/tmp/systemd.log 2>&1 ||
    { cat /tmp/systemd.log; exit 1; }
  systemd-analyze verify --man=no /lib/systemd/system/scalws-controller.service
' || fail "systemd-analyze verify"

# -- 4. remove, purge ----------------------------------------------------------------------
step "apt-get remove keeps the state and /etc/scalws; purge leaves nothing of the package"
in_root -- '
  set -e
  export DEBIAN_FRONTEND=noninteractive
  dpkg-query -L scalws | sort >/tmp/files
  apt-get remove -y -q scalws >/tmp/remove.log 2>&1 || { cat /tmp/remove.log; exit 1; }
  test ! -e /usr/sbin/scalws-controller || { echo "remove left the binaries"; exit 1; }
  test -f /var/lib/scalws/state.db || { echo "remove deleted the state"; exit 1; }
  test -f /etc/scalws/controller.env || { echo "remove deleted the conffiles"; exit 1; }
  apt-get purge -y -q scalws >/tmp/purge.log 2>&1 || { cat /tmp/purge.log; exit 1; }
  test ! -e /var/lib/scalws || { echo "purge left /var/lib/scalws"; exit 1; }
  test ! -e /var/log/scalws || { echo "purge left /var/log/scalws"; exit 1; }
  test ! -e /etc/scalws || { echo "purge left /etc/scalws"; exit 1; }
  test ! -e /etc/systemd/system/multi-user.target.wants/scalws-controller.service ||
    { echo "purge left the unit enabled"; exit 1; }
  left=""
  while read -r f; do
    # Directories are shared (/lib is a link to usr/lib); files and links must be gone.
    if [ ! -d "$f" ] && { [ -f "$f" ] || [ -L "$f" ]; }; then left="$left $f"; fi
  done </tmp/files
  test -z "$left" || { echo "purge left:$left"; exit 1; }
  getent group scalws >/dev/null || { echo "purge removed the group"; exit 1; }
' || fail "remove and purge"
step "ok: $debname installs, serves, removes and purges cleanly in a minimal Debian 12"
