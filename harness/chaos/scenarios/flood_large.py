"""flood-large: 512 KiB payloads (over the 64 KiB telemetry limit) for D seconds"""
import os
import subprocess
import threading
import time

from common import check, figure
from support import started_bridge, TELEMETRY

NAME = "flood-large"
ORDER = 50


def scenario_flood_large(binary, root, seconds):
    print(f"== flood of 512 KiB payloads (each refused: over the 64 KiB limit) for {seconds} s", flush=True)
    started = started_bridge(binary, root, "flood-large")
    if not started:
        return
    work, broker, client, bridge = started
    baseline = bridge.rss_kb() or 0
    payload_file = os.path.join(work, "large.txt")
    with open(payload_file, "w") as f:
        for i in range(64):
            f.write('{"rssi":-60,"pad":"' + "x" * (512 * 1024) + '"}\n')
    stop = threading.Event()

    def publisher():
        while not stop.is_set():
            with open(payload_file, "rb") as src:
                subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(broker.port), "-q", "0", "-t", TELEMETRY, "-l"],
                               stdin=src, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)

    threads = [threading.Thread(target=publisher, daemon=True) for _ in range(3)]
    for t in threads:
        t.start()
    begin, peak, worst, unanswered = time.monotonic(), baseline, 0.0, 0
    while time.monotonic() - begin < seconds:
        peak = max(peak, bridge.rss_kb() or 0)
        t0 = time.monotonic()
        if client.request("health", wait=20) is None:
            unanswered += 1
        else:
            worst = max(worst, time.monotonic() - t0)
        peak = max(peak, bridge.rss_kb() or 0)
        time.sleep(0.3)
    stop.set()
    for t in threads:
        t.join(70)
    after = client.request("health", wait=30) or {}
    data = after.get("data", {})
    check(f"flood-large: resident memory bounded (peak {peak // 1024} MiB < 512 MiB)", peak < 512 * 1024)
    check("flood-large: requests answered within 5 s, bridge alive", unanswered == 0 and worst < 5 and bridge.alive(),
          f"{unanswered} unanswered, slowest {worst:.2f} s")
    figure(f"flood of 512 KiB payloads: {data.get('messages_in', 0):,} received in {seconds} s, telemetry_rejected "
           f"{data.get('telemetry_rejected')}, RSS baseline {baseline // 1024} MiB, peak {peak // 1024} MiB, slowest request {worst:.2f} s")
    bridge.stop()
    broker.stop()


def run(ctx):
    scenario_flood_large(ctx.binary, ctx.root, 5 if ctx.short else 20)
