"""A Source and a Monitor over loopback, from Python threads."""

import threading
import time

import pytest

import acp


def readings(source, stop, every=0.005):
    """Pushes "reading N" every `every` seconds until `stop` is set; returns the last N."""
    n = 0
    while not stop.is_set():
        n += 1
        source.push(f"reading {n}")
        time.sleep(every)
    return n


def test_fresh_readings_reach_a_monitor_iterated_while_another_thread_pushes():
    with acp.Monitor("127.0.0.1:0", clocks_synced=True) as monitor:
        assert monitor.address == f"127.0.0.1:{monitor.port}"
        with acp.Source(monitor.address, max_rate=500) as source:
            stop = threading.Event()
            pusher = threading.Thread(target=readings, args=(source, stop))
            pusher.start()
            # Iterating blocks without the GIL: the pusher thread runs meanwhile.
            received = []
            started = time.monotonic()
            for update in monitor:
                received.append(update)
                if len(received) >= 100 or time.monotonic() - started > 10:
                    break
            stop.set()
            pusher.join()
            stats = source.stats()
        final = source.close()  # closing again is harmless
    assert len(received) >= 100
    numbers = [int(u.payload.split()[1]) for u in received]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)
    assert {u.session for u in received} == {source.session}
    assert all(0 <= u.age_ms < 500 for u in received)  # loopback, one clock: fresh
    # `stats()` is at most 50 ms old; the final statistics count every ACK.
    assert stats["phase"] == "running" and stats["acks"] >= 50
    assert final["sent"] >= stats["sent"] and final["acks"] >= 100
    row = received[-1].to_dict()
    assert row["payload"] == received[-1].payload.decode() and row["seq"] == received[-1].seq
    assert bytes.fromhex(row["payload_hex"]) == received[-1].payload
    # One session id in every output: the 16 hex digits `acp` prints.
    assert row["session"] == source.session and len(source.session) == 16
    int(source.session, 16)


def test_a_slow_consumer_gets_the_latest_update_of_each_source():
    with acp.Monitor("127.0.0.1:0") as monitor:
        sources = [acp.Source(monitor.address, "lazy") for _ in range(3)]
        for i in range(50):
            for s in sources:
                s.push(b"%d" % i)
            time.sleep(0.004)
        time.sleep(0.1)
        updates = monitor.poll()
        # One pending update per source, each the freshest that source delivered.
        assert sorted(u.session for u in updates) == sorted(s.session for s in sources)
        sessions = {row["session"]: row for row in monitor.sessions()}
        for u in updates:
            assert u.seq == sessions[u.session]["highest_seq"]
        assert monitor.poll() == []
        assert monitor.totals()["updates_superseded"] > 0
        for s in sources:
            s.close()
    with pytest.raises(RuntimeError, match="closed"):
        monitor.sessions()
    assert list(monitor) == []  # closed and drained: iteration ends


def test_sealed_sessions_need_the_monitors_key():
    key = "3 " + "5a" * 32 + "\n"
    other = "3 " + "a5" * 32 + "\n"
    with acp.Monitor("127.0.0.1:0", keys=key) as monitor:
        unsealed = acp.Source(monitor.address)
        forged = acp.Source(monitor.address, keys=other)
        sealed = acp.Source(monitor.address, keys=key)
        for i in range(40):
            for source in (unsealed, forged, sealed):
                source.push(b"%d" % i)
            time.sleep(0.005)
        time.sleep(0.1)
        sessions = {row["session"] for row in monitor.sessions()}
        delivered = {u.session for u in monitor.poll(timeout=0.5)}
        for source in (unsealed, forged, sealed):
            source.close()
    assert sessions == delivered == {sealed.session}
    with pytest.raises(ValueError, match="keys"):
        acp.Monitor("127.0.0.1:0", keys="3 not-hex")


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="unknown controller"):
        acp.Source("127.0.0.1:7200", "tcp")
    with pytest.raises(ValueError, match="address"):
        acp.Source("nowhere", "acp+")
    with pytest.raises(ValueError, match="min_rate"):
        acp.Source("127.0.0.1:7200", min_rate=5, max_rate=1)
    with pytest.raises(OverflowError):
        acp.Source("127.0.0.1:7200", dscp=-1)
    with acp.Source("127.0.0.1:7200") as source:
        with pytest.raises(ValueError, match="at most 65463 bytes"):
            source.push(bytes(70_000))
        with pytest.raises(TypeError):
            source.push(3.5)
    with pytest.raises(RuntimeError, match="closed"):
        source.push(b"late")
