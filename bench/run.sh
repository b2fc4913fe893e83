#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# bench/run.sh — ScalWS side by side with nginx and h2o (or two builds of ScalWS), same
# worker count, same pinning, rotated rounds; results under bench/results/ naming the tree
# they measured. See bench/README.md.
set -Eeuo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$BENCH_DIR/.." && pwd)
# shellcheck source=lib/common.sh
source "$BENCH_DIR/lib/common.sh"
# shellcheck source=lib/scenarios.sh
source "$BENCH_DIR/lib/scenarios.sh"
# shellcheck source=lib/servers.sh
source "$BENCH_DIR/lib/servers.sh"
# shellcheck source=lib/measure.sh
source "$BENCH_DIR/lib/measure.sh"

usage() {
  cat <<EOF
usage: bench/run.sh [options]

  --scenarios a,b        scenarios to run (default: all)
                         ${BENCH_SCENARIOS[*]}
  --servers A,B[,C]      the servers compared, ratios = A/B (and A/C) (default: scalws,nginx);
                         kinds: scalws, scalws-nosandbox, scalws-nometrics, nginx, h2o;
                         a ScalWS kind may name its build: scalws@build-pgo,scalws@build
                         (a build directory or a scalwsd binary); nginx,nginx validates
                         the tool; one server alone only with --quick (PGO training)
  --rounds R             measured rounds per scenario, order rotated (default: $ROUNDS)
  --duration S           seconds per measured round (default: $DURATION)
  --warmup S             seconds of unmeasured load per server first (default: $WARMUP)
  --double-duration S    seconds of the driver-bound check at 2x connections (default: $DOUBLE_DURATION)
  --workers N            worker processes of each server under test (default: $WORKERS)
  --server-cpus LIST     CPUs of the servers under test (default: $SERVER_CPUS)
  --client-cpus LIST     CPUs of the load generator (default: $CLIENT_CPUS)
  --peer-cpus LIST       CPUs of the upstream nginx, another machine's stand-in
                         (default: the generator's, $PEER_CPUS)
  --php-cpus LIST        CPUs of php-fpm, which runs on the hosting machine beside the
                         server (default: the servers', $SERVER_CPUS)
  --peer-workers N       worker processes of the upstream nginx (default: $PEER_WORKERS)
  --php-children N       php-fpm children, pm static (default: $PHP_CHILDREN)
  --conns N              connections for every scenario (overrides the table and tuning)
  --tune                 sweep connection counts per scenario, store the peak in the tune file
  --tune-file FILE       (default: bench/results/tuned.json; later runs reuse it)
  --gate                 exit 1 when a median ratio misses its target (bench/TARGETS.md)
  --design FILE          another file with a "## Performance targets" table
  --quick                a few seconds per scenario: every supported scenario answers 2xx
  --quick-duration S     seconds of load per scenario and server in --quick (default: $QUICK_DURATION)
  --scalws-mode M        ScalWS's [server] mode, multi or single (default: $SCALWS_MODE;
                         single exits through main, which an instrumented build needs)
  --scalwsd PATH         the ScalWS binary (default: build/bin/scalwsd)
  --h3load PATH          the HTTP/3 load tool (default: scalws-h3load next to --scalwsd)
  --scalwsd-nometrics PATH  scalwsd built with -DSCALWS_METRICS=OFF, for the kind
                         scalws-nometrics (default: build-nometrics/bin/scalwsd)
  --results DIR          where result files go (default: bench/results)
  --quiet-wait S         before each round, wait up to S seconds for other processes to
                         leave the measured CPUs (default: $QUIET_WAIT; at most
                         ${QUIET_BUDGET}s per run in total; 0: do not wait)
  --keep                 keep the run directory (configs, logs, raw tool output)
EOF
}

# ---------------------------------------------------------------------------------------
# Settings.

set_defaults() {
  local ncpu
  ncpu=$(nproc)
  SCENARIOS=("${BENCH_SCENARIOS[@]}")
  SERVER_SPEC=scalws,nginx
  ROUNDS=5
  DURATION=3
  WARMUP=2
  DOUBLE_DURATION=1
  QUICK_DURATION=1
  SCALWS_MODE=multi
  QUIET_WAIT=20
  QUIET_BUDGET=120
  ROUND_RETRIES=2
  RETRY_BUDGET=8
  RETRIES_USED=0
  WORKERS=1
  PEER_WORKERS=1
  PHP_CHILDREN=32
  SERVER_CPUS=0
  CLIENT_CPUS=$((ncpu > 1 ? 1 : 0))
  PEER_CPUS=$CLIENT_CPUS
  PHP_CPUS=""
  CONNS_OVERRIDE=""
  MODE=full
  GATE=0
  KEEP=0
  DESIGN=""
  SCALWSD=$REPO_DIR/build/bin/scalwsd
  SCALWSD_NOMETRICS=$REPO_DIR/build-nometrics/bin/scalwsd
  H3LOAD=""  # default: scalws-h3load next to the scalwsd under test
  RESULTS_DIR=$BENCH_DIR/results
  TUNE_FILE=""
  NGINX_BIN=${NGINX_BIN:-nginx}
  H2O_BIN=${H2O_BIN:-h2o}
  PHP_FPM_BIN=${PHP_FPM_BIN:-php-fpm8.2}
  PY=/usr/bin/python3
}

parse_args() {
  while (($#)); do
    case $1 in
      --scenarios) IFS=, read -ra SCENARIOS <<<"$2"; shift ;;
      --servers) SERVER_SPEC=$2; shift ;;
      --rounds) ROUNDS=$2; shift ;;
      --duration) DURATION=$2; shift ;;
      --warmup) WARMUP=$2; shift ;;
      --double-duration) DOUBLE_DURATION=$2; shift ;;
      --workers) WORKERS=$2; shift ;;
      --server-cpus) SERVER_CPUS=$2; shift ;;
      --client-cpus) CLIENT_CPUS=$2; shift ;;
      --peer-cpus) PEER_CPUS=$2; shift ;;
      --php-cpus) PHP_CPUS=$2; shift ;;
      --peer-workers) PEER_WORKERS=$2; shift ;;
      --php-children) PHP_CHILDREN=$2; shift ;;
      --conns) CONNS_OVERRIDE=$2; shift ;;
      --tune) MODE=tune ;;
      --tune-file) TUNE_FILE=$2; shift ;;
      --gate) GATE=1 ;;
      --design) DESIGN=$2; shift ;;
      --quick) MODE=quick ;;
      --quick-duration) QUICK_DURATION=$2; shift ;;
      --scalws-mode) SCALWS_MODE=$2; shift ;;
      --scalwsd) SCALWSD=$2; shift ;;
      --h3load) H3LOAD=$2; shift ;;
      --scalwsd-nometrics) SCALWSD_NOMETRICS=$2; shift ;;
      --results) RESULTS_DIR=$2; shift ;;
      --quiet-wait) QUIET_WAIT=$2; shift ;;
      --keep) KEEP=1 ;;
      -h | --help) usage; exit 0 ;;
      *) usage >&2; die "unknown option '$1'" ;;
    esac
    shift
  done
  TUNE_FILE=${TUNE_FILE:-$RESULTS_DIR/tuned.json}
}

validate_settings() {
  local n s opt
  for n in ROUNDS DURATION WARMUP DOUBLE_DURATION WORKERS PEER_WORKERS PHP_CHILDREN QUIET_WAIT \
    QUICK_DURATION; do
    opt=${n,,}
    [[ ${!n} =~ ^[0-9]+$ ]] || die "--${opt//_/-} must be a whole number, got '${!n}'"
  done
  ((ROUNDS >= 1 && DURATION >= 1 && WORKERS >= 1 && QUICK_DURATION >= 1)) ||
    die "rounds, duration, quick-duration, workers must be >= 1"
  [[ $SCALWS_MODE == multi || $SCALWS_MODE == single ]] || die "--scalws-mode is multi or single"
  [[ -z $CONNS_OVERRIDE || $CONNS_OVERRIDE =~ ^[1-9][0-9]*$ ]] || die "bad --conns"
  cpu_list_validate "$SERVER_CPUS"
  cpu_list_validate "$CLIENT_CPUS"
  cpu_list_validate "$PEER_CPUS"
  [[ -n $PHP_CPUS ]] || PHP_CPUS=$SERVER_CPUS
  cpu_list_validate "$PHP_CPUS"
  for s in "${SCENARIOS[@]}"; do
    scenario_exists "$s" || die "unknown scenario '$s' (known: ${BENCH_SCENARIOS[*]})"
  done
  [[ -x $PY ]] || die "$PY is missing (Debian's python3)"
  local tool
  for tool in "$NGINX_BIN" wrk h2load curl openssl ss taskset; do
    command -v "$tool" >/dev/null || die "$tool is not installed (deploy/install-deps.sh)"
  done
  [[ $SCALWSD == /* ]] || SCALWSD=$PWD/$SCALWSD
  [[ -n $H3LOAD ]] || H3LOAD=$(dirname "$SCALWSD")/scalws-h3load
  [[ $H3LOAD == /* ]] || H3LOAD=$PWD/$H3LOAD
  [[ $SCALWSD_NOMETRICS == /* ]] || SCALWSD_NOMETRICS=$PWD/$SCALWSD_NOMETRICS
}

# Server names: the specs of --servers ("scalws", "scalws@build-pgo", "h2o"); a spec named
# twice gets "#2" (its own run dir and port). SERVER_KIND and SERVER_BIN by name.
declare -gA SERVER_KIND=() SERVER_BIN=()
parse_servers() {
  local -a specs
  IFS=, read -ra specs <<<"$SERVER_SPEC"
  local n=${#specs[@]}
  if ((n == 1)); then
    [[ $MODE == quick ]] || die "one server alone only with --quick (e.g. PGO training)"
  elif ((n < 1 || n > 3)); then
    die "--servers takes two or three servers (A,B or A,B,C), got '$SERVER_SPEC'"
  fi
  SERVER_NAMES=() SERVER_KINDS=()
  local spec kind name
  for spec in "${specs[@]}"; do
    kind=${spec%%@*}
    case $kind in
      scalws | scalws-nosandbox | scalws-nometrics) ;;
      nginx | h2o) [[ $spec != *@* ]] || die "'$spec': only a ScalWS kind takes @BUILD" ;;
      *) die "unknown server kind '$kind' (in '$spec')" ;;
    esac
    [[ $spec != *@ ]] || die "'$spec': @ needs a build directory or a scalwsd binary"
    if [[ $kind == h2o ]]; then
      command -v "$H2O_BIN" >/dev/null || die "$H2O_BIN is not installed (deploy/install-deps.sh)"
    fi
    name=$spec
    [[ " ${SERVER_NAMES[*]} " == *" $spec "* ]] && name="$spec#2"
    SERVER_NAMES+=("$name")
    SERVER_KINDS+=("$kind")
    SERVER_KIND[$name]=$kind
    SERVER_BIN[$name]=""
    if [[ $kind == scalws* ]]; then SERVER_BIN[$name]=$(scalwsd_of_spec "$spec"); fi
  done
}

# ---------------------------------------------------------------------------------------
# The run's environment.

setup_rundir() {
  RUNDIR=$(mktemp -d /tmp/scalws-bench.XXXXXX)
  # Workers drop to www-data: they must reach the docroot, the cache and php-fpm's socket.
  chmod 0755 "$RUNDIR"
  DOCROOT=$RUNDIR/www
  RAW_JSONL=$RUNDIR/raw.jsonl
  : >"$RAW_JSONL"
  trap on_exit EXIT
  trap 'log "interrupted"; exit 130' INT TERM
  trap 'log "signal HUP"; exit 129' HUP
  trap 'log "signal PIPE"; exit 141' PIPE
  trap 'on_err "${BASH_SOURCE[0]}" "$LINENO" "$BASH_COMMAND"' ERR
}

# set -e stops the run at a failed command; say which, so it never ends silently.
on_err() {
  printf 'bench: error: %s:%s: command failed: %s\n' "$1" "$2" "$3" >&2
}

on_exit() {
  local rc=$?
  cleanup_all
  if ((KEEP)); then
    log "run directory kept: $RUNDIR"
  elif [[ -n ${RUNDIR:-} && -d $RUNDIR ]]; then
    rm -rf "$RUNDIR"
  fi
  exit "$rc"
}

# The generator's core for this shell and every helper it runs; servers and peers are
# started with their own taskset.
pin_self() {
  taskset -pc "$CLIENT_CPUS" $$ >/dev/null || warn "could not pin the driver to $CLIENT_CPUS"
}

# The second word of a tool's first output line ("wrk 4.1.0 ..." -> 4.1.0). wrk -v exits 1.
version_word() (
  set +o pipefail
  "$@" 2>&1 | awk 'NR == 1 {print $2}'
)

write_meta() {
  local commit branch dirty=0 governor cpu_model
  commit=$(git -C "$REPO_DIR" rev-parse HEAD 2>/dev/null || echo unknown)
  branch=$(git -C "$REPO_DIR" rev-parse --abbrev-ref HEAD 2>/dev/null || echo unknown)
  [[ -n $(git -C "$REPO_DIR" status --porcelain 2>/dev/null) ]] && dirty=1
  governor=$(cat /sys/devices/system/cpu/cpu"${SERVER_CPUS%%[,-]*}"/cpufreq/scaling_governor \
    2>/dev/null || echo "unreadable (no cpufreq)")
  cpu_model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
  local -a kinds_csv names_csv
  names_csv=$(IFS=,; echo "${SERVER_NAMES[*]}")
  kinds_csv=$(IFS=,; echo "${SERVER_KINDS[*]}")
  local -a versions=()
  local name
  for name in "${SERVER_NAMES[@]}"; do
    versions+=("$name=$(server_version "$name")")
  done
  [[ " ${SERVER_KINDS[*]} " == *" nginx "* ]] || versions+=("nginx=$("$NGINX_BIN" -v 2>&1 |
    sed 's/^nginx version: //')")
  versions+=(
    "wrk=$(version_word wrk -v)"
    "h2load=$(version_word h2load --version)"
    "h3load=$([[ -x $H3LOAD ]] && echo "$H3LOAD" || echo "not built")"
    "php-fpm=$(version_word "$PHP_FPM_BIN" -v)"
    "openssl=$(version_word openssl version)"
  )
  local -a vargs=()
  local v
  for v in "${versions[@]}"; do vargs+=(--version "$v"); done
  "$PY" "$BENCH_DIR/lib/bench.py" meta --out "$RUNDIR/meta.json" \
    --servers "$names_csv" --kinds "$kinds_csv" \
    --scenarios "$(IFS=,; echo "${SCENARIOS[*]}")" "${vargs[@]}" \
    --field "commit=$commit" --field "branch=$branch" --field "dirty=$dirty" \
    --field "cpu_model=$cpu_model" --field "nproc=$(getconf _NPROCESSORS_ONLN)" --field "kernel=$(uname -r)" \
    --field "governor=$governor" --field "server_cpus=$SERVER_CPUS" \
    --field "client_cpus=$CLIENT_CPUS" --field "peer_cpus=$PEER_CPUS" --field "php_cpus=$PHP_CPUS" \
    --field "workers=$WORKERS" --field "peer_workers=$PEER_WORKERS" \
    --field "php_children=$PHP_CHILDREN" --field "rounds=$ROUNDS" \
    --field "duration=$DURATION" --field "warmup=$WARMUP" \
    --field "double_duration=$DOUBLE_DURATION" --field "mode=$MODE" \
    --field "quiet_wait=$QUIET_WAIT" \
    --field "loadavg=$(cut -d' ' -f1-3 /proc/loadavg)"
  COMMIT_TAG=${commit:0:12}
  ((dirty)) && COMMIT_TAG+=-dirty
  return 0
}

event() {
  local type=$1 scenario=$2
  shift 2
  "$PY" "$BENCH_DIR/lib/bench.py" event --raw "$RAW_JSONL" --type "$type" \
    --scenario "$scenario" "$@"
}

# ---------------------------------------------------------------------------------------
# One scenario: peers, both servers, warm-up, rotated rounds, stop.

scenario_conns() {
  local scenario=$1 tuned
  CONNS_SOURCE=table
  if [[ -n $CONNS_OVERRIDE ]]; then
    CONNS_SOURCE=--conns
    SCENARIO_CONNS=$CONNS_OVERRIDE
    return
  fi
  tuned=$("$PY" "$BENCH_DIR/lib/bench.py" tune-get --file "$TUNE_FILE" --scenario "$scenario")
  if [[ -n $tuned && $MODE != tune ]]; then
    CONNS_SOURCE=tuned
    SCENARIO_CONNS=$tuned
  else
    SCENARIO_CONNS=${SC_CONNS[$scenario]}
  fi
}

# Every server under test runs beside the others and keeps its share of php-fpm's
# children (configs/nginx/php.conf.in: PHP_KEEP, children / servers), and the driver-bound
# check doubles the connections: the pool needs 2x the connection count per server, or
# kept connections of one server starve another of children (p99 7 ms -> 700 ms with two
# servers; with three, the last one got no child at all and answered nothing).
php_children_for() {
  local scenario=$1 conns=$2 need
  [[ ${SC_PEER[$scenario]} == php ]] || return 0
  need=$((2 * conns * ${#SERVER_NAMES[@]}))
  if ((PHP_CHILDREN < need)); then
    log "  php-fpm children raised from $PHP_CHILDREN to $need for $conns connections"
    PHP_CHILDREN=$need
  fi
}

# Starts the peers and every server that supports the scenario; RUNNING lists the started.
scenario_bring_up() {
  local scenario=$1 i name
  RUNNING=()
  if [[ ${SC_PEER[$scenario]} == php ]] && ! command -v "$PHP_FPM_BIN" >/dev/null; then
    for name in "${SERVER_NAMES[@]}"; do
      event failed "$scenario" "server=$name" "reason=$PHP_FPM_BIN is not installed"
    done
    return 0
  fi
  peers_start "$scenario"
  for i in "${!SERVER_NAMES[@]}"; do
    name=${SERVER_NAMES[$i]}
    if ! server_prepare "$name" "${SERVER_KINDS[$i]}" "$scenario"; then
      log "  $name: n/a (${SRV_NA[$name]})"
      event na "$scenario" "server=$name" "reason=${SRV_NA[$name]}"
      continue
    fi
    if ! server_start "$name"; then
      event failed "$scenario" "server=$name" "reason=did not start (see ${SRV_DIR[$name]})"
      continue
    fi
    if ! check_answer "$name" "$scenario"; then
      log "  $name: wrong answer: $CHECK_ERROR"
      event failed "$scenario" "server=$name" "reason=$CHECK_ERROR"
      server_stop "$name"
      continue
    fi
    RUNNING+=("$name")
  done
}

scenario_tear_down() {
  local name
  for name in "${SERVER_NAMES[@]}"; do server_stop "$name"; done
  peers_stop
}

run_scenario() {
  local scenario=$1 name r conns
  scenario_conns "$scenario"
  conns=$SCENARIO_CONNS
  log "== $scenario (${SC_TOOL[$scenario]}, $conns connections from $CONNS_SOURCE)"
  php_children_for "$scenario" "$conns"
  event setting "$scenario" "tool=${SC_TOOL[$scenario]}" "conns=$conns" \
    "streams=${SC_STREAMS[$scenario]}" "source=$CONNS_SOURCE" "php_children=$PHP_CHILDREN"
  scenario_bring_up "$scenario"
  if ((${#RUNNING[@]})); then
    if [[ $MODE == quick ]]; then
      for name in "${RUNNING[@]}"; do
        measure_run "$name" "$scenario" "$conns" "$QUICK_DURATION" quick 1
      done
    else
      for name in "${RUNNING[@]}"; do
        ((WARMUP > 0)) && measure_run "$name" "$scenario" "$conns" "$WARMUP" warmup 0
      done
      for ((r = 1; r <= ROUNDS; r++)); do
        local -a order=("${RUNNING[@]}")
        ((r % 2 == 0)) && mapfile -t order < <(printf '%s\n' "${RUNNING[@]}" | tac)
        local attempt=1
        while :; do
          for name in "${order[@]}"; do
            measure_run "$name" "$scenario" "$conns" "$DURATION" measure "$r" "$attempt"
            if ((DOUBLE_DURATION > 0)); then
              measure_run "$name" "$scenario" $((conns * 2)) "$DOUBLE_DURATION" double "$r" \
                "$attempt"
            fi
          done
          round_needs_again "$scenario" "$r" "$attempt" || break
          attempt=$((attempt + 1))
        done
      done
    fi
  fi
  scenario_tear_down
}

# True when round R (this attempt) was contended by other processes and the run may still
# measure it again (ROUND_RETRIES per round, RETRY_BUDGET per run).
round_needs_again() {
  local scenario=$1 r=$2 attempt=$3
  "$PY" "$BENCH_DIR/lib/bench.py" contended --raw "$RAW_JSONL" --scenario "$scenario" \
    --round "$r" --attempt "$attempt" || return 1
  if ((attempt > ROUND_RETRIES || RETRIES_USED >= RETRY_BUDGET)); then
    log "  round $r was contended; no retries left, it stays (flagged)"
    return 1
  fi
  RETRIES_USED=$((RETRIES_USED + 1))
  log "  round $r was contended by other processes; measuring it again"
  return 0
}

# --tune: sweep connection counts on every supported server, keep the best in TUNE_FILE.
tune_scenario() {
  local scenario=$1 name c
  local -a sweep
  case $scenario in
    static-1m) sweep=(2 4 8 16 32 64) ;;
    php) sweep=(2 4 8 16) ;;
    tls-h2-static-small) sweep=(4 8 16 32 64) ;;
    *) sweep=(16 32 64 128 256 512) ;;
  esac
  php_children_for "$scenario" "${sweep[-1]}"
  log "== tune $scenario: ${sweep[*]}"
  scenario_bring_up "$scenario"
  if ((${#RUNNING[@]})); then
    for name in "${RUNNING[@]}"; do
      measure_run "$name" "$scenario" "${sweep[-1]}" "$WARMUP" warmup 0
    done
    # Up the sweep and back down, so a drift of the machine does not favour either end.
    local -a down
    mapfile -t down < <(printf '%s\n' "${sweep[@]}" | tac)
    local pass=0
    for c in "${sweep[@]}" "${down[@]}"; do
      pass=$((pass + 1))
      for name in "${RUNNING[@]}"; do
        measure_run "$name" "$scenario" "$c" "$DURATION" tune "$pass"
      done
    done
    "$PY" "$BENCH_DIR/lib/bench.py" tune-pick --raw "$RAW_JSONL" --file "$TUNE_FILE" \
      --scenario "$scenario" --cpu-model "$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)" \
      --pinning "server $SERVER_CPUS, generator $CLIENT_CPUS, peers $PEER_CPUS, php-fpm $PHP_CPUS" || true
  fi
  scenario_tear_down
}

write_results() {
  local stamp name rc=0
  stamp=$(date -u +%Y%m%d-%H%M%S)
  mkdir -p "$RESULTS_DIR"
  if [[ $MODE == quick ]]; then
    name=quick-latest
  else
    name=$stamp-$COMMIT_TAG-${SERVER_SPEC//,/-vs-}
    name=${name//\//_}
  fi
  local -a args=(--raw "$RAW_JSONL" --meta "$RUNDIR/meta.json"
    --out-json "$RESULTS_DIR/$name.json" --out-txt "$RESULTS_DIR/$name.txt")
  [[ $MODE == quick ]] && args+=(--quick) || args+=(--out-svg "$RESULTS_DIR/$name.svg")
  "$PY" "$BENCH_DIR/lib/bench.py" summarise "${args[@]}" || rc=$?
  cp "$RAW_JSONL" "$RESULTS_DIR/$name.raw.jsonl"
  if [[ $MODE == full ]]; then
    ln -sfn "$name.json" "$RESULTS_DIR/latest.json"
    ln -sfn "$name.txt" "$RESULTS_DIR/latest.txt"
    ln -sfn "$name.svg" "$RESULTS_DIR/latest.svg"
    log "results: $RESULTS_DIR/$name.{json,txt,svg,raw.jsonl}"
  else
    log "results: $RESULTS_DIR/$name.{json,txt,raw.jsonl}"
  fi
  SUMMARY_JSON=$RESULTS_DIR/$name.json
  return "$rc"
}

find_design() {
  local f
  for f in "$DESIGN" "$REPO_DIR/bench/TARGETS.md"; do
    [[ -n $f && -r $f ]] && { printf '%s\n' "$f"; return 0; }
  done
  return 1
}

main() {
  set_defaults
  parse_args "$@"
  validate_settings
  parse_servers
  if ((GATE)) && [[ $MODE != full ]]; then die "--gate needs a full run (not --quick or --tune)"; fi
  local design=""
  if ((GATE)); then
    design=$(find_design) || die "--gate: bench/TARGETS.md not found; pass --design FILE"
  fi
  setup_rundir
  pin_self
  prepare_docroot
  prepare_tls
  write_meta
  log "run dir $RUNDIR; servers ${SERVER_NAMES[*]}; CPUs: servers $SERVER_CPUS," \
    "generator $CLIENT_CPUS, peers $PEER_CPUS, php-fpm $PHP_CPUS; mode $MODE"
  local s
  if [[ $MODE == tune ]]; then
    for s in "${SCENARIOS[@]}"; do tune_scenario "$s"; done
    log "tuned connection counts stored in $TUNE_FILE"
    return 0
  fi
  for s in "${SCENARIOS[@]}"; do run_scenario "$s"; done
  local rc=0
  write_results || rc=$?
  if ((GATE)); then
    "$PY" "$BENCH_DIR/lib/bench.py" gate --summary "$SUMMARY_JSON" --design "$design" || rc=1
  fi
  return "$rc"
}

main "$@"
