#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# Instructions per request in user space of one scalwsd worker, under callgrind: exact and
# repeatable where req/s and CPU time on a VM move by 20 % between rounds (README.md,
# "Traps"). The kernel's share (TCP, the sandbox's syscall entry) is not in it.
#
#   bench/instructions.sh [--scalwsd PATH] [--requests N]
#                         [--scenario respond|static-small|proxy|cache-hit|node]
#
# Runs the worker twice under callgrind, serving N/10 and then N + N/10 requests (h2load
# --h1, 8 connections), and divides the difference by N, so start-up and shutdown cancel
# out. The sandbox is off (valgrind cannot follow seccomp). `respond` is a fixed response;
# `static-small` a 1 KiB file through the open-file cache in check mode, as the benchmark's
# scenario. valgrind 3.19 does not know openat2, so for static-small a small preloaded shim
# (built here with cc) turns the worker's openat2 calls into openat: the count is exact for
# comparing two builds, and the shim's few instructions are outside the per-request path
# (a cache hit opens nothing). `proxy` is a proxy route to an upstream (a second scalwsd,
# not measured) over kept connections; `cache-hit` the same route with the response cache,
# the upstream answering with max-age=3600: every request after the first is a memory hit,
# as the benchmark's scenario. `node` is the proxy route to the benchmark's hello-world Node.js
# app on a unix socket (bench/apps/hello.js, not measured), as the `node` scenario. With
# KEEP_CG=DIR the two
# profiles stay in DIR as cg.N.out, for callgrind_annotate to tell where two builds differ.
set -euo pipefail
BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/common.sh
source "$BENCH_DIR/lib/common.sh"
BENCH_LOG_PREFIX=instructions.sh  # for die() and log() of lib/common.sh
SCALWSD=$BENCH_DIR/../build/bin/scalwsd
REQUESTS=20000
SCENARIO=respond
while (($#)); do
  case $1 in
    --scalwsd) SCALWSD=$2; shift ;;
    --requests) REQUESTS=$2; shift ;;
    --scenario) SCENARIO=$2; shift ;;
    -h | --help) sed -n '3,20p' "$0"; exit 0 ;;
    *) echo "instructions.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
case $SCENARIO in
  respond) URL_PATH=/respond ;;
  static-small) URL_PATH=/small.txt ;;
  proxy) URL_PATH=/proxied ;;
  cache-hit) URL_PATH=/cached ;;
  node) URL_PATH=/node ;;
  *) echo "instructions.sh: unknown scenario $SCENARIO" >&2; exit 2 ;;
esac
for tool in valgrind h2load; do
  command -v $tool >/dev/null || die "$tool missing (deploy/install-deps.sh)"
done

# An LD_PRELOAD library whose syscall() runs openat2 as openat (see the header).
build_openat2_shim() {
  cat >"$1/openat2_shim.c" <<'EOT'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <sys/syscall.h>
long syscall(long number, ...) {
  va_list ap;
  va_start(ap, number);
  long a[6];
  for (int i = 0; i < 6; ++i) a[i] = va_arg(ap, long);
  va_end(ap);
  if (number == SYS_openat2) {
    const struct open_how* how = (const struct open_how*)a[2];
    return openat((int)a[0], (const char*)a[1], (int)how->flags, (mode_t)how->mode);
  }
  static long (*real)(long, ...);
  if (!real) real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
  return real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}
EOT
  cc -shared -fPIC -O2 -o "$1/openat2_shim.so" "$1/openat2_shim.c" -ldl ||
    die "cannot build the openat2 shim (cc missing?)"
}

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
  local preload=()
  if [[ $SCENARIO == static-small ]]; then
    cat >>"$dir/site.toml" <<EOT
[[route]]
match = { prefix = "/" }
static = { root = "$dir/www", open_file_cache = "check" }
EOT
    mkdir -m 0755 "$dir/www"
    head -c 1024 /dev/zero | tr '\0' 'x' >"$dir/www/small.txt"
    chmod 0644 "$dir/www/small.txt"
    build_openat2_shim "$dir"
    preload=(env "LD_PRELOAD=$dir/openat2_shim.so")
  fi
  local upstream=""
  if [[ $SCENARIO == node ]]; then
    PORT=$dir/app.sock node "$BENCH_DIR/apps/hello.js" >"$dir/app.log" 2>&1 &
    upstream=$!
    local waited=0
    until [[ -S $dir/app.sock ]]; do
      ((waited++ < 100)) || die "the node app did not start: $(cat "$dir/app.log")"
      sleep 0.1
    done
    chmod 0666 "$dir/app.sock"  # the worker drops to nobody
    cat >>"$dir/site.toml" <<EOT
[[route]]
match = { prefix = "/" }
proxy = { upstream = "app" }
[upstream.app]
servers = ["unix:$dir/app.sock"]
keepalive = 64
EOT
  fi
  if [[ $SCENARIO == cache-hit || $SCENARIO == proxy ]]; then
    local upstream_port=""
    pick_free_port upstream_port
    cat >"$dir/upstream.toml" <<EOT
[server]
workers = 1
sandbox = false
log_level = "warn"
[[listen]]
address = "127.0.0.1:$upstream_port"
[[route]]
match = { prefix = "/" }
respond = { status = 200, body = "hello from the upstream\n", headers = { "content-type" = "text/plain", "cache-control" = "public, max-age=3600" } }
EOT
    "$SCALWSD" --config "$dir/upstream.toml" >"$dir/upstream.log" 2>&1 &
    upstream=$!
    wait_for_listen "$upstream_port" "$upstream" 30 || die "upstream scalwsd did not start: $(cat "$dir/upstream.log")"
    local cache_line='' cache_table=''
    if [[ $SCENARIO == cache-hit ]]; then
      cache_line=', cache = "bench"'
      cache_table=$'[cache.bench]\nmemory = "64m"'
    fi
    cat >>"$dir/site.toml" <<EOT
[[route]]
match = { prefix = "/" }
proxy = { upstream = "backend"$cache_line }
[upstream.backend]
servers = ["127.0.0.1:$upstream_port"]
keepalive = 64
$cache_table
EOT
  fi
  "${preload[@]}" valgrind --tool=callgrind --trace-children=yes \
    --callgrind-out-file="$dir/cg.%p.out" \
    "$SCALWSD" --config "$dir/site.toml" >"$dir/valgrind.log" 2>&1 &
  vg=$!
  wait_for_listen "$port" "$vg" 30 || die "scalwsd under valgrind did not start: $(cat "$dir/valgrind.log")"
  worker=$(first_child "$vg" 30) || die "no worker under valgrind: $(cat "$dir/valgrind.log")"
  h2load --h1 -n "$n" -c 8 "http://127.0.0.1:$port$URL_PATH" | grep -q "$n succeeded" ||
    { echo "instructions.sh: not every request succeeded" >&2; kill "$vg"; exit 1; }
  kill "$vg"
  while kill -0 "$vg" 2>/dev/null; do sleep 0.2; done
  if [[ -n $upstream ]]; then
    kill "$upstream"
    wait "$upstream" 2>/dev/null || true
  fi
  awk '/^summary:/ {print $2}' "$dir/cg.$worker.out"*
  [[ -n ${KEEP_CG:-} ]] && cp "$dir"/cg."$worker".out* "$KEEP_CG/cg.$n.out"
  rm -rf "$dir"
}

base=$((REQUESTS / 10))
small=$(worker_instructions "$base")
large=$(worker_instructions $((base + REQUESTS)))
echo "$SCALWSD: $(((large - small) / REQUESTS)) instructions per $SCENARIO request (user space, worker; $REQUESTS requests)"
