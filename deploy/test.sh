#!/bin/sh
# Sets up a fresh Debian 12 machine and runs the whole test suite:
#   1. installs the Debian packages (deploy/install-deps.sh),
#   2. builds with -Werror and runs every test (unit, fuzz-replay, integration),
#   3. builds the unit and fuzz-replay tests again with ASan+UBSan and runs them under it,
#   4. builds the non-test targets with clang 14 (-Werror too: a user's other compiler),
#   5. builds the Debian package without PGO (DEB_BUILD_PROFILES=nopgo; lintian must find
#      no error or warning) and installs it into a fresh minimal Debian 12
#      (deploy/test-deb.sh: controller, instance, a page, remove, purge),
#   6. checks formatting and runs the benchmark in --quick mode (answers only, no timing;
#      after the integration tests, while the builds of steps 3 to 5 finish).
# The whole run stays within 30 minutes on two cores from a fresh machine: every build is
# a unity build, the ASan one builds only what its tests run (and runs each test binary
# whole), the clang one is unoptimised (it is there for the compiler's warnings), the
# builds of steps 3 to 5 (deploy/test-builds.sh) run at the lowest CPU priority while the
# integration tests, which mostly wait on sockets, run in the foreground, and the minimal
# Debian of step 5 is fetched while the first build runs. Each step says how long it took.
set -eu
cd "$(dirname "$0")/.."
./deploy/install-deps.sh
jobs=$(nproc)
started=$(date +%s)

# ccache for every build below (the main one, ASan, clang, the package's): a rerun on the
# same machine, CI's included, recompiles only what changed. Paths relative to the parent
# directory, so another clone of the repository hits the same entries.
if command -v ccache >/dev/null 2>&1 && [ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ]; then
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(cd .. && pwd)}" CCACHE_NOHASHDIR=1
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_C_COMPILER_LAUNCHER=ccache
fi
# CI runs in a fresh clone each time: its debootstrap cache lives outside the clone.
if [ -n "${CI:-}" ]; then
  export SCALWS_DEBOOTSTRAP_CACHE="${SCALWS_DEBOOTSTRAP_CACHE:-/var/tmp/scalws-ci-debootstrap}"
fi

timed() {
  t0=$(date +%s)
  "$@"
  echo "test.sh: $* took $(($(date +%s) - t0)) s"
}

# The package test's minimal Debian needs only the network: fetched while we build.
mkdir -p build
./deploy/test-deb.sh --prepare >build/test-deb-prepare.log 2>&1 &
prepare_pid=$!

timed ./deploy/build.sh
cmake --build build --target check-format

# The other builds (deploy/test-builds.sh), at the lowest CPU priority beside the tests of
# the first one: the tests keep the CPU whenever they want it and the builds take what
# they leave. In a session of their own, so a failing step here stops them too; their
# output goes to a log, shown when one fails.
setsid nice -n 19 ./deploy/test-builds.sh >build/background-builds.log 2>&1 &
builds_pid=$!
trap 'kill -TERM "-$builds_pid" 2>/dev/null || true' EXIT

timed ctest --test-dir build --output-on-failure -j"$jobs" -L 'unit|fuzz-replay'
timed ctest --test-dir build --output-on-failure -L integration
if [ -x bench/run.sh ]; then
  # Both peers, so h2o's configs are checked too. Answers only, no timing: it runs while
  # the niced builds finish.
  timed bench/run.sh --quick --servers scalws,nginx,h2o
fi

if ! wait "$builds_pid"; then
  cat build/background-builds.log
  echo "test.sh: a build of steps 3 to 5 failed (its output is above)"
  exit 1
fi
trap - EXIT
grep '^test.sh: ' build/background-builds.log
timed env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs" -L 'unit|fuzz-replay'
if ! wait "$prepare_pid"; then
  cat build/test-deb-prepare.log
  echo "test.sh: preparing the minimal Debian failed; test-deb.sh tries again"
fi
timed ./deploy/test-deb.sh

echo "test.sh: all green in $(($(date +%s) - started)) s"
