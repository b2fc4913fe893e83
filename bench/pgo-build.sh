#!/usr/bin/env bash
# bench/pgo-build.sh — the profile-guided release build of ScalWS, in three steps:
#   1. build scalwsd instrumented (-DSCALWS_PGO=generate) into GENERATE_DIR;
#   2. train it: bench/run.sh --quick runs the benchmark's scenarios against it for a few
#      seconds each (static, respond, TLS + HTTP/2, HTTP/3, PHP, and proxy and cache wherever
#      `scalwsd --check-config` accepts their config), which leaves the profile in
#      PROFILE_DIR;
#   3. build everything with the profile and LTO (-DSCALWS_PGO=use -DSCALWS_LTO=ON) into
#      BUILD_DIR; `BUILD_DIR/bin/scalwsd --version` says so.
# --train-only does step 2 alone, for a binary built elsewhere (debian/rules builds the
# instrumented binary and the final one with dh, with Debian's flags, and calls this).
#
# Training runs ScalWS in single mode (one process, a loop thread per worker): its process
# leaves through main, which is when an instrumented binary writes its counts (the worker
# processes of multi mode end in _exit). And without the sandbox: Landlock would refuse the
# writes. The code that serves is the same in both modes. Needs what bench/run.sh needs
# (root for the usual run; deploy/install-deps.sh installs the tools).
set -Eeuo pipefail
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$BENCH_DIR/.." && pwd)

GENERATE_DIR=$REPO_DIR/build-pgo-generate
BUILD_DIR=$REPO_DIR/build-pgo
PROFILE_DIR=""
TRAIN_ONLY=0
SCALWSD=""
DURATION=4
JOBS=$(nproc)
SCENARIOS=static-small,static-1m,respond,proxy,proxy-churn,cache-hit,tls-h2-static-small,h3-static-small,php

usage() {
  cat <<USAGE
usage: bench/pgo-build.sh [options] [-- extra cmake arguments for both builds]

  --build-dir DIR      the optimised build (default: build-pgo)
  --generate-dir DIR   the instrumented build (default: build-pgo-generate)
  --profile-dir DIR    where the profile goes (default: GENERATE_DIR/pgo-profile)
  --duration S         seconds of load per scenario while training (default: $DURATION)
  --scenarios a,b      scenarios to train on (default: $SCENARIOS)
  --train-only         step 2 only, on --scalwsd BIN (an instrumented build's scalwsd)
  --scalwsd BIN        with --train-only
  -j N                 build jobs (default: $JOBS)
USAGE
}

die() {
  printf 'pgo-build: error: %s\n' "$*" >&2
  exit 1
}
log() { printf 'pgo-build: %s\n' "$*" >&2; }

EXTRA=()
while (($#)); do
  case $1 in
    --build-dir) BUILD_DIR=$2; shift ;;
    --generate-dir) GENERATE_DIR=$2; shift ;;
    --profile-dir) PROFILE_DIR=$2; shift ;;
    --duration) DURATION=$2; shift ;;
    --scenarios) SCENARIOS=$2; shift ;;
    --train-only) TRAIN_ONLY=1 ;;
    --scalwsd) SCALWSD=$2; shift ;;
    -j) JOBS=$2; shift ;;
    -h | --help) usage; exit 0 ;;
    --) shift; EXTRA=("$@"); break ;;
    *) usage >&2; die "unknown option '$1'" ;;
  esac
  shift
done
PROFILE_DIR=${PROFILE_DIR:-$GENERATE_DIR/pgo-profile}
[[ $PROFILE_DIR == /* ]] || PROFILE_DIR=$PWD/$PROFILE_DIR

# Step 2. The profile directory starts empty (counts of an earlier run would add up with
# these) and world-writable: the server drops to www-data when started as root.
train() {
  local bin=$1 results
  [[ -x $bin ]] || die "no scalwsd at $bin"
  "$bin" --version | grep -q '; PGO generate;' || die "$bin is not an instrumented build (--version)"
  rm -rf "$PROFILE_DIR"
  mkdir -p "$PROFILE_DIR"
  chmod 1777 "$PROFILE_DIR"
  results=$(mktemp -d /tmp/scalws-pgo-train.XXXXXX)
  log "training $bin on $SCENARIOS, ${DURATION}s each; profile in $PROFILE_DIR"
  local rc=0
  "$BENCH_DIR/run.sh" --quick --quick-duration "$DURATION" --scalws-mode single \
    --servers "scalws-nosandbox@$bin" --scenarios "$SCENARIOS" --results "$results" || rc=$?
  rm -rf "$results"
  ((rc == 0)) || die "training failed (bench/run.sh --quick exit $rc)"
  local n
  n=$(find "$PROFILE_DIR" -name '*.gcda' | wc -l)
  ((n > 0)) || die "the training wrote no profile into $PROFILE_DIR"
  log "profile: $n files"
}

if ((TRAIN_ONLY)); then
  [[ -n $SCALWSD ]] || die "--train-only needs --scalwsd BIN"
  train "$SCALWSD"
  exit 0
fi

cd "$REPO_DIR"
common=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DSCALWS_TESTS=OFF "-DSCALWS_PGO_DIR=$PROFILE_DIR"
  "${EXTRA[@]}")
log "1/3: instrumented build in $GENERATE_DIR"
cmake -S . -B "$GENERATE_DIR" "${common[@]}" -DSCALWS_PGO=generate -DSCALWS_LTO=OFF >/dev/null
# The HTTP/3 scenario's load tool comes from the same build (run.sh looks next to scalwsd);
# without HTTP/3 that scenario is n/a and the training goes on without it.
targets=(scalwsd)
grep -q '^SCALWS_HTTP3:BOOL=ON$' "$GENERATE_DIR/CMakeCache.txt" && targets+=(scalws-h3load)
cmake --build "$GENERATE_DIR" -j"$JOBS" --target "${targets[@]}"
log "2/3: training"
train "$GENERATE_DIR/bin/scalwsd"
log "3/3: optimised build (profile + LTO) in $BUILD_DIR"
cmake -S . -B "$BUILD_DIR" "${common[@]}" -DSCALWS_PGO=use -DSCALWS_LTO=ON >/dev/null
cmake --build "$BUILD_DIR" -j"$JOBS"
"$BUILD_DIR/bin/scalwsd" --version
log "done: compare it with the plain build: bench/run.sh --servers scalws@$(basename "$BUILD_DIR"),scalws@build --gate"
