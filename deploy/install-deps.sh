#!/bin/sh
# Installs every Debian 12 package that ScalWS needs to build, test and benchmark.
# Starts from a minimal Debian 12 (no compiler, cmake, pkg-config or git); idempotent.
set -eu

PACKAGES="
  build-essential cmake pkg-config git ca-certificates ccache
  clang clang-format libclang-rt-14-dev
  libuv1-dev libssl-dev node-llhttp libnghttp2-dev libseccomp-dev
  libtomlplusplus-dev libsqlite3-dev nlohmann-json3-dev libsystemd-dev libcrypt-dev libpcre2-dev
  libngtcp2-dev libngtcp2-crypto-gnutls-dev libgnutls28-dev libnghttp3-dev
  zlib1g-dev libbrotli-dev libzstd-dev
  googletest libgtest-dev libgmock-dev
  php8.2-fpm php8.2-cli nginx-light h2o
  curl nghttp2-client ngtcp2-client wrk openssl testssl.sh apache2-utils
  python3 python3-pytest python3-h2 python3-hyperframe python3-websockets
  python3-brotli python3-zstandard
  nodejs node-ws python3-gunicorn python3-uvicorn
  sqlite3 procps psmisc strace valgrind linux-perf iproute2 util-linux passwd
  debhelper dpkg-dev fakeroot lintian pandoc bash-completion debootstrap
  chromium
"

if [ "$(id -u)" -eq 0 ]; then
  SUDO=
elif command -v sudo >/dev/null 2>&1; then
  SUDO=sudo
else
  echo "install-deps: run this as root (a minimal Debian has no sudo)" >&2
  exit 1
fi

missing=""
for p in $PACKAGES; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done

if [ -z "$missing" ]; then
  echo "install-deps: all packages present"
  exit 0
fi

echo "install-deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
# Daemons that Debian starts on install (nginx, h2o, php-fpm) are test peers only: the tests
# start their own copies on free ports, so keep the packaged services from starting.
policy=/usr/sbin/policy-rc.d
created_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
  $SUDO chmod 755 "$policy"
  created_policy=1
fi
# shellcheck disable=SC2086
$SUDO apt-get install -y -q --no-install-recommends $missing
if [ "$created_policy" = 1 ]; then
  $SUDO rm -f "$policy"
fi
echo "install-deps: done"
