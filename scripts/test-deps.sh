#!/usr/bin/env bash
# Installs the system packages the test suite needs beyond the Rust toolchain.
#
# Each entry is "COMMAND PACKAGE": when COMMAND is missing, PACKAGE is installed with apt-get
# (as root; otherwise the script prints the command to run and fails, so that no test skips its
# subject silently). Run by scripts/test.sh.
set -euo pipefail

needs=(
  "cc gcc"
  "g++ g++"
  "pkg-config pkg-config"
  "make make"
  "objdump binutils"
  "python3-config python3-dev"
  "pip3 python3-pip"
  "mosquitto mosquitto"
  "mosquitto_passwd mosquitto"
  "mosquitto_sub mosquitto-clients"
  "promtool prometheus"
)

missing=()
for entry in "${needs[@]}"; do
  read -r cmd pkg <<<"$entry"
  command -v "$cmd" >/dev/null 2>&1 || missing+=("$pkg")
done
# python3-venv has no command of its own: without it Debian's python3 lacks ensurepip.
python3 -c 'import ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)
# ns-3 (the cross-validation's other simulator, validation/ns3/) is a library: ask pkg-config.
pkg-config --exists ns3-wifi ns3-internet ns3-point-to-point 2>/dev/null || missing+=(libns3-dev)
[ ${#missing[@]} -eq 0 ] && exit 0

install=(apt-get install -y --no-install-recommends "${missing[@]}")
if [ "$(id -u)" -ne 0 ]; then
  echo "the tests need: ${missing[*]}; install them with: sudo apt-get update && sudo ${install[*]}" >&2
  exit 1
fi
echo "installing test dependencies: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
"${install[@]}"
