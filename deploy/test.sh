#!/bin/sh
# Sets up a fresh Debian 12 machine and runs the whole test suite:
#   1. installs the Debian packages (deploy/install-deps.sh),
#   2. builds with -Werror and runs every test (unit, fuzz-replay, integration),
#   3. builds again with ASan+UBSan and runs the unit and fuzz-replay tests under it,
#   4. checks formatting (first: it is cheap) and runs the benchmark in --quick mode
#      (answers only, no timing).
set -eu
cd "$(dirname "$0")/.."
./deploy/install-deps.sh
jobs=$(nproc)

./deploy/build.sh
cmake --build build --target check-format
ctest --test-dir build --output-on-failure -j"$jobs" -L 'unit|fuzz-replay'
ctest --test-dir build --output-on-failure -L integration

cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DSCALWS_SANITIZE=ON -DSCALWS_WERROR=ON >/dev/null
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs" -L 'unit|fuzz-replay'

if [ -x bench/run.sh ]; then
  bench/run.sh --quick
fi
echo "test.sh: all green"
