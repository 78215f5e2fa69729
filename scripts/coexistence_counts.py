"""The coexistence paper's throughput counted several ways (docs/COEXISTENCE.md, "Throughput").

Reads the result store of `acp reproduce coexistence --store DIR` and prints, per point of the
paper's three configurations, the total throughput as ours counts it (fresh updates as IP
datagrams plus TCP goodput), as the paper does (every ACKed update plus iPerf3's goodput),
with update payloads only, and as IP bytes on the air (updates plus TCP segments with their
52 bytes of TCP/IP headers, retransmissions included), beside the share of the run the channel
was busy.

Usage: python3 scripts/coexistence_counts.py DIR
"""
import json, sqlite3, sys, re, statistics as st
db = sqlite3.connect(sys.argv[1] + "/runs.sqlite")
rows = {}
for name, seed, js in db.execute("select scenario, seed, result_json from runs"):
    if "unmarked" in name or "fq AP" in name or "voice queues" in name:
        continue
    r = json.loads(js)
    m = re.match(r"(\w+): (\d+) (\S+) .* and (\d+) CUBIC", name)
    cfg, acp, ctl, tcp = m.group(1), int(m.group(2)), m.group(3), int(m.group(4))
    win = r["duration_s"] - r["warmup_s"]
    a = [f for f in r["flows"] if f["kind"] == "acp"]
    t = [f for f in r["flows"] if f["kind"] == "tcp"]
    ours_acp = sum(f["throughput_mbit_s"] for f in a)
    # ACKed updates: every update the monitor acknowledged (fresh or not), same datagram size.
    acked = sum(f["throughput_mbit_s"] * (f["source"]["acks_in_sequence"] + f["source"]["acks_out_of_sequence"]) / max(f["delivered"], 1) for f in a)
    # payload only (the 1024 bytes of an update, no ACP/UDP/IP headers): datagram 1096 bytes.
    payload_acp = ours_acp * 1024 / 1096
    ours_tcp = sum(f["throughput_mbit_s"] for f in t)
    # TCP as IP packets on the air: goodput plus 52 bytes of TCP/IP headers per 1448-byte
    # segment, retransmissions included (segments sent / segments delivered in order).
    ip_tcp = sum(f["throughput_mbit_s"] * (1500 / 1448) * f["tcp"]["segments"] / max(f["tcp"]["segments"] - f["tcp"]["retransmits"], 1) for f in t)
    busy = r["wifi"][0]["busy"]
    rows.setdefault((cfg, acp, tcp, ctl), []).append((ours_acp + ours_tcp, acked + ours_tcp, payload_acp + ours_tcp, ours_acp + ip_tcp, busy))
print("| config | ACP | TCP | controller | ours (fresh updates as IP + TCP goodput) | ACKed updates + goodput (the paper's count) | update payloads + goodput | IP bytes (updates + TCP segments with headers, retransmissions) | channel busy |")
print("|---|---:|---:|---|---:|---:|---:|---:|---:|")
allv = []
for k in sorted(rows, key=lambda k: (k[3], "BP MP BE".split().index(k[0]), k[1], k[2])):
    v = rows[k]
    mean = [st.mean(x[i] for x in v) for i in range(5)]
    allv.append(mean)
    print(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {mean[0]:.2f} | {mean[1]:.2f} | {mean[2]:.2f} | {mean[3]:.2f} | {100*mean[4]:.1f} % |")
for i, what in enumerate(["ours", "acked", "payload", "ip"]):
    xs = [m[i] for m in allv]
    print(what, f"{min(xs):.2f}-{max(xs):.2f}")
print("busy", f"{100*min(m[4] for m in allv):.1f}-{100*max(m[4] for m in allv):.1f} %")
