# shellcheck shell=bash
# shellcheck disable=SC2034  # globals shared between the sourced files
# The scenario table: what each scenario requests, with which load generator, at which
# concurrency, and which peer it needs. The only place these settings live, so no two
# scenarios drive load differently by accident.
#
#   tool     wrk (HTTP/1.1), h2load (HTTP/2 over TLS) or h3load (HTTP/3: bench/h3load, built
#            as build/bin/scalws-h3load with SCALWS_HTTP3; one thread)
#   path     request target
#   conns    connections (wrk) or clients (h2load); bench/results/tuned.json overrides it
#   streams  h2load and h3load: concurrent streams per connection
#   churn    1: the client sends "Connection: close" (a new connection per request)
#   peer     none, upstream (nginx peer with a fixed body), php (the php-fpm pool), node
#            (hello-world Node.js processes, a unix socket each) or python (gunicorn)
#   tls      1: https with the run's self-signed certificate
#   expect   what the pre-flight check requires: "size:N" (body length) or a body substring;
#            "gzip:" before either: the answer must be gzip-encoded, checked once decoded
#
# scenario_header NAME FIELD adds a request header field to every request of the scenario
# (the load and the pre-flight check alike).
#
# A "-shared" scenario is its base scenario with ScalWS's instance behind a shared address
# (scenario_share): the scalws-controller runs it as the default instance of an address a
# second instance shares, so every connection goes through the address's front. nginx and
# h2o serve the base's config. Compare ScalWS's row with the base's in the same run: that
# ratio is what the hand-off costs (bench/README.md, "Shared addresses").

BENCH_SCENARIOS=(static-small static-1m respond proxy proxy-churn cache-hit
  tls-h2-static-small h3-static-small php php-gzip node python static-small-shared
  proxy-churn-shared)

declare -gA SC_TOOL=() SC_PATH=() SC_CONNS=() SC_STREAMS=() SC_CHURN=() SC_PEER=() \
  SC_TLS=() SC_EXPECT=() SC_HEADER=() SC_BASE=() SC_SHARED=()

scenario_define() {
  local name=$1 tool=$2 path=$3 conns=$4 streams=$5 churn=$6 peer=$7 tls=$8 expect=$9
  SC_TOOL[$name]=$tool
  SC_PATH[$name]=$path
  SC_CONNS[$name]=$conns
  SC_STREAMS[$name]=$streams
  SC_CHURN[$name]=$churn
  SC_PEER[$name]=$peer
  SC_TLS[$name]=$tls
  SC_EXPECT[$name]=$expect
  SC_BASE[$name]=$name
  SC_SHARED[$name]=0
}

# scenario_share NAME BASE: BASE's settings and configs, ScalWS behind a shared address.
scenario_share() {
  local name=$1 base=$2
  scenario_define "$name" "${SC_TOOL[$base]}" "${SC_PATH[$base]}" "${SC_CONNS[$base]}" \
    "${SC_STREAMS[$base]}" "${SC_CHURN[$base]}" "${SC_PEER[$base]}" "${SC_TLS[$base]}" \
    "${SC_EXPECT[$base]}"
  SC_BASE[$name]=$base
  SC_SHARED[$name]=1
}

scenario_header() { SC_HEADER[$1]=$2; }

# Concurrency defaults come from `bench/run.sh --tune` runs on the 2-core reference
# machine (bench/README.md, "Connection counts").
#              name                tool   path          conns streams churn peer     tls expect
scenario_define static-small        wrk    /small.txt    64    1       0     none     0   size:1024
scenario_define static-1m           wrk    /large.bin    8     1       0     none     0   size:1048576
scenario_define respond             wrk    /respond      64    1       0     none     0   "hello, world"
scenario_define proxy               wrk    /proxy        64    1       0     upstream 0   "hello from the upstream"
scenario_define proxy-churn         wrk    /proxy        32    1       1     upstream 0   "hello from the upstream"
scenario_define cache-hit           wrk    /cached       64    1       0     upstream 0   "hello from the upstream"
scenario_define tls-h2-static-small h2load /small.txt    16    8       0     none     1   size:1024
# HTTP/3 has no nginx row (Debian's nginx 1.22 has no HTTP/3): its target is ScalWS's own
# CPU per request over TLS + HTTP/2 in the same run (bench/TARGETS.md).
scenario_define h3-static-small     h3load /small.txt    16    8       0     none     1   size:1024
scenario_define php                 wrk    /index.php    8     1       0     php      0   "hello from php"
# A 20 KiB PHP page both servers compress with gzip level 1 on the fly.
scenario_define php-gzip            wrk    /gzip.php     8     1       0     php      0   "gzip:size:20480"
scenario_header php-gzip "Accept-Encoding: gzip"
scenario_define node                wrk    /node         64    1       0     node     0   "hello from node"
scenario_define python              wrk    /python       16    1       0     python   0   "hello from python"
scenario_share static-small-shared static-small
scenario_share proxy-churn-shared proxy-churn

scenario_exists() { [[ -n ${SC_TOOL[$1]:-} ]]; }
