#!/bin/sh
# instance-config.sh SITE ROOT_DIR [PORT]: prints SITE (a standalone site file) as an
# instance config for `scalwsctl instance add NAME --config FILE`: without its [server]
# table (an instance's mode, CPUs and user come from `instance add`), relative roots made
# absolute against ROOT_DIR (the stored copy no longer sits beside them), and the example's
# port 8080 replaced by PORT when given. Used by deploy/run-example.sh and by the install
# rules (/etc/scalws/sites/example.toml).
set -eu
site=$1
root_dir=$2
port=${3:-8080}
printf '%s\n' "# An instance config made from the example site (deploy/examples/site.toml):" \
  "#   scalwsctl instance add example --config THIS_FILE && scalwsctl instance start example" \
  "# It serves $root_dir/www on http://127.0.0.1:$port/." ""
# The site's own opening comment (how to run it standalone) is left out too.
awk 'lead && /^(#|$)/ { next } { lead = 0 } /^\[/ { skip = ($0 ~ /^\[server\]/) } !skip' lead=1 "$site" |
  sed -e "s|root = \"\([^/\"][^\"]*\)\"|root = \"$root_dir/\1\"|g" \
    -e "s|127.0.0.1:8080|127.0.0.1:$port|"
