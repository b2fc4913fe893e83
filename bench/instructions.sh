#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# Instructions per request in user space of one scalwsd worker, under callgrind: exact and
# repeatable where req/s and CPU time on a VM move by 20 % between rounds (README.md,
# "Traps"). The kernel's share (TCP, the sandbox's syscall entry) is not in it.
#
#   bench/instructions.sh [--scalwsd PATH] [--requests N]
#
# Runs the worker twice under callgrind, serving N/10 and then N + N/10 `respond` requests
# (h2load --h1, 8 connections), and divides the difference by N, so start-up and shutdown
# cancel out. The sandbox is off (valgrind cannot follow seccomp) and the static and php
# actions cannot be measured this way (valgrind 3.19 does not know openat2).
set -euo pipefail
BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/common.sh
source "$BENCH_DIR/lib/common.sh"
BENCH_LOG_PREFIX=instructions.sh  # for die() and log() of lib/common.sh
SCALWSD=$BENCH_DIR/../build/bin/scalwsd
REQUESTS=20000
while (($#)); do
  case $1 in
    --scalwsd) SCALWSD=$2; shift ;;
    --requests) REQUESTS=$2; shift ;;
    -h | --help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "instructions.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
for tool in valgrind h2load; do
  command -v $tool >/dev/null || die "$tool missing (deploy/install-deps.sh)"
done

# Instructions of the worker process after serving $1 requests.
worker_instructions() {
  local n=$1 dir port vg worker
  dir=$(mktemp -d /tmp/scalws-ir.XXXXXX)
  chmod 1777 "$dir"  # the worker drops to nobody and writes its profile here
  port=""
  pick_free_port port
  cat >"$dir/site.toml" <<EOT
[server]
workers = 1
sandbox = false
log_level = "warn"
max_requests_per_connection = 1000000
[[listen]]
address = "127.0.0.1:$port"
[[route]]
match = { exact = "/respond" }
respond = { status = 200, body = "hello, world\n", headers = { "content-type" = "text/plain" } }
EOT
  valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$dir/cg.%p.out" \
    "$SCALWSD" --config "$dir/site.toml" >"$dir/valgrind.log" 2>&1 &
  vg=$!
  wait_for_listen "$port" "$vg" 30 || die "scalwsd under valgrind did not start: $(cat "$dir/valgrind.log")"
  worker=$(first_child "$vg" 30) || die "no worker under valgrind: $(cat "$dir/valgrind.log")"
  h2load --h1 -n "$n" -c 8 "http://127.0.0.1:$port/respond" | grep -q "$n succeeded" ||
    { echo "instructions.sh: not every request succeeded" >&2; kill "$vg"; exit 1; }
  kill "$vg"
  while kill -0 "$vg" 2>/dev/null; do sleep 0.2; done
  awk '/^summary:/ {print $2}' "$dir/cg.$worker.out"*
  rm -rf "$dir"
}

base=$((REQUESTS / 10))
small=$(worker_instructions "$base")
large=$(worker_instructions $((base + REQUESTS)))
echo "$SCALWSD: $(((large - small) / REQUESTS)) instructions per respond request (user space, worker; $REQUESTS requests)"
