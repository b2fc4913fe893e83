#!/bin/sh
# Sets up a fresh Debian 12 machine and runs the main job: scalwsd serving the example site
# in deploy/examples/ on http://127.0.0.1:8080/ (Ctrl-C stops it gracefully).
set -eu
cd "$(dirname "$0")/.."
./deploy/install-deps.sh
./deploy/build.sh
echo "scalwsd: serving deploy/examples/site.toml on http://127.0.0.1:8080/"
exec ./build/bin/scalwsd --config deploy/examples/site.toml
