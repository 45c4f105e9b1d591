"""flood: telemetry far above the sustainable rate for D seconds"""
import json
import os
import subprocess
import threading
import time

from common import AIRPODS_T, BASE, Client, PHONE, check, figure
from support import started_bridge, TELEMETRY, expect_after

NAME = "flood"
ORDER = 40


# The highest flood rate offered (msg/s): see flood().
FLOOD_CEILING = 90_000


def scenario_flood(binary, root, seconds):
    print(f"== flood: telemetry far above the sustainable rate for {seconds} s", flush=True)
    started = started_bridge(binary, root, "flood", health=5)
    if not started:
        return
    work, broker, client, bridge = started
    baseline = bridge.rss_kb()
    # Calibration: a burst of 20,000 messages, then a request; the one loop answers it after
    # the burst, so (messages received - dropped) / time is what the bridge processes per second.
    lines = []
    for i in range(20000):
        if i % 2:
            lines.append(json.dumps({"placement": "inEar" if i % 4 == 1 else "offHead", "rssi": -60}))
        else:
            lines.append(json.dumps({"rssi": -60 - i % 30}))
    burst = "\n".join(lines) + "\n"
    before = (client.request("health") or {}).get("data", {})
    started = time.monotonic()
    subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(broker.port), "-q", "0", "-t", TELEMETRY, "-l"],
                   input=burst.encode(), timeout=60)
    health = (client.request("health", wait=30) or {}).get("data", {})
    elapsed = time.monotonic() - started
    processed = (health.get("messages_in", 0) - before.get("messages_in", 0)) - \
        (health.get("telemetry_rejected", 0) - before.get("telemetry_rejected", 0)) - 2
    sustainable = max(processed, 1) / elapsed
    figure(f"sustainable telemetry rate (a 20,000-message burst, processed messages / time until a request "
           f"behind it is answered): {sustainable:,.0f} msg/s")

    # The flood: 10x that rate, paced in 20 ms slices, from two publishers (two gateways'
    # topics), as lines into mosquitto_pub -l; at most FLOOD_CEILING. The calibration finishes
    # before its request is sent when the bridge is quick, and then reads 15,000-45,000 msg/s
    # instead of 8,000-10,000: ten times that is more than the broker and the publishers
    # manage on two cores, and the check would measure them rather than the bridge
    # (docs/reliability.md, "After the runtime redesign").
    target = min(10 * sustainable, FLOOD_CEILING)
    if target < 10 * sustainable:
        figure(f"flood: target capped at {FLOOD_CEILING:,} msg/s (10x the calibration would be {10 * sustainable:,.0f})")
    stop = threading.Event()
    sent = [0, 0]

    def publisher(index, topic):
        p = subprocess.Popen(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(broker.port), "-q", "0", "-t", topic, "-l"],
                             stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        per_slice = max(1, int(target / 2 * 0.02))
        chunk = "".join(json.dumps({"placement": "inEar" if i % 2 else "offHead", "rssi": -60}) + "\n"
                        for i in range(per_slice)).encode()
        next_slice = time.monotonic()
        try:
            while not stop.is_set():
                p.stdin.write(chunk)
                p.stdin.flush()
                sent[index] += per_slice
                next_slice += 0.02
                delay = next_slice - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
        except (BrokenPipeError, OSError):
            pass
        finally:
            try:
                p.stdin.close()
            except OSError:
                pass
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    threads = [threading.Thread(target=publisher, args=(i, t), daemon=True)
               for i, t in enumerate([TELEMETRY, f"{BASE}/telemetry/kitchen/{AIRPODS_T}"])]
    flood_before = (client.request("health") or {}).get("data", {})
    begin = time.monotonic()
    for t in threads:
        t.start()
    peak, latencies, unanswered = baseline or 0, [], 0
    lock = threading.Lock()

    def ask():  # one health request; requests overlap so a slow one does not stop the sampling
        t0 = time.monotonic()
        r = Client(broker.port).request("health", wait=20)
        with lock:
            if r is None:
                nonlocal_unanswered[0] += 1
            else:
                latencies.append(time.monotonic() - t0)

    nonlocal_unanswered = [0]
    askers = []
    while time.monotonic() - begin < seconds:
        peak = max(peak, bridge.rss_kb() or 0)
        if len(askers) < 200:
            t = threading.Thread(target=ask, daemon=True)
            t.start()
            askers.append(t)
        time.sleep(0.5)
    stop.set()
    duration = time.monotonic() - begin
    for t in askers:
        peak = max(peak, bridge.rss_kb() or 0)
        t.join(30)
    unanswered = nonlocal_unanswered[0]
    for t in threads:
        t.join(40)
    # Recovered: the bridge has caught up (nothing more arriving from the flood) and answers.
    t0 = time.monotonic()
    after, previous = None, None
    while time.monotonic() - t0 < 120:
        after = client.request("health", wait=5)
        current = (after or {}).get("data", {}).get("messages_in")
        if current is not None and previous is not None and current - previous <= 3:
            break
        previous = current
        time.sleep(1)
    recovered = time.monotonic() - t0
    data = (after or {}).get("data", {})
    received = data.get("messages_in", 0) - flood_before.get("messages_in", 0)
    rate = received / max(duration, 1)
    client.pub(TELEMETRY, json.dumps({"source_connected": PHONE}))
    client.pub(TELEMETRY, json.dumps({"placement": "offHead"}))
    time.sleep(0.3)
    t_decision = time.monotonic()
    decision = expect_after(client, f"{BASE}/accessory/{AIRPODS_T}/decision",
                            lambda: client.pub(TELEMETRY, json.dumps({"placement": "inEar"})), wait=90)
    decision_after = time.monotonic() - t_decision
    limit_kb = 256 * 1024
    check(f"flood: resident memory bounded (peak {peak // 1024} MiB < {limit_kb // 1024} MiB)", peak < limit_kb)
    latencies.sort()
    worst = latencies[-1] if latencies else None
    asked = len(latencies) + unanswered
    median = latencies[len(latencies) // 2] if latencies else None
    # Before the bridge bounded its unacknowledged publications (publishCongestionLimit) a
    # 60 s flood left 90 of 120 requests unanswered after 20 s (median 10 s).
    check("flood: the bridge keeps answering requests (every one within 20 s, median below 5 s)",
          asked > 0 and unanswered == 0 and median is not None and median < 5,
          f"{unanswered} of {asked} unanswered, median {median if median is None else round(median, 2)} s, "
          f"slowest {worst if worst is None else round(worst, 2)} s")
    check("flood: recovers without restart (same process, requests answered, decisions resume)",
          bridge.alive() and after is not None and bool(decision),
          f"caught up in {recovered:.1f} s, decision {'seen' if decision else 'not seen'} after {decision_after:.1f} s")
    figure(f"flood: first decision after the flood {decision_after:.1f} s after its telemetry" if decision else
           "flood: no decision within 90 s after the flood")
    figure(f"flood: {duration:.0f} s, target {target:,.0f} msg/s, published {sum(sent):,}, bridge received {received:,} "
           f"(~{rate:,.0f} msg/s, {rate / sustainable:.1f}x the sustainable rate), dropped and counted "
           f"(telemetry_rejected) {data.get('telemetry_rejected', 0) - flood_before.get('telemetry_rejected', 0):,}; "
           f"caught up (nothing more arriving, requests answered) {recovered:.1f} s after the flood stopped")
    if latencies:
        figure(f"flood: {asked} health requests during the flood, {unanswered} unanswered, latency median "
               f"{median:.2f} s, max {worst:.2f} s")
    figure(f"flood: RSS baseline {(baseline or 0) // 1024} MiB, peak {peak // 1024} MiB (bound asserted: {limit_kb // 1024} MiB)")
    bridge.stop()
    broker.stop()


def run(ctx):
    scenario_flood(ctx.binary, ctx.root, ctx.args.flood_seconds or (10 if ctx.short else 60))
