#!/usr/bin/env bash
# The coexistence paper's BP and MP on real stacks beside the simulator (issue 20, item 6;
# docs/COEXISTENCE.md, "On real stacks"): each file of scenarios/coexistence/lab/ (2 ACP+ or Seek
# flows marked CS7 beside 1, 2 and 5 kernel CUBIC flows, 802.11g at 12 Mbit/s, diffserv4 at the
# AP, 200 ms base RTT, 40 s) runs in `acp sim` and in `acp lab` (root), and a row prints the mean
# age of its two update flows on each side, their gap, the CUBIC flows' total throughput on each
# side and the load average when the lab run ended (the lab runs in real time on a shared
# machine).
#
# Usage: scripts/lab-coexistence.sh [ACP] [FILE...]   (ACP: the `acp` binary, default
# target/release/acp; files: default every file of scenarios/coexistence/lab/)
set -euo pipefail
cd "$(dirname "$0")/.."
acp=${1:-target/release/acp}
shift || true
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
    files=(scenarios/coexistence/lab/*.toml)
fi
# Mean age of the update flows and total throughput of the TCP flows of one `--json` result;
# the simulator and the lab name the age differently (age_ms, avg_age_ms).
summary='[
  ([.flows[] | select(.name | startswith("acp")) | (.age_ms // .avg_age_ms)] | add / length),
  ([.flows[] | select(.name | startswith("tcp")) | .throughput_mbit_s] | add)
] | @tsv'
printf '%-22s %9s %9s %7s %10s %10s  %s\n' file sim_age lab_age gap sim_tcp lab_tcp load
for f in "${files[@]}"; do
    read -r sim_age sim_tcp < <("$acp" sim --json "$f" | jq -r "$summary")
    read -r lab_age lab_tcp < <("$acp" lab --json "$f" 2>/dev/null | jq -r "$summary")
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    gap=$(awk -v s="$sim_age" -v l="$lab_age" 'BEGIN { printf "%+.1f%%", 100 * (s - l) / l }')
    printf '%-22s %9.1f %9.1f %7s %10.2f %10.2f  %s\n' "$(basename "$f" .toml)" \
        "$sim_age" "$lab_age" "$gap" "$sim_tcp" "$lab_tcp" "$load"
done
