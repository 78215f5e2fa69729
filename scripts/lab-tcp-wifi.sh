#!/usr/bin/env bash
# Kernel CUBIC and BBR beside the model on tcp_wifi.rs's network (issue 20, item 1;
# docs/SIMULATOR.md, "Against the kernel"): one 802.11g station (12 Mbit/s, placement seed 1)
# uploads through an AP with QUEUE frames per WiFi queue and five 200 Mbit/s 20 ms hops to the
# server, 40 s with 10 s of warm-up. Per queue, a UDP saturation run (1,488-byte datagrams,
# counted at the segments' 1,448 payload bytes) and a CUBIC and a BBR bulk flow each run in
# `acp sim` and in `acp lab` (root, real time); a row prints each side's goodput, share of its
# own saturation goodput, retransmissions and timeouts over the run, mean RTT, and the load
# average when the lab run ended.
#
# Usage: scripts/lab-tcp-wifi.sh [ACP] [OUT]   (ACP: default target/release/acp; OUT: a
# directory that keeps the scenario files and each lab run's `--out` record, default a new
# temporary one)
set -euo pipefail
cd "$(dirname "$0")/.."
acp=${1:-target/release/acp}
out=${2:-$(mktemp -d)}
mkdir -p "$out"

# The scenario text for QUEUE frames and FLOW (cubic, bbr, or udp).
scenario() {
    printf 'format = 2\nseed = 1\nduration = "40s"\nwarmup = "10s"\n'
    printf '[[wifi]]\nap = "ap1"\nstations = "source"\nstandard = "g"\nrate = "12mbit"\n'
    printf 'area = [20.0, 20.0]\nshadowing = 4.0\nqueue = %s\nap_queue = "per-station"\n' "$1"
    local nodes=(ap1 isp1 core isp2 ap2 monitor)
    for i in 0 1 2 3 4; do
        printf '[[link]]\nfrom = "%s"\nto = "%s"\nrate = "200mbit"\ndelay = "20ms"\nqueue = 100\n' \
            "${nodes[i]}" "${nodes[i + 1]}"
    done
    printf '[[flow]]\nname = "up"\npath = ["source", "ap1", "isp1", "core", "isp2", "ap2", "monitor"]\n'
    if [ "$2" = udp ]; then
        printf 'type = "cross"\nprocess = "cbr"\nrate = "12mbit"\nsize = 1488\n'
    else
        printf 'type = "tcp"\ncc = "%s"\nwindow = "packets"\n' "$2"
    fi
}
# Goodput (Mbit/s), retransmissions, timeouts and RTT (ms) of the flow of a sim or lab result.
summary='.flows[0] | [.throughput_mbit_s, (.tcp.retransmits // .tcp.total_retrans // 0),
  (.tcp.timeouts // .tcp.total_rto // 0), (.mean_rtt_ms // .rtt_ms // 0)] | @tsv'
printf '%-11s %9s %7s %9s %7s %13s %9s %15s  %s\n' run lab_mbit lab_% sim_mbit sim_% \
    retrans_l/s rto_l/s rtt_ms_l/s load
for q in 100 200 500; do
    for flow in udp cubic bbr; do
        f="$out/q${q}_$flow.toml"
        scenario "$q" "$flow" >"$f"
        read -r sm sr st srtt < <("$acp" sim --json "$f" | jq -r "$summary")
        rm -rf "$out/lab_q${q}_$flow"
        "$acp" lab --out "$out/lab_q${q}_$flow" "$f" >/dev/null 2>&1
        read -r lm lr lt lrtt < <(jq -r "$summary" "$out/lab_q${q}_$flow/result.json")
        load=$(cut -d' ' -f1-3 /proc/loadavg)
        if [ "$flow" = udp ]; then
            lsat=$(awk -v m="$lm" 'BEGIN { print m * 1448 / 1488 }')
            ssat=$(awk -v m="$sm" 'BEGIN { print m * 1448 / 1488 }')
            lm=$lsat sm=$ssat
        fi
        awk -v r="q$q $flow" -v lm="$lm" -v sm="$sm" -v ls="$lsat" -v ss="$ssat" -v lr="$lr" \
            -v sr="$sr" -v lt="$lt" -v st="$st" -v lrtt="$lrtt" -v srtt="$srtt" -v load="$load" \
            'BEGIN { printf "%-11s %9.3f %6.1f%% %9.3f %6.1f%% %6d/%-6d %4d/%-4d %7.0f/%-7.0f  %s\n",
                     r, lm, 100 * lm / ls, sm, 100 * sm / ss, lr, sr, lt, st, lrtt, srtt, load }'
    done
done
echo "files and lab records: $out"
