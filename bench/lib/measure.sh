# shellcheck shell=bash
# shellcheck disable=SC2034  # globals shared between the sourced files
# The one way load is driven and a measurement is taken. Every scenario, server, round,
# warm-up, driver-bound check and tuning point goes through measure_run, so no two of them
# differ by accident.
#
# A measurement: snapshot the server's and peers' CPU ticks and /proc/stat, run the load
# generator pinned to CLIENT_CPUS, sample memory halfway through and at the end, snapshot
# again, then bench.py turns the files into one JSON line of RAW_JSONL.
#
# Uses the globals run.sh sets: RUNDIR CLIENT_CPUS SERVER_CPUS PEER_CPUS PHP_CPUS RAW_JSONL PY
# BENCH_DIR QUIET_WAIT QUIET_BUDGET, and the SRV_* / SC_* tables.

# Writes "pid utime stime" (clock ticks) for ROOT and all its descendants.
snap_ticks() {
  local p stat rest
  local -a f
  for p in $(proc_tree "$1"); do
    read -r stat 2>/dev/null <"/proc/$p/stat" || continue
    rest=${stat##*) }
    read -ra f <<<"$rest"
    # Fields 14 and 15 of stat (utime, stime) are 11 and 12 after "pid (comm) ".
    printf '%s %s %s\n' "$p" "${f[11]}" "${f[12]}"
  done
}

# Writes "pid vmhwm_kb pss_kb" for ROOT and all its descendants.
snap_mem() {
  local p hwm pss
  for p in $(proc_tree "$1"); do
    hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$p/status" 2>/dev/null) || continue
    pss=$(awk '/^Pss:/ {print $2}' "/proc/$p/smaps_rollup" 2>/dev/null) || pss=0
    printf '%s %s %s\n' "$p" "${hwm:-0}" "${pss:-0}"
  done
}

# Ticks of every running peer (upstream nginx, php-fpm), one snapshot file.
snap_peer_ticks() {
  local root
  for root in $(peer_pids); do
    snap_ticks "$root"
  done
}

# scenario_peer_cpus SCENARIO: where that scenario's peer runs (php-fpm or the upstream).
scenario_peer_cpus() {
  if [[ ${SC_PEER[$1]} == php ]]; then printf '%s\n' "$PHP_CPUS"; else printf '%s\n' "$PEER_CPUS"; fi
}

# Every CPU a measurement runs on: servers, generator, peers, php-fpm.
measured_cpus() {
  { cpu_list_expand "$SERVER_CPUS"; cpu_list_expand "$CLIENT_CPUS"; cpu_list_expand "$PEER_CPUS"
    cpu_list_expand "$PHP_CPUS"; } |
    sort -nu | paste -sd, -
}

# Waits (at most QUIET_WAIT seconds, and QUIET_BUDGET seconds over the whole run) until no
# other process uses the measured CPUs, so a build on the "idle" core does not land in a
# round. Rounds measured anyway are flagged "contended" by the summary.
QUIET_USED=0
wait_for_quiet() {
  local max=$((QUIET_BUDGET - QUIET_USED)) t0=$SECONDS
  ((max > QUIET_WAIT)) && max=$QUIET_WAIT
  ((max > 0)) || return 0
  run_interruptible "$PY" "$BENCH_DIR/lib/bench.py" quiet --cpus "$(measured_cpus)" \
    --max-wait "$max"
  QUIET_USED=$((QUIET_USED + SECONDS - t0))
}

# url_for NAME SCENARIO
url_for() {
  local name=$1 scenario=$2 scheme=http
  [[ ${SC_TLS[$scenario]} == 1 ]] && scheme=https
  printf '%s://127.0.0.1:%s%s\n' "$scheme" "${SRV_PORT[$name]}" "${SC_PATH[$scenario]}"
}

# load_command SCENARIO URL CONNS DURATION BASE: fills LOAD_CMD with the generator's argv.
# h2load has no percentiles of its own: its per-request log (BASE.h2log) gives the p99.
load_command() {
  local scenario=$1 url=$2 conns=$3 duration=$4 base=$5 threads
  threads=$(cpu_list_count "$CLIENT_CPUS")
  ((threads > conns)) && threads=$conns
  case ${SC_TOOL[$scenario]} in
    wrk)
      LOAD_CMD=(wrk -t "$threads" -c "$conns" -d "${duration}s" --timeout 5s --latency)
      [[ ${SC_CHURN[$scenario]} == 1 ]] && LOAD_CMD+=(-H "Connection: close")
      [[ -n ${SC_HEADER[$scenario]:-} ]] && LOAD_CMD+=(-H "${SC_HEADER[$scenario]}")
      LOAD_CMD+=("$url")
      ;;
    h2load)
      LOAD_CMD=(h2load -t "$threads" -c "$conns" -m "${SC_STREAMS[$scenario]}" -D "$duration"
        --log-file="$base.h2log")
      [[ -n ${SC_HEADER[$scenario]:-} ]] && LOAD_CMD+=(-H "${SC_HEADER[$scenario]}")
      LOAD_CMD+=("$url")
      ;;
    h3load)
      # One thread whatever CLIENT_CPUS holds; it prints h2load's summary and a p99.
      LOAD_CMD=("$H3LOAD" -c "$conns" -m "${SC_STREAMS[$scenario]}" -D "$duration" "$url")
      ;;
    *) die "scenario $scenario: unknown tool ${SC_TOOL[$scenario]}" ;;
  esac
}

# measure_run NAME SCENARIO CONNS DURATION PHASE ROUND [ATTEMPT]
#   PHASE: warmup, measure, double (the driver-bound check), tune, quick.
#   ATTEMPT: 2, 3, ... when a contended round is measured again (the summary keeps the last).
# Appends one JSON line to RAW_JSONL and prints a one-line summary.
measure_run() {
  local name=$1 scenario=$2 conns=$3 duration=$4 phase=$5 round=$6 attempt=${7:-1}
  local slug=${name//[#@\/]/-} pid=${SRV_PID[$1]} url base rc=0 lpid alive=1
  url=$(url_for "$name" "$scenario")
  base=$RUNDIR/raw/$scenario/$slug.$phase.$round.$attempt
  mkdir -p "${base%/*}"
  load_command "$scenario" "$url" "$conns" "$duration" "$base"
  printf '%s\n' "${LOAD_CMD[*]}" >"$base.cmd"
  if [[ $phase == measure || $phase == tune ]]; then
    wait_for_quiet
  fi

  snap_ticks "$pid" >"$base.ticks0"
  snap_peer_ticks >"$base.peer0"
  cat /proc/stat >"$base.stat0"
  taskset -c "$CLIENT_CPUS" "$PY" "$BENCH_DIR/lib/bench.py" rusage --out "$base.rusage" \
    --timeout $((duration + 30)) -- "${LOAD_CMD[@]}" >"$base.load" 2>&1 &
  lpid=$!
  register_proc "$lpid"
  # Memory halfway through the window (connections open, buffers in use) and at the end.
  run_interruptible sleep "$(awk -v d="$duration" 'BEGIN {print d / 2}')"
  snap_mem "$pid" >"$base.mem"
  wait "$lpid" || rc=$?
  unregister_proc "$lpid"
  cat /proc/stat >"$base.stat1"
  snap_ticks "$pid" >"$base.ticks1"
  snap_peer_ticks >"$base.peer1"
  printf -- '--\n' >>"$base.mem"
  snap_mem "$pid" >>"$base.mem"
  server_alive "$name" || alive=0

  "$PY" "$BENCH_DIR/lib/bench.py" record --raw "$RAW_JSONL" --base "$base" \
    --scenario "$scenario" --server "$name" --kind "${SRV_KIND[$name]}" --phase "$phase" \
    --round "$round" --attempt "$attempt" --tool "${SC_TOOL[$scenario]}" --conns "$conns" \
    --streams "${SC_STREAMS[$scenario]}" --duration "$duration" --rc "$rc" --alive "$alive" \
    --server-cpus "$SERVER_CPUS" --client-cpus "$CLIENT_CPUS" \
    --peer-cpus "$(scenario_peer_cpus "$scenario")"
}

# check_answer NAME SCENARIO: one request with curl; the status must be 2xx and the body
# what the scenario expects. Catches what the load generators do not count as failures
# (wrk reports only statuses >= 400; a 3xx or a wrong body would pass it).
check_answer() {
  local name=$1 scenario=$2 url out code size version expect=${SC_EXPECT[$2]}
  if [[ ${SC_TOOL[$scenario]} == h3load ]]; then
    check_answer_h3 "$name" "$scenario"
    return
  fi
  local -a opts=(-s -o "$RUNDIR/answer.body" -D "$RUNDIR/answer.head" --max-time 10
    -w '%{http_code} %{size_download} %{http_version}')
  url=$(url_for "$name" "$scenario")
  [[ ${SC_TLS[$scenario]} == 1 ]] && opts+=(--http2 --cacert "$TLS_CERT")
  [[ -n ${SC_HEADER[$scenario]:-} ]] && opts+=(-H "${SC_HEADER[$scenario]}")
  out=$(curl "${opts[@]}" "$url" 2>&1) || {
    CHECK_ERROR="curl failed: $out"
    return 1
  }
  read -r code size version <<<"$out"
  if [[ $expect == gzip:* ]]; then
    expect=${expect#gzip:}
    if ! grep -qi '^content-encoding: *gzip' "$RUNDIR/answer.head"; then
      CHECK_ERROR="answer from $url is not gzip-encoded"
      return 1
    fi
    if ! gzip -dc <"$RUNDIR/answer.body" >"$RUNDIR/answer.decoded" 2>/dev/null; then
      CHECK_ERROR="answer from $url does not decode as gzip"
      return 1
    fi
    mv "$RUNDIR/answer.decoded" "$RUNDIR/answer.body"
    size=$(stat -c %s "$RUNDIR/answer.body")
  fi
  if [[ $code != 2?? ]]; then
    CHECK_ERROR="status $code from $url"
    return 1
  fi
  if [[ ${SC_TLS[$scenario]} == 1 && $version != 2 ]]; then
    CHECK_ERROR="HTTP/$version from $url, expected HTTP/2 (ALPN h2)"
    return 1
  fi
  if [[ $expect == size:* ]]; then
    if [[ $size != "${expect#size:}" ]]; then
      CHECK_ERROR="body of $size bytes from $url, expected ${expect#size:}"
      return 1
    fi
  elif ! grep -qF "$expect" "$RUNDIR/answer.body"; then
    CHECK_ERROR="body from $url lacks '$expect'"
    return 1
  fi
  return 0
}

# check_answer_h3 NAME SCENARIO: Debian's curl has no HTTP/3; one request with the load tool
# itself must get a 2xx and, for "size:N", exactly N body bytes.
check_answer_h3() {
  local name=$1 scenario=$2 url out expect=${SC_EXPECT[$2]}
  url=$(url_for "$name" "$scenario")
  if ! out=$("$H3LOAD" -c 1 -m 1 -n 1 "$url" 2>&1); then
    CHECK_ERROR="no 2xx over HTTP/3 from $url: $(tr '\n' ' ' <<<"$out" | head -c 300)"
    return 1
  fi
  if [[ $expect == size:* ]] && ! grep -q "^traffic: ${expect#size:} bytes" <<<"$out"; then
    CHECK_ERROR="body from $url is not ${expect#size:} bytes: $(grep '^traffic' <<<"$out")"
    return 1
  fi
  return 0
}
