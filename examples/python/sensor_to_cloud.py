"""A sensor and its monitor in one script, over loopback, after a look at the simulator.

1. Simulate the shared-bottleneck scenario and print each flow's age (a table; with pandas
   installed, `result.flows.to_pandas()` is a DataFrame).
2. Start a monitor, and a source that a "sensor" thread feeds with a reading every 5 ms; print
   the fresh readings the monitor receives for two seconds, then both sides' statistics.

Run from the repository root: python examples/python/sensor_to_cloud.py
"""

import threading
import time
from pathlib import Path

import acp

ROOT = Path(__file__).resolve().parents[2]

result = acp.simulate(ROOT / "scenarios" / "bottleneck.toml")
print(f"simulated {result.duration_s:.0f} s, seed {result.seed}")
for flow in result.flows:
    age = "-" if flow["age_ms"] is None else f"{flow['age_ms']:.1f} ms"
    print(f"  {flow['name']:<8} age {age:>9}  delivered {flow['rate_hz']:.1f}/s")

with acp.Monitor("127.0.0.1:0", clocks_synced=True) as monitor:
    with acp.Source(monitor.address, "acp+", max_rate=200) as source:
        done = threading.Event()

        def sensor() -> None:
            n = 0
            while not done.is_set():
                n += 1
                source.push(f"temp={20 + (n % 30) / 10:.1f} n={n}")
                time.sleep(0.005)

        feeder = threading.Thread(target=sensor)
        feeder.start()
        received = 0
        end = time.monotonic() + 2.0
        while time.monotonic() < end:
            for update in monitor.poll(timeout=0.25):
                received += 1
                if received % 50 == 1:
                    print(f"update {update.seq}: {update.payload.decode()} age {update.age_ms:.2f} ms")
        done.set()
        feeder.join()
    stats = source.close()
    print(f"source: sent {stats['sent']}, acked {stats['acks']}, rtt {stats['rtt_ms']:.2f} ms")
    for row in monitor.sessions():
        print(f"monitor: {row['delivered']} delivered, average age {row['avg_age_ms']:.2f} ms")
print(f"received {received} fresh readings")
