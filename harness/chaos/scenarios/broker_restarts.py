"""broker-restarts: the broker restarted N times under a steady telemetry stream"""
import json
import os
import random
import signal
import threading
import time

from common import AIRPODS_T, BASE, PHONE, check, figure
from support import started_bridge, TELEMETRY

NAME = "broker-restarts"
ORDER = 10


def scenario_broker_restarts(binary, root, restarts):
    print(f"== broker restarts ({restarts}) during a steady telemetry stream", flush=True)
    started = started_bridge(binary, root, "restarts", reconnect_max=2)
    if not started:
        return
    work, broker, client, bridge = started
    client.pub(TELEMETRY, json.dumps({"source_connected": PHONE}))
    stop = threading.Event()

    def stream():  # steady telemetry: the AirPods go in and out of the ear, 10 messages/s
        n = 0
        while not stop.is_set() and n < 100000:
            n += 1
            client.pub(TELEMETRY, json.dumps({"placement": "inEar" if n % 2 else "offHead", "rssi": -60}), timeout=2)
            time.sleep(0.1)

    streamer = threading.Thread(target=stream, daemon=True)
    streamer.start()
    survived, recoveries, missing = 0, [], []
    for i in range(restarts):
        time.sleep(random.uniform(0.3, 1.5))
        broker.stop(random.choice([signal.SIGTERM, signal.SIGKILL]))
        time.sleep(random.uniform(0.1, 1.0))
        broker.start()
        started = time.monotonic()
        # The broker keeps nothing (persistence false): whatever is retained now, the bridge republished.
        recovered = None
        while time.monotonic() - started < 20:
            got = client.first(f"{BASE}/bridge/state", wait=1)
            if got and '"online"' in got[0][1]:
                recovered = time.monotonic() - started
                break
        wanted = [f"{BASE}/bridge/info", f"{BASE}/accessory/{AIRPODS_T}", f"{BASE}/accessory/{AIRPODS_T}/availability",
                  f"{BASE}/bridge/accessories", f"homeassistant/+/{BASE}_{AIRPODS_T}/config"]
        absent = []
        if recovered is not None:
            for topic in wanted:
                if not client.first(topic, wait=2):
                    absent.append(topic)
        decision = client.first(f"{BASE}/accessory/{AIRPODS_T}/decision", wait=10) if recovered is not None else []
        ok = recovered is not None and not absent and bool(decision) and bridge.alive()
        if ok:
            survived += 1
            recoveries.append(recovered)
        else:
            missing.append(f"restart {i + 1}: recovered={recovered} absent={absent} decision={bool(decision)} alive={bridge.alive()}")
    stop.set()
    streamer.join(10)
    health = client.request("health") or {}
    check("restarts: every restart survived (state, info, accessory, availability, discovery republished; decisions resume)",
          survived == restarts, "; ".join(missing[:3]))
    check("restarts: the same bridge process throughout", bridge.alive())
    figure(f"broker restarts survived: {survived}/{restarts}")
    if recoveries:
        recoveries.sort()
        figure(f"time to recover after a broker restart (retained state republished): median {recoveries[len(recoveries) // 2]:.2f} s, "
               f"max {recoveries[-1]:.2f} s (reconnect backoff min_s 1, max_s 2)")
    figure(f"mqtt_reconnects reported by health: {health.get('data', {}).get('mqtt_reconnects')}")
    bridge.stop()
    broker.stop()


def run(ctx):
    scenario_broker_restarts(ctx.binary, ctx.root, ctx.args.restarts or (5 if ctx.short else 20))
