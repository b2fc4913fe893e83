# shellcheck shell=bash
# shellcheck disable=SC2034  # globals shared between the sourced files
# Shared plumbing for bench/run.sh: messages, the registry of processes this run started
# (so the exit trap stops exactly those, by PID), free ports, template rendering, CPU lists.
#
# Sourced, never executed. Callers run under `set -euo pipefail`.

# bash 5.2 expands '&' in ${var//pat/rep} replacements; template values must stay literal.
shopt -u patsub_replacement 2>/dev/null || true

BENCH_LOG_PREFIX="bench"

log() { printf '%s: %s\n' "$BENCH_LOG_PREFIX" "$*" >&2; }
warn() { printf '%s: warning: %s\n' "$BENCH_LOG_PREFIX" "$*" >&2; }
die() {
  printf '%s: error: %s\n' "$BENCH_LOG_PREFIX" "$*" >&2
  exit 1
}

# ---------------------------------------------------------------------------------------
# Process registry. Every long-lived process the run starts is registered with its PID and
# its start time (field 22 of /proc/PID/stat), so cleanup never signals a recycled PID.

declare -gA BENCH_PROC_START=()  # pid -> starttime
declare -ga BENCH_PROC_ORDER=()  # pids in start order

proc_starttime() {
  local pid=$1 stat rest
  read -r stat 2>/dev/null <"/proc/$pid/stat" || return 1
  rest=${stat##*) }
  local -a f
  read -ra f <<<"$rest"
  printf '%s\n' "${f[19]}"
}

register_proc() {
  local pid=$1 st
  st=$(proc_starttime "$pid") || st=""
  BENCH_PROC_START[$pid]=$st
  BENCH_PROC_ORDER+=("$pid")
}

unregister_proc() {
  local pid=$1 i
  unset "BENCH_PROC_START[$pid]"
  for i in "${!BENCH_PROC_ORDER[@]}"; do
    [[ ${BENCH_PROC_ORDER[$i]} == "$pid" ]] && unset "BENCH_PROC_ORDER[$i]"
  done
  return 0
}

# True while PID runs and is still the process we registered (not a zombie, not recycled).
proc_is_ours() {
  local pid=$1 st state stat
  [[ -r /proc/$pid/stat ]] || return 1
  read -r stat 2>/dev/null <"/proc/$pid/stat" || return 1
  state=${stat##*) }
  state=${state%% *}
  [[ $state != Z && $state != X ]] || return 1
  st=$(proc_starttime "$pid") || return 1
  [[ -z ${BENCH_PROC_START[$pid]:-} || ${BENCH_PROC_START[$pid]} == "$st" ]]
}

# All descendants of PID (children of every thread, recursively), one per line.
proc_descendants() {
  local pid=$1 f child
  for f in /proc/"$pid"/task/*/children; do
    [[ -r $f ]] || continue
    for child in $(<"$f"); do
      printf '%s\n' "$child"
      proc_descendants "$child"
    done
  done 2>/dev/null
  return 0
}

# PID and its descendants.
proc_tree() {
  printf '%s\n' "$1"
  proc_descendants "$1"
}

# Stops a registered process and everything below it: SIGTERM, wait up to GRACE seconds,
# then SIGKILL whatever is left. Reaps it when it is our child.
stop_proc() {
  local pid=$1 grace=${2:-5} i
  local -a tree=()
  if proc_is_ours "$pid"; then
    mapfile -t tree < <(proc_tree "$pid")
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < grace * 20; i++)); do
      proc_is_ours "$pid" || break
      sleep 0.05
    done
    if proc_is_ours "$pid"; then
      warn "pid $pid ignored SIGTERM for ${grace}s; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  wait "$pid" 2>/dev/null || true
  # Children that outlived their parent (reparented to init) were recorded above.
  local c
  for c in "${tree[@]:1}"; do
    if [[ -d /proc/$c ]]; then
      kill -KILL "$c" 2>/dev/null || true
    fi
  done
  unregister_proc "$pid"
}

# Runs a command in the background and waits for it: bash handles a trapped signal (Ctrl-C)
# during `wait` at once, but only after a foreground command finishes.
run_interruptible() {
  local pid rc=0
  "$@" &
  pid=$!
  register_proc "$pid"
  wait "$pid" || rc=$?
  unregister_proc "$pid"
  return "$rc"
}

# Exit trap: stop everything still registered, newest first.
cleanup_all() {
  local i pid
  for ((i = ${#BENCH_PROC_ORDER[@]} - 1; i >= 0; i--)); do
    pid=${BENCH_PROC_ORDER[$i]:-}
    [[ -n $pid ]] || continue
    stop_proc "$pid" 3
  done
  BENCH_PROC_ORDER=()
}

# ---------------------------------------------------------------------------------------
# Ports.

# True when nothing on this host listens on TCP PORT (any address).
port_is_free() {
  local port=$1
  [[ -z $(ss -Htln "( sport = :$port )" 2>/dev/null) ]]
}

# True when no socket at all (listening, established, TIME_WAIT) uses local port PORT.
port_is_unused() {
  local port=$1
  [[ -z $(ss -Htan "( sport = :$port )" 2>/dev/null) ]]
}

# pick_free_port VAR: sets VAR to a TCP port below the ephemeral range that no socket
# uses, and remembers it so two servers of one run never get the same port. (Not a
# command substitution: the memory must survive in this shell.)
declare -gA BENCH_PORTS_TAKEN=()
pick_free_port() {
  local -n _pfp_out=$1
  local _lo _hi _port _tries
  read -r _lo _hi </proc/sys/net/ipv4/ip_local_port_range
  _hi=$((_lo - 1))
  _lo=$((_hi > 12000 ? _hi - 10000 : 1025))
  for ((_tries = 0; _tries < 200; _tries++)); do
    _port=$((_lo + RANDOM % (_hi - _lo)))
    [[ -z ${BENCH_PORTS_TAKEN[$_port]:-} ]] || continue
    if port_is_unused "$_port"; then
      BENCH_PORTS_TAKEN[$_port]=1
      _pfp_out=$_port
      return 0
    fi
  done
  die "no free TCP port found in $_lo..$_hi"
}

# Waits until something listens on PORT, while PID stays alive. Returns 1 on timeout or
# when PID exited.
wait_for_listen() {
  local port=$1 pid=$2 timeout=${3:-10} i
  for ((i = 0; i < timeout * 20; i++)); do
    proc_is_ours "$pid" || return 1
    port_is_free "$port" || return 0
    sleep 0.05
  done
  return 1
}

# first_child PID [TIMEOUT]: prints PID's first child (a scalwsd master's worker) once it
# exists. A master listens before it forks, so a listening port does not mean a worker yet.
first_child() {
  local pid=$1 timeout=${2:-10} i child
  for ((i = 0; i < timeout * 20; i++)); do
    child=$(pgrep -P "$pid" | head -n1) || true
    [[ -n $child ]] && { printf '%s\n' "$child"; return 0; }
    proc_is_ours "$pid" || return 1
    sleep 0.05
  done
  return 1
}

# Waits until nothing listens on PORT any more. A listener left behind on an
# SO_REUSEPORT port would silently take a share of the next run's connections.
wait_for_port_closed() {
  local port=$1 timeout=${2:-5} i
  for ((i = 0; i < timeout * 20; i++)); do
    port_is_free "$port" && return 0
    sleep 0.05
  done
  return 1
}

# ---------------------------------------------------------------------------------------
# Templates: @NAME@ placeholders filled from NAME=value arguments. A placeholder left
# unfilled is an error, so a template and its caller cannot drift apart silently.

render_template() {
  local in=$1 out=$2 text kv key value
  shift 2
  [[ -r $in ]] || die "template $in not found"
  text=$(<"$in")
  for kv in "$@"; do
    key=${kv%%=*}
    value=${kv#*=}
    text=${text//@"$key"@/"$value"}
  done
  if [[ $text =~ @[A-Z][A-Z0-9_]*@ ]]; then
    die "template $in: placeholder ${BASH_REMATCH[0]} has no value"
  fi
  printf '%s\n' "$text" >"$out"
}

# ---------------------------------------------------------------------------------------
# CPU lists ("0", "0,1", "0-3,6").

# Expands a CPU list to one CPU number per line.
cpu_list_expand() {
  local part a b c
  local IFS=,
  for part in $1; do
    if [[ $part == *-* ]]; then
      a=${part%-*}
      b=${part#*-}
      for ((c = a; c <= b; c++)); do printf '%s\n' "$c"; done
    else
      printf '%s\n' "$part"
    fi
  done
}

cpu_list_count() { cpu_list_expand "$1" | wc -l; }

# Checks that every CPU in the list is online.
cpu_list_validate() {
  local list=$1 c online
  online=$(cpu_list_expand "$(</sys/devices/system/cpu/online)" | tr '\n' ' ')
  [[ $list =~ ^[0-9,-]+$ ]] || die "bad CPU list '$list'"
  for c in $(cpu_list_expand "$list"); do
    [[ " $online " == *" $c "* ]] || die "CPU $c in '$list' is not online (online: $online)"
  done
}
