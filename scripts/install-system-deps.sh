#!/usr/bin/env bash
# Install the Debian packages the tests need, if missing: prometheus (the real server and
# promtool, used as the oracle of gpuscale's PromQL engine and by the twin's tests), and
# Debian's Go with the Prometheus client library (to build the tutorial's Go program, the
# reference `gpuscale app` is compared with, byte for byte).
# Needs root (or sudo) only when something is missing.
set -euo pipefail
pkgs=(prometheus golang-go golang-github-prometheus-client-golang-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
((${#missing[@]})) || exit 0
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
echo "installing Debian packages: ${missing[*]}" >&2
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
