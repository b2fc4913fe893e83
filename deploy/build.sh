#!/bin/sh
# Builds ScalWS (release flags, warnings as errors) into build/; binaries land in build/bin/.
set -eu
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSCALWS_WERROR=ON >/dev/null
cmake --build build -j"$(nproc)"
