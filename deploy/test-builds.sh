#!/bin/sh
# The builds deploy/test.sh runs beside its integration tests, one after the other:
#   1. the unit and fuzz-replay tests with ASan+UBSan (build-asan/; test.sh runs them after),
#   2. the programs with clang 14, unoptimised and -Werror (build-clang/: a user's other
#      compiler's warnings),
#   3. the Debian package without PGO (deploy/build-deb.sh, lintian included).
# Each says how long it took. Stops at the first that fails.
set -eu
cd "$(dirname "$0")/.."
jobs=$(nproc)

timed() {
  t0=$(date +%s)
  "$@"
  echo "test.sh: $* took $(($(date +%s) - t0)) s"
}

asan_build() {
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DSCALWS_SANITIZE=ON -DSCALWS_WERROR=ON \
    >/dev/null
  cmake --build build-asan -j"$jobs" --target unit-tests
}
clang_build() {
  cmake -S . -B build-clang -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG=-O0 -DCMAKE_CXX_FLAGS_DEBUG=-O0 \
    -DSCALWS_TESTS=OFF -DSCALWS_WERROR=ON >/dev/null
  cmake --build build-clang -j"$jobs"
}
deb_build() {
  DEB_BUILD_PROFILES=nopgo DEB_BUILD_OPTIONS="parallel=$jobs" ./deploy/build-deb.sh
}

timed asan_build
timed clang_build
timed deb_build
