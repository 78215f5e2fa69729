#!/usr/bin/env bash
# Builds the ns-3 side of the cross-validation (wifi_check.cc) against Debian's libns3-dev
# (installed by scripts/test-deps.sh) into target/ns3/wifi_check. Rebuilds only when the source
# or this script is newer than the binary. Prints the binary's path.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${CARGO_TARGET_DIR:-$root/target}/ns3"
bin="$out/wifi_check"
modules=(ns3-core ns3-network ns3-internet ns3-wifi ns3-mobility ns3-point-to-point
  ns3-applications ns3-traffic-control ns3-propagation)

if ! pkg-config --exists "${modules[@]}" 2>/dev/null; then
  echo "ns-3 development files not found; run scripts/test-deps.sh (apt-get install libns3-dev)" >&2
  exit 1
fi
if [ -x "$bin" ] && [ "$bin" -nt "$here/wifi_check.cc" ] && [ "$bin" -nt "$here/build.sh" ]; then
  echo "$bin"
  exit 0
fi
mkdir -p "$out"
# Debian's .pc files carry a stray "-I/usr;" token; keep only well-formed flags.
cflags=$(pkg-config --cflags "${modules[@]}" | tr ' ' '\n' | grep -v ';' | tr '\n' ' ')
# They also name libraries by absolute path (GSL's, SQLite's) whose unversioned .so comes only
# with their -dev packages; ns-3's own shared libraries already link them, so leave out the
# ones that are absent.
libs=""
for flag in $(pkg-config --libs "${modules[@]}"); do
  case "$flag" in
    /*) [ -e "$flag" ] && libs+=" $flag" ;;
    *) libs+=" $flag" ;;
  esac
done
# shellcheck disable=SC2086
g++ -std=c++17 -O2 -Wall -Wextra -o "$bin.tmp" "$here/wifi_check.cc" $cflags $libs
mv "$bin.tmp" "$bin"
echo "$bin"
