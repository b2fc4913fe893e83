#!/bin/sh
# Sets up a fresh Debian 12 machine and runs the main job: scalws-controller, with its state
# in .state/ (git-ignored) and its socket there too, running a demo instance that serves
# the example site in deploy/examples/ on http://127.0.0.1:8080/. Stays in the foreground;
# Ctrl-C stops the demo instance gracefully, then the controller.
#
# While it runs, from another terminal:
#   ./build/bin/scalwsctl --socket .state/control.sock instance show demo
#
# For tests: SCALWS_SKIP_SETUP=1 skips installing and building, SCALWS_STATE_DIR and
# SCALWS_EXAMPLE_PORT move the state and the port.
set -eu
cd "$(dirname "$0")/.."
if [ "${SCALWS_SKIP_SETUP:-0}" != 1 ]; then
  ./deploy/install-deps.sh
  ./deploy/build.sh
fi

state="${SCALWS_STATE_DIR:-$PWD/.state}"
port="${SCALWS_EXAMPLE_PORT:-8080}"
socket="$state/control.sock"
mkdir -p "$state"
# An instance's config is a site without [server]: its mode, CPUs and user come from
# `instance add`. The demo is the example site with that table left out.
# Relative roots in the example are relative to deploy/examples/; the copy lives in .state/,
# so they are made absolute.
deploy/examples/instance-config.sh deploy/examples/site.toml "$PWD/deploy/examples" "$port" \
  >"$state/demo.toml"

ctl() { ./build/bin/scalwsctl --socket "$socket" "$@"; }

# Its own session, so Ctrl-C reaches it once, through the trap below: one SIGINT stops the
# instances gracefully (a second one would make it leave without waiting for them).
setsid ./build/bin/scalws-controller --state-dir "$state" --socket "$socket" &
controller=$!
stop() {
  trap - INT TERM
  kill -INT "$controller" 2>/dev/null || true
  wait "$controller" || true
}
trap 'echo; stop; exit 0' INT TERM
fail() {
  echo "run-example: $1" >&2
  stop
  exit 1
}

tries=0
until ctl status >/dev/null 2>&1; do
  kill -0 "$controller" 2>/dev/null || fail "the controller did not start (see above)"
  tries=$((tries + 1))
  [ "$tries" -lt 100 ] || fail "the controller does not answer on $socket"
  sleep 0.1
done

cpus=$(nproc)
[ "$cpus" -le 2 ] || cpus=2
if ctl instance show demo >/dev/null 2>&1; then
  # Left from an earlier run (the controller has already started it again): refresh it.
  ctl instance set demo --config "$state/demo.toml" >/dev/null || fail "cannot update the demo"
  ctl instance start demo >/dev/null || fail "cannot start the demo instance"
  ctl instance reload demo >/dev/null || fail "cannot reload the demo instance"
else
  ctl instance add demo --config "$state/demo.toml" --cpus "$cpus" --shared-cpus >/dev/null ||
    fail "cannot add the demo instance"
  ctl instance start demo >/dev/null || fail "cannot start the demo instance"
fi
ctl instance list
echo "scalws: the demo instance serves deploy/examples/ on http://127.0.0.1:$port/ (Ctrl-C stops it)"
wait "$controller"
