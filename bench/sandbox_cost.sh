#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# What the sandbox costs per request, from two exact parts instead of one noisy ratio:
#
#   bench/sandbox_cost.sh [--bin DIR] [--cpu N] [--client-cpu N] [--rounds N]
#
# 1. scalws-sandbox-cost: ns per call of the system calls a worker makes per request, in
#    processes taking turns on the same CPU: privilege drop only, + an allow-all seccomp
#    filter, + our filter, + Landlock and our filter (tests/tools/sandbox_cost.cpp).
# 2. System calls per request of a sandboxed scalwsd worker serving `respond`, a 1 KiB
#    static file (the bench's static-small: open-file cache in check mode) and a proxied
#    request on a kept upstream connection (an nginx on the client CPU answers it) under
#    wrk, counted by the kernel's raw_syscalls tracepoint (perf stat; no PMU needed).
# Their product is the sandbox's CPU per request; bench/run.sh --servers
# scalws,scalws-nosandbox shows whether a whole benchmark can see it.
set -euo pipefail
BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/common.sh
source "$BENCH_DIR/lib/common.sh"
BENCH_LOG_PREFIX=sandbox_cost.sh  # for die() and log() of lib/common.sh
BIN=$BENCH_DIR/../build/bin
CPU=0
CLIENT_CPU=1
ROUNDS=21
while (($#)); do
  case $1 in
    --bin) BIN=$2; shift ;;
    --cpu) CPU=$2; shift ;;
    --client-cpu) CLIENT_CPU=$2; shift ;;
    --rounds) ROUNDS=$2; shift ;;
    -h | --help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "sandbox_cost.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
for tool in perf wrk taskset nginx; do
  command -v $tool >/dev/null || die "$tool missing (deploy/install-deps.sh)"
done

dir=$(mktemp -d /tmp/scalws-sandbox-cost.XXXXXX)
server=""
upstream=""
cleanup() {
  [[ -n $server ]] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  [[ -n $upstream ]] && kill -QUIT "$upstream" 2>/dev/null && wait "$upstream" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
mkdir "$dir/www"
head -c 1024 /dev/urandom >"$dir/www/small.bin"
chmod -R a+rX "$dir"
user_line=""
[[ $(id -u) == 0 ]] && user_line='user = "www-data"'
port=""
pick_free_port port
upstream_port=""
pick_free_port upstream_port
nginx_user=""
[[ $(id -u) == 0 ]] && nginx_user="user nobody nogroup;"
mkdir "$dir/nginx"
cat >"$dir/nginx/nginx.conf" <<EOT
$nginx_user
worker_processes 1;
pid $dir/nginx/nginx.pid;
error_log $dir/nginx/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
  client_body_temp_path $dir/nginx/body;
  proxy_temp_path $dir/nginx/proxy;
  fastcgi_temp_path $dir/nginx/fastcgi;
  uwsgi_temp_path $dir/nginx/uwsgi;
  scgi_temp_path $dir/nginx/scgi;
  server {
    listen 127.0.0.1:$upstream_port;
    location / { return 200 "hello from the upstream\n"; }
  }
}
EOT
cat >"$dir/site.toml" <<EOT
[server]
workers = 1
cpus = [$CPU]
$user_line
sandbox = true
log_level = "warn"
max_requests_per_connection = 1000000
[[listen]]
address = "127.0.0.1:$port"
[[route]]
match = { exact = "/respond" }
respond = { status = 200, body = "hello, world\n", headers = { "content-type" = "text/plain" } }
[[route]]
match = { prefix = "/proxy" }
proxy = { upstream = "peer" }
[[route]]
match = { prefix = "/" }
static = { root = "$dir/www", open_file_cache = "check" }
[upstream.peer]
servers = ["127.0.0.1:$upstream_port"]
keepalive = 64
EOT

echo "== ns per system call, each layer of the sandbox added in turn (CPU $CPU)"
taskset -c "$CPU" "$BIN/scalws-sandbox-cost" --config "$dir/site.toml" \
  --file "$dir/www/small.bin" --rounds "$ROUNDS" 2>/dev/null

echo
echo "== system calls per request of a sandboxed worker (wrk, 64 connections, 3 s)"
taskset -c "$CLIENT_CPU" nginx -p "$dir/nginx" -c "$dir/nginx/nginx.conf" -g "daemon off;" \
  >"$dir/nginx/out.log" 2>&1 &
upstream=$!
wait_for_listen "$upstream_port" "$upstream" || die "nginx did not start: $(cat "$dir/nginx/out.log")"
taskset -c "$CPU" "$BIN/scalwsd" --config "$dir/site.toml" >"$dir/server.log" 2>&1 &
server=$!
wait_for_listen "$port" "$server" || die "scalwsd did not start: $(cat "$dir/server.log")"
worker=$(first_child "$server") || die "no worker process (see $dir/server.log)"
for path in /respond /small.bin /proxy; do
  taskset -c "$CLIENT_CPU" wrk -t1 -c64 -d1s "http://127.0.0.1:$port$path" >/dev/null  # warm-up
  perf stat -x, -e raw_syscalls:sys_enter -p "$worker" -o "$dir/perf.txt" -- \
    taskset -c "$CLIENT_CPU" wrk -t1 -c64 -d3s "http://127.0.0.1:$port$path" >"$dir/wrk.txt"
  calls=$(awk -F, '/raw_syscalls:sys_enter/ {print $1}' "$dir/perf.txt")
  requests=$(awk '/requests in/ {print $1}' "$dir/wrk.txt")
  awk -v p="$path" -v c="$calls" -v r="$requests" \
    'BEGIN { printf "%-12s %d requests, %d system calls: %.2f per request\n", p, r, c, c / r }'
done
