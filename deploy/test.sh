#!/bin/sh
# Sets up a fresh Debian 12 machine and runs the whole test suite:
#   1. installs the Debian packages (deploy/install-deps.sh),
#   2. builds with -Werror and runs every test (unit, fuzz-replay, integration),
#   3. builds again with ASan+UBSan and runs the unit and fuzz-replay tests under it,
#   4. builds the non-test targets with clang 14 (-Werror too: a user's other compiler),
#   5. builds the Debian package without PGO (DEB_BUILD_PROFILES=nopgo; lintian must find
#      no error or warning) and installs it into a fresh minimal Debian 12
#      (deploy/test-deb.sh: controller, instance, a page, remove, purge),
#   6. checks formatting (first: it is cheap) and runs the benchmark in --quick mode
#      (answers only, no timing).
set -eu
cd "$(dirname "$0")/.."
./deploy/install-deps.sh
jobs=$(nproc)

# ccache for every build below (the main one, ASan, clang, the package's): a rerun on the
# same machine, CI's included, recompiles only what changed. Paths relative to the parent
# directory, so another clone of the repository hits the same entries.
if command -v ccache >/dev/null 2>&1 && [ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ]; then
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(cd .. && pwd)}" CCACHE_NOHASHDIR=1
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_C_COMPILER_LAUNCHER=ccache
fi

./deploy/build.sh
cmake --build build --target check-format
ctest --test-dir build --output-on-failure -j"$jobs" -L 'unit|fuzz-replay'
ctest --test-dir build --output-on-failure -L integration

cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DSCALWS_SANITIZE=ON -DSCALWS_WERROR=ON >/dev/null
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs" -L 'unit|fuzz-replay'

# Each step below says how long it took: together they must stay within a few minutes.
timed() {
  t0=$(date +%s)
  "$@"
  echo "test.sh: $* took $(($(date +%s) - t0)) s"
}
clang_build() {
  cmake -S . -B build-clang -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSCALWS_TESTS=OFF -DSCALWS_WERROR=ON >/dev/null
  cmake --build build-clang -j"$jobs"
}
timed clang_build
timed env DEB_BUILD_PROFILES=nopgo DEB_BUILD_OPTIONS="parallel=$jobs" ./deploy/build-deb.sh
# CI runs in a fresh clone each time: its debootstrap cache lives outside the clone.
if [ -n "${CI:-}" ]; then
  export SCALWS_DEBOOTSTRAP_CACHE="${SCALWS_DEBOOTSTRAP_CACHE:-/var/tmp/scalws-ci-debootstrap}"
fi
timed ./deploy/test-deb.sh

if [ -x bench/run.sh ]; then
  # Both peers, so h2o's configs are checked too (answers only; a few seconds each).
  bench/run.sh --quick --servers scalws,nginx,h2o
fi
echo "test.sh: all green"
