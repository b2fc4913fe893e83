# shellcheck shell=bash
# shellcheck disable=SC2034  # globals shared between the sourced files
# Servers under test (scalws and its variants, each from a build of its own if asked; nginx;
# h2o) and their peers (the upstream nginx, the php-fpm pool): rendering their configs from
# bench/configs/, starting them pinned on a free port, checking they are the only listener
# there, and stopping them by PID.
#
# Uses the globals run.sh sets: BENCH_DIR RUNDIR DOCROOT TLS_CERT TLS_KEY WORKERS
# PEER_WORKERS SERVER_CPUS PEER_CPUS PHP_CPUS PHP_CHILDREN SCALWS_MODE SERVER_BIN NGINX_BIN
# H2O_BIN PHP_FPM_BIN.

# Per server name ("scalws", "nginx", "nginx#2"):
declare -gA SRV_KIND=() SRV_DIR=() SRV_PORT=() SRV_PID=() SRV_CONF=() SRV_NA=() \
  SRV_PIDSET=() SRV_BIN=() SRV_SHARED=()

# The scalwsd binary of a server spec "KIND[@BUILD]": BUILD is a build directory (its
# bin/scalwsd) or a scalwsd binary, relative to the current directory or the repository;
# without it, scalws-nometrics is --scalwsd-nometrics (a build with SCALWS_METRICS=OFF) and
# the other kinds --scalwsd.
scalwsd_of_spec() {
  local kind=${1%%@*} build="" base
  [[ $1 == *@* ]] && build=${1#*@}
  if [[ -z $build ]]; then
    case $kind in
      scalws-nometrics) printf '%s\n' "$SCALWSD_NOMETRICS" ;;
      *) printf '%s\n' "$SCALWSD" ;;
    esac
    return 0
  fi
  for base in "$PWD" "$REPO_DIR"; do
    [[ $build == /* ]] && base=""
    if [[ -f ${base:+$base/}$build ]]; then
      printf '%s\n' "${base:+$base/}$build"
      return 0
    fi
    if [[ -d ${base:+$base/}$build ]]; then
      printf '%s\n' "${base:+$base/}$build/bin/scalwsd"
      return 0
    fi
  done
  printf '%s\n' "$build/bin/scalwsd"  # absent: the server reads n/a, naming this path
}

# Peers of the current scenario.
PEER_UP_PID="" PEER_UP_PORT="" PEER_UP_DIR=""
PEER_PHP_PID="" PEER_PHP_DIR="" PHP_SOCK=""
# The app peer (node, python): its processes and sockets, and the sockets written out for
# each server's config.
PEER_APP_PIDS=() APP_SOCKS=() APP_SOCKS_NGINX="" APP_SOCKS_TOML="" APP_SOCK0=/nonexistent

# ---------------------------------------------------------------------------------------
# Template values shared by servers and peers.

# "user www-data;" for nginx when we are root (workers drop to it), a comment otherwise.
nginx_user_line() {
  if [[ $(id -u) == 0 ]]; then
    printf 'user www-data www-data;\n'
  else
    printf '# not started as root: workers keep the current user\n'
  fi
}

h2o_user_line() {
  if [[ $(id -u) == 0 ]]; then
    printf 'user: www-data\n'
  else
    printf '# not started as root: keeps the current user\n'
  fi
}

scalws_user_line() {
  if [[ $(id -u) == 0 ]]; then
    printf 'user = "www-data"\n'
  else
    printf '# not started as root: workers keep the current user\n'
  fi
}

# worker_cpu_affinity masks: worker i on the i-th CPU of the list (round robin).
nginx_affinity() {
  local cpus=$1 workers=$2 i c max=0
  local -a list masks=()
  mapfile -t list < <(cpu_list_expand "$cpus")
  for c in "${list[@]}"; do ((c > max)) && max=$c; done
  for ((i = 0; i < workers; i++)); do
    c=${list[i % ${#list[@]}]}
    local mask="" b
    for ((b = max; b >= 0; b--)); do
      if ((b == c)); then mask+=1; else mask+=0; fi
    done
    masks+=("$mask")
  done
  printf '%s\n' "${masks[*]}"
}

cpus_toml() { cpu_list_expand "$1" | paste -sd, - | sed 's/,/, /g'; }

# ---------------------------------------------------------------------------------------
# Run-wide fixtures: docroot files and the TLS certificate.

prepare_docroot() {
  mkdir -p "$DOCROOT"
  # 1 KiB of text, 1 MiB of random bytes.
  head -c 1024 /dev/zero | tr '\0' 'a' >"$DOCROOT/small.txt"
  head -c 1048576 /dev/urandom >"$DOCROOT/large.bin"
  cp "$BENCH_DIR/www/index.php" "$BENCH_DIR/www/gzip.php" "$DOCROOT/"
  chmod -R a+rX "$DOCROOT"
}

prepare_tls() {
  mkdir -p "$RUNDIR/tls"
  TLS_CERT=$RUNDIR/tls/cert.pem
  TLS_KEY=$RUNDIR/tls/key.pem
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
    -keyout "$TLS_KEY" -out "$TLS_CERT" >/dev/null 2>&1 || die "openssl could not make a certificate"
  chmod 0644 "$TLS_CERT" "$TLS_KEY"
}

# ---------------------------------------------------------------------------------------
# Servers under test.

# server_prepare NAME KIND SCENARIO: picks a port and renders the config. Returns 1 and sets
# SRV_NA[NAME] when this server cannot run the scenario (scalwsd missing, or
# `scalwsd --check-config` refuses the config).
server_prepare() {
  local name=$1 kind=$2 scenario=$3 slug dir port
  local config=${SC_BASE[$scenario]:-$scenario}  # a -shared scenario uses its base's
  slug=${name//[#@\/]/-}
  dir=$RUNDIR/srv/$scenario/$slug
  rm -rf "$dir"
  mkdir -p "$dir/tmp"
  pick_free_port port
  SRV_KIND[$name]=$kind
  SRV_DIR[$name]=$dir
  SRV_PORT[$name]=$port
  SRV_PID[$name]=""
  SRV_NA[$name]=""
  SRV_SHARED[$name]=0
  [[ ${SC_SHARED[$scenario]:-0} == 1 && $kind == scalws* ]] && SRV_SHARED[$name]=1
  local -a vars=(
    "PORT=$port" "SRVDIR=$dir" "DOCROOT=$DOCROOT" "WORKERS=$WORKERS"
    "UPSTREAM_PORT=${PEER_UP_PORT:-0}" "PHP_SOCK=${PHP_SOCK:-/nonexistent}"
    "PHP_CHILDREN=$PHP_CHILDREN" "PHP_KEEP=$((PHP_CHILDREN / ${#SERVER_NAMES[@]}))" "CERT=$TLS_CERT"
    "KEY=$TLS_KEY" "APP_SOCKS_NGINX=$APP_SOCKS_NGINX" "APP_SOCKS_TOML=$APP_SOCKS_TOML"
    "APP_SOCK0=$APP_SOCK0"
  )
  case $kind in
    nginx)
      if [[ ! -r $BENCH_DIR/configs/nginx/$config.conf.in ]]; then
        SRV_NA[$name]="no nginx config for $scenario (Debian's nginx 1.22 has no HTTP/3)"
        return 1
      fi
      local reuse=""
      ((WORKERS > 1)) && reuse=" reuseport"
      render_template "$BENCH_DIR/configs/nginx/$config.conf.in" "$dir/site.conf" \
        "${vars[@]}" "REUSEPORT=$reuse"
      render_template "$BENCH_DIR/configs/nginx/main.conf.in" "$dir/nginx.conf" "${vars[@]}" \
        "USER_LINE=$(nginx_user_line)" "AFFINITY=$(nginx_affinity "$SERVER_CPUS" "$WORKERS")"
      SRV_CONF[$name]=$dir/nginx.conf
      if ! "$NGINX_BIN" -q -t -p "$dir" -c "$dir/nginx.conf" >"$dir/check.log" 2>&1; then
        cat "$dir/check.log" >&2
        die "nginx refused its own config for $scenario ($dir/nginx.conf)"
      fi
      ;;
    h2o)
      if [[ ! -f $BENCH_DIR/configs/h2o/$config.yaml.in ]]; then
        SRV_NA[$name]=$(cat "$BENCH_DIR/configs/h2o/$config.na" 2>/dev/null ||
          echo "no bench/configs/h2o/$config.yaml.in")
        return 1
      fi
      render_template "$BENCH_DIR/configs/h2o/_main.yaml.in" "$dir/main.part" "${vars[@]}" \
        "USER_LINE=$(h2o_user_line)"
      render_template "$BENCH_DIR/configs/h2o/$config.yaml.in" "$dir/site.part" "${vars[@]}"
      { cat "$dir/main.part"; echo; cat "$dir/site.part"; } >"$dir/h2o.yaml"
      rm -f "$dir/main.part" "$dir/site.part"
      SRV_CONF[$name]=$dir/h2o.yaml
      if ! "$H2O_BIN" -t -c "$dir/h2o.yaml" >"$dir/check.log" 2>&1; then
        cat "$dir/check.log" >&2
        die "h2o refused its own config for $scenario ($dir/h2o.yaml)"
      fi
      ;;
    scalws | scalws-nosandbox | scalws-nometrics)
      local sandbox=true bin=${SERVER_BIN[$name]}
      SRV_BIN[$name]=$bin
      if [[ ${SC_SHARED[$scenario]:-0} == 1 ]]; then
        shared_prepare "$name" "$kind" "$scenario" "$config" "${vars[@]}"
        return
      fi
      [[ $kind == scalws-nosandbox ]] && sandbox=false
      local server_part
      server_part=$(mktemp "$dir/server.XXXXXX")
      render_template "$BENCH_DIR/configs/scalws/_server.toml.in" "$server_part" "${vars[@]}" \
        "USER_LINE=$(scalws_user_line)" "CPUS_TOML=$(cpus_toml "$SERVER_CPUS")" \
        "SANDBOX=$sandbox" "MODE=$SCALWS_MODE"
      render_template "$BENCH_DIR/configs/scalws/$config.toml.in" "$dir/site.part" \
        "${vars[@]}"
      { cat "$server_part"; echo; cat "$dir/site.part"; } >"$dir/scalws.toml"
      rm -f "$server_part" "$dir/site.part"
      SRV_CONF[$name]=$dir/scalws.toml
      if [[ ! -x $bin ]]; then
        SRV_NA[$name]="no scalwsd binary at $bin"
        return 1
      fi
      if [[ ${SC_TOOL[$scenario]} == h3load && ! -x $H3LOAD ]]; then
        SRV_NA[$name]="no HTTP/3 load tool at $H3LOAD (a build with SCALWS_HTTP3)"
        return 1
      fi
      if ! "$bin" --check-config "$dir/scalws.toml" >"$dir/check.log" 2>&1; then
        SRV_NA[$name]="scalwsd --check-config refused it: $(head -c 300 "$dir/check.log" | tr '\n' ' ')"
        return 1
      fi
      ;;
    *) die "unknown server kind '$kind'" ;;
  esac
  return 0
}

# ScalWS behind a shared address (a -shared scenario): the scenario's site is the default
# instance of 127.0.0.1:PORT under a scalws-controller of its own, and a second instance
# claims another name there, so the address is shared and every connection of the load
# goes through its front (wrk's Host, 127.0.0.1:PORT, is a name nobody claims). Only the
# plain kind, and only as root: the controller binds, spawns and drops privileges.
shared_prepare() {
  local name=$1 kind=$2 scenario=$3 config=$4 dir=${SRV_DIR[$1]} bin=${SRV_BIN[$1]}
  shift 4
  if [[ $kind != scalws ]]; then
    SRV_NA[$name]="a shared address runs under the controller, which has no $kind variant"
    return 1
  fi
  if [[ $(id -u) != 0 ]]; then
    SRV_NA[$name]="a shared address needs scalws-controller, which runs as root"
    return 1
  fi
  local bindir=${bin%/*}
  if [[ ! -x $bindir/scalws-controller || ! -x $bindir/scalwsctl || ! -x $bindir/scalws-front ]]; then
    SRV_NA[$name]="no scalws-controller, scalwsctl and scalws-front beside $bin"
    return 1
  fi
  render_template "$BENCH_DIR/configs/scalws/$config.toml.in" "$dir/site.toml" "$@"
  # The default of the address: the load's Host names nobody.
  sed -i '0,/^address = /{/^address = /a default = true
}' "$dir/site.toml"
  printf '[[listen]]\naddress = "127.0.0.1:%s"\nnames = ["other.invalid"]\n[[route]]\nrespond = { body = "other\\n" }\n' \
    "${SRV_PORT[$name]}" >"$dir/other.toml"
  SRV_CONF[$name]=$dir/site.toml
  if ! "$bin" --check-config "$dir/site.toml" >"$dir/check.log" 2>&1; then
    SRV_NA[$name]="scalwsd --check-config refused it: $(head -c 300 "$dir/check.log" | tr '\n' ' ')"
    return 1
  fi
  return 0
}

shared_start() {
  local name=$1 dir=${SRV_DIR[$1]} port=${SRV_PORT[$1]} bin=${SRV_BIN[$1]} pid
  local bindir=${bin%/*} ctl
  ctl=("$bindir/scalwsctl" --socket "$dir/control.sock")
  taskset -c "$SERVER_CPUS" "$bindir/scalws-controller" --state-dir "$dir/state" \
    --socket "$dir/control.sock" --scalwsd "$bin" --scalws-front "$bindir/scalws-front" \
    --front-user nobody >"$dir/stdout.log" 2>&1 &
  pid=$!
  register_proc "$pid"
  SRV_PID[$name]=$pid
  local i
  for ((i = 0; i < 200; i++)); do
    "${ctl[@]}" status >/dev/null 2>&1 && break
    proc_is_ours "$pid" || break
    sleep 0.05
  done
  local user=nobody
  id www-data >/dev/null 2>&1 && user=www-data
  if ! "${ctl[@]}" instance add bench --config "$dir/site.toml" --cpus "$WORKERS" \
      --mode "$SCALWS_MODE" --shared-cpus --user "$user" >>"$dir/ctl.log" 2>&1 ||
    ! "${ctl[@]}" instance add other --config "$dir/other.toml" --shared-cpus \
      --user nobody >>"$dir/ctl.log" 2>&1 ||
    ! "${ctl[@]}" instance start bench >>"$dir/ctl.log" 2>&1 ||
    ! "${ctl[@]}" instance start other >>"$dir/ctl.log" 2>&1 ||
    ! wait_for_listen "$port" "$pid" 10; then
    warn "$name (shared) did not start on 127.0.0.1:$port; its logs:"
    tail -n 20 "$dir/ctl.log" "$dir/stdout.log" >&2 2>/dev/null || true
    stop_proc "$pid" 40
    SRV_PID[$name]=""
    return 1
  fi
  SRV_PIDSET[$name]=$(server_core_pids "$name" | paste -sd' ' -)
  return 0
}

# Starts a prepared server pinned to SERVER_CPUS and waits until it listens.
server_start() {
  local name=$1 dir=${SRV_DIR[$1]} port=${SRV_PORT[$1]} pid
  port_is_free "$port" || die "port $port is already in use; refusing to start $name on it"
  if [[ ${SRV_SHARED[$name]:-0} == 1 ]]; then
    shared_start "$name"
    return
  fi
  case ${SRV_KIND[$name]} in
    nginx)
      taskset -c "$SERVER_CPUS" "$NGINX_BIN" -p "$dir" -c "${SRV_CONF[$name]}" \
        -g 'daemon off;' >"$dir/stdout.log" 2>&1 &
      ;;
    scalws*)
      taskset -c "$SERVER_CPUS" "${SRV_BIN[$name]}" --config "${SRV_CONF[$name]}" \
        >"$dir/stdout.log" 2>&1 &
      ;;
    h2o)
      taskset -c "$SERVER_CPUS" "$H2O_BIN" -c "${SRV_CONF[$name]}" >"$dir/stdout.log" 2>&1 &
      ;;
  esac
  pid=$!
  register_proc "$pid"
  SRV_PID[$name]=$pid
  if ! wait_for_listen "$port" "$pid" 10; then
    warn "$name did not start listening on 127.0.0.1:$port; its logs:"
    tail -n 20 "$dir/stdout.log" "$dir/error.log" >&2 2>/dev/null || true
    stop_proc "$pid"
    SRV_PID[$name]=""
    return 1
  fi
  # The processes that must survive every measurement. nginx's cache loader exits by
  # design about a minute after start, so it is not one of them.
  SRV_PIDSET[$name]=$(server_core_pids "$name" | paste -sd' ' -)
  return 0
}

server_core_pids() {
  local name=$1 p
  for p in $(proc_tree "${SRV_PID[$name]}"); do
    grep -qa 'cache loader' "/proc/$p/cmdline" 2>/dev/null && continue
    printf '%s\n' "$p"
  done
}

# True when the server and every process it started with are still running.
server_alive() {
  local name=$1 p
  [[ -n ${SRV_PID[$name]} ]] || return 1
  for p in ${SRV_PIDSET[$name]}; do
    proc_is_ours "$p" || return 1
  done
  return 0
}

# Stops a server by PID and checks that nothing listens on its port afterwards. A
# controller (a shared address) stops its instances and fronts first, which takes longer.
server_stop() {
  local name=$1 pid=${SRV_PID[$1]:-} port=${SRV_PORT[$1]:-} grace=5
  [[ -n $pid ]] || return 0
  [[ ${SRV_SHARED[$name]:-0} == 1 ]] && grace=40
  stop_proc "$pid" "$grace"
  SRV_PID[$name]=""
  if [[ -n $port ]] && ! wait_for_port_closed "$port" 5; then
    ss -Htlnp "( sport = :$port )" >&2 || true
    die "something still listens on port $port after stopping $name; a leaked listener" \
      "(SO_REUSEPORT) would take a share of the next measurement's connections"
  fi
}

# server_version NAME: one line; for scalwsd the whole --version (version, commit, build).
server_version() {
  local name=$1
  case ${SERVER_KIND[$name]} in
    nginx) "$NGINX_BIN" -v 2>&1 | sed 's/^nginx version: //' ;;
    h2o) "$H2O_BIN" --version 2>/dev/null | head -n1 | sed 's/^h2o version //' ;;
    scalws*)
      local bin=${SERVER_BIN[$name]}
      if [[ -x $bin ]]; then
        "$bin" --version 2>/dev/null | awk 'NR > 1 { printf " / " } { printf "%s", $0 } END { print "" }' || true
      else
        printf 'absent\n'
      fi
      ;;
  esac
}

# ---------------------------------------------------------------------------------------
# Peers.

upstream_start() {
  PEER_UP_DIR=$RUNDIR/peers/upstream
  rm -rf "$PEER_UP_DIR"
  mkdir -p "$PEER_UP_DIR/tmp"
  pick_free_port PEER_UP_PORT
  render_template "$BENCH_DIR/configs/peers/upstream-nginx.conf.in" "$PEER_UP_DIR/nginx.conf" \
    "PORT=$PEER_UP_PORT" "PEERDIR=$PEER_UP_DIR" "WORKERS=$PEER_WORKERS" \
    "USER_LINE=$(nginx_user_line)" "AFFINITY=$(nginx_affinity "$PEER_CPUS" "$PEER_WORKERS")"
  port_is_free "$PEER_UP_PORT" || die "upstream port $PEER_UP_PORT is in use"
  taskset -c "$PEER_CPUS" "$NGINX_BIN" -p "$PEER_UP_DIR" -c "$PEER_UP_DIR/nginx.conf" \
    -g 'daemon off;' >"$PEER_UP_DIR/stdout.log" 2>&1 &
  PEER_UP_PID=$!
  register_proc "$PEER_UP_PID"
  if ! wait_for_listen "$PEER_UP_PORT" "$PEER_UP_PID" 10; then
    tail -n 20 "$PEER_UP_DIR/stdout.log" "$PEER_UP_DIR/error.log" >&2 2>/dev/null || true
    die "the upstream peer did not start"
  fi
}

php_fpm_start() {
  PEER_PHP_DIR=$RUNDIR/peers/php
  rm -rf "$PEER_PHP_DIR"
  mkdir -p "$PEER_PHP_DIR"
  PHP_SOCK=$PEER_PHP_DIR/php-fpm.sock
  local user_lines='; not started as root: children keep the current user'
  [[ $(id -u) == 0 ]] && user_lines=$'user = www-data\ngroup = www-data'
  render_template "$BENCH_DIR/configs/peers/php-fpm.conf.in" "$PEER_PHP_DIR/php-fpm.conf" \
    "PEERDIR=$PEER_PHP_DIR" "PHP_SOCK=$PHP_SOCK" "PHP_CHILDREN=$PHP_CHILDREN" \
    "POOL_USER_LINES=$user_lines"
  taskset -c "$PHP_CPUS" "$PHP_FPM_BIN" -F -y "$PEER_PHP_DIR/php-fpm.conf" -p "$PEER_PHP_DIR" \
    >"$PEER_PHP_DIR/stdout.log" 2>&1 &
  PEER_PHP_PID=$!
  register_proc "$PEER_PHP_PID"
  local i
  for ((i = 0; i < 200; i++)); do
    [[ -S $PHP_SOCK ]] && return 0
    proc_is_ours "$PEER_PHP_PID" || break
    sleep 0.05
  done
  tail -n 20 "$PEER_PHP_DIR/stdout.log" "$PEER_PHP_DIR/php-fpm.log" >&2 2>/dev/null || true
  die "php-fpm did not create its socket $PHP_SOCK"
}

# The hello-world app of the node or python scenario, pinned where php-fpm is and run as
# www-data when we are root (the servers' workers connect as www-data): node, PHP_CHILDREN
# processes, each on a socket of its own (as the controller runs a Node.js app); python,
# one gunicorn master with PHP_CHILDREN sync workers on one socket. Both servers proxy to
# the same processes.
app_peer_start() {
  local kind=$1 dir i n sock
  dir=$RUNDIR/peers/$kind
  rm -rf "$dir"
  mkdir -p "$dir"
  chmod 0755 "$dir"
  local -a as=()
  if [[ $(id -u) == 0 ]]; then
    chown www-data: "$dir"
    as=(setpriv --reuid=www-data --regid=www-data --init-groups)
  fi
  PEER_APP_PIDS=() APP_SOCKS=()
  n=1
  [[ $kind == node ]] && n=$PHP_CHILDREN
  for ((i = 0; i < n; i++)); do
    sock=$dir/app-$i.sock
    APP_SOCKS+=("$sock")
    if [[ $kind == node ]]; then
      PORT=$sock taskset -c "$PHP_CPUS" "${as[@]}" node "$BENCH_DIR/apps/hello.js" \
        >>"$dir/stdout.log" 2>&1 &
    else
      taskset -c "$PHP_CPUS" "${as[@]}" /usr/bin/python3 -m gunicorn --bind "unix:$sock" \
        --workers "$PHP_CHILDREN" --chdir "$BENCH_DIR/apps" --worker-tmp-dir "$dir" \
        hello_wsgi:application >>"$dir/stdout.log" 2>&1 &
    fi
    PEER_APP_PIDS+=($!)
    register_proc "$!"
  done
  APP_SOCKS_NGINX="" APP_SOCKS_TOML=""
  for sock in "${APP_SOCKS[@]}"; do
    APP_SOCKS_NGINX+="    server unix:$sock;"$'\n'
    APP_SOCKS_TOML+="${APP_SOCKS_TOML:+, }\"unix:$sock\""
  done
  APP_SOCK0=${APP_SOCKS[0]}
  for sock in "${APP_SOCKS[@]}"; do
    for ((i = 0; i < 200; i++)); do
      [[ -S $sock ]] && continue 2
      sleep 0.05
    done
    tail -n 20 "$dir/stdout.log" >&2 2>/dev/null || true
    die "the $kind app did not create its socket $sock"
  done
}

# Starts whatever SCENARIO needs before the servers are prepared (their configs name the
# peers' ports and sockets).
peers_start() {
  local scenario=$1
  case ${SC_PEER[$scenario]} in
    upstream) upstream_start ;;
    php) php_fpm_start ;;
    node | python) app_peer_start "${SC_PEER[$scenario]}" ;;
    none) ;;
  esac
}

peers_stop() {
  if [[ -n $PEER_UP_PID ]]; then
    stop_proc "$PEER_UP_PID"
    wait_for_port_closed "$PEER_UP_PORT" 5 || die "the upstream peer still listens on $PEER_UP_PORT"
    PEER_UP_PID="" PEER_UP_PORT=""
  fi
  if [[ -n $PEER_PHP_PID ]]; then
    stop_proc "$PEER_PHP_PID"
    PEER_PHP_PID="" PHP_SOCK=""
  fi
  local pid
  for pid in "${PEER_APP_PIDS[@]}"; do stop_proc "$pid"; done
  PEER_APP_PIDS=() APP_SOCKS=() APP_SOCKS_NGINX="" APP_SOCKS_TOML="" APP_SOCK0=/nonexistent
}

# Root PIDs of the running peers (for their CPU accounting).
peer_pids() {
  [[ -n $PEER_UP_PID ]] && printf '%s\n' "$PEER_UP_PID"
  [[ -n $PEER_PHP_PID ]] && printf '%s\n' "$PEER_PHP_PID"
  ((${#PEER_APP_PIDS[@]} == 0)) || printf '%s\n' "${PEER_APP_PIDS[@]}"
  return 0
}
