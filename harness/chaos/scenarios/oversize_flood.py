"""oversize-flood: 48 MiB messages on a gateway topic, the broker without a packet limit"""
import os
import subprocess
import time

from common import check, figure, proc_status_kb
from support import started_bridge, Subscriber

NAME = "oversize-flood"
ORDER = 80


OVERSIZE_BYTES = 48 * 1024 * 1024
# What the bridge's resident memory may grow by while the oversize messages arrive. Before the
# bridge announced MQTT 5's Maximum Packet Size, three 48 MiB messages took it from 26 MiB to
# 170 MiB (docs/reliability.md); with it, it stays at its baseline.
OVERSIZE_RSS_GROWTH_KB = 64 * 1024


def scenario_oversize_flood(binary, root, count):
    print(f"== oversize flood: {count} messages of 48 MiB on a gateway topic, broker without a packet limit of its own",
          flush=True)
    # The chaos Broker sets neither max_packet_size nor message_size_limit: mosquitto takes
    # packets up to MQTT's 256 MiB, so only the bridge's own Maximum Packet Size (mqtt.max_packet_size,
    # 256 KiB, announced in its MQTT 5 CONNECT) keeps the messages from it.
    started = started_bridge(binary, root, "oversize-flood")
    if not started:
        return
    work, broker, client, bridge = started
    before = (client.request("health") or {}).get("data", {})
    baseline = proc_status_kb(bridge.pid, "VmRSS") or 0
    # Reset the kernel's peak-RSS mark (VmHWM) to the current RSS, so that VmHWM afterwards is
    # the peak during the flood, however short, not a sample of it (Linux >= 4.0: clear_refs 5).
    try:
        with open(f"/proc/{bridge.pid}/clear_refs", "w") as f:
            f.write("5")
        peak_source = "VmHWM, reset before the flood"
    except OSError:
        peak_source = "VmHWM since the bridge started (clear_refs not writable)"
    big = os.path.join(work, "oversize.bin")
    with open(big, "wb") as f:
        head, tail = b'{"id":"A1:B2:C3:D4:E5:F6","pad":"', b'"}'
        f.write(head + b"x" * (OVERSIZE_BYTES - len(head) - len(tail)) + tail)
    size = os.path.getsize(big)
    # A control subscriber on MQTT 3.1.1 (no Maximum Packet Size): it receives the messages
    # whole, which shows that the broker carried them and the bridge was offered them.
    control = Subscriber(broker.port, ["-V", "mqttv311", "-t", "home/gw1/BTtoMQTT/#", "-F", "%l", "-C", str(count)])
    began = time.monotonic()
    published = 0
    for i in range(count):
        r = subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(broker.port), "-q", "1",
                            "-t", f"home/gw1/BTtoMQTT/A1B2C3D4E5F{i:X}", "-f", big],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
        published += r.returncode == 0
    took = time.monotonic() - began
    lengths = [int(l) for l in control.stop(wait=60) if l.isdigit()]
    after = client.request("health", wait=30)
    peak = proc_status_kb(bridge.pid, "VmHWM") or 0
    now = proc_status_kb(bridge.pid, "VmRSS") or 0
    data = (after or {}).get("data", {})
    check(f"oversize-flood: the broker carried every message whole ({count} x {size:,} bytes to an MQTT 3.1.1 subscriber)",
          published == count and lengths == [size] * count, f"published {published}, control subscriber got {lengths}")
    check(f"oversize-flood: the bridge's peak RSS stays below its baseline + {OVERSIZE_RSS_GROWTH_KB // 1024} MiB",
          peak - baseline < OVERSIZE_RSS_GROWTH_KB,
          f"baseline {baseline / 1024:.1f} MiB, peak {peak / 1024:.1f} MiB ({peak_source})")
    check("oversize-flood: the same bridge answers a request afterwards", bridge.alive() and after is not None)
    figure(f"oversize flood: {count} x 48 MiB published in {took:.1f} s; bridge RSS baseline {baseline / 1024:.1f} MiB, "
           f"peak {peak / 1024:.1f} MiB ({peak_source}), {now / 1024:.1f} MiB after; messages_in "
           f"+{data.get('messages_in', 0) - before.get('messages_in', 0)} (the health request included), telemetry_rejected "
           f"+{data.get('telemetry_rejected', 0) - before.get('telemetry_rejected', 0)} (the broker drops what is larger "
           f"than the bridge's 256 KiB for it)")
    bridge.stop()
    broker.stop()


def run(ctx):
    scenario_oversize_flood(ctx.binary, ctx.root, 2 if ctx.short else 3)
