"""decoys: a node relaying a fresh address of an accessory's model and colour every second,
each heard once: the accessory's real rotation is still followed, an away accessory still
re-attached, the node shows lookalike_flood, and no decoy is ever attached (issue 49, finding 3)"""
import os
import threading

from common import AIRPODS, AIRPODS_T, BASE, check, figure
from forged import IN_EAR, address, frame, published, states, stream
from support import Recorder, started_bridge

NAME = "decoys"
ORDER = 136


def decoy_stream(port, gateway, seconds, first):
    """One fresh decoy address a second from `gateway`, each heard once."""
    stream(port, seconds, 1.0, lambda i: [(gateway, address(0x5D, first + i), frame(IN_EAR), -60)])


def flood_shown(recorder, gateway):
    """Whether `bridge/gateways` showed `gateway` (a node an entry heard from) with lookalike_flood."""
    for payload in published(recorder, f"{BASE}/bridge/gateways"):
        for entry in payload if isinstance(payload, list) else []:
            for node in [entry] + entry.get("heard", []):
                if node.get("name") == gateway and any(p.get("code") == "lookalike_flood" for p in node.get("problems", [])):
                    return True
    return False


def phase(ctx, name, availability, decoys_at, real_after_silence):
    """Alice heard in the bedroom, silent, decoys from `decoys_at`, then her real new address in
    the bedroom. The recorded states and whether the node showed the flood."""
    started = started_bridge(ctx.binary, ctx.root, name, availability_timeout=availability)
    if not started:
        return None
    work, broker, client, bridge = started
    try:
        recorder = Recorder(broker.port, os.path.join(work, "recorded.txt"))
        stream(broker.port, 4, 0.5, lambda i: [("bedroom", AIRPODS, frame(IN_EAR), -55)])
        decoys = threading.Thread(target=decoy_stream, args=(broker.port, decoys_at, 20, 0))
        decoys.start()
        real = address(0x4E, 1)
        stream(broker.port, real_after_silence, 1.0, lambda i: [])
        stream(broker.port, 20 - real_after_silence, 0.5, lambda i: [("bedroom", real, frame(IN_EAR), -55)])
        decoys.join()
        client.request("health")
        recorder.stop()
        return real, states(recorder, AIRPODS_T), flood_shown(recorder, decoys_at), bridge.alive()
    finally:
        bridge.stop()
        broker.stop()


def run(ctx):
    print(f"== {NAME}: a fresh decoy address of Alice's AirPods every second from one node", flush=True)
    # Following: the decoys from the node that hears her; she rotates (silent 4 s), the real new
    # address follows beside them.
    result = phase(ctx, f"{NAME}-follow", 120, "bedroom", 4)
    if result:
        real, recorded, flood, alive = result
        addresses = {state.get("address") for _, state in recorded}
        followed = any(s.get("address") == real and s.get("identity") == "followed" for _, s in recorded)
        decoyed = sorted(a for a in addresses if a and a.startswith("5D:"))
        check(f"{NAME}: her real rotation is followed beside the decoys", followed, str(sorted(a for a in addresses if a)))
        check(f"{NAME}: no decoy is ever her address (following)", not decoyed, str(decoyed))
        check(f"{NAME}: the node relaying the decoys shows lookalike_flood (following)", flood)
        check(f"{NAME}: the bridge stayed up (following)", alive)
    # Re-attaching: she is away (availability 2 s); the decoys from the hall, her real new
    # address in the bedroom, the room she stayed in.
    result = phase(ctx, f"{NAME}-reattach", 2, "hall", 6)
    if result:
        real, recorded, flood, alive = result
        reattached = any(s.get("address") == real and s.get("identity") == "reattached" for _, s in recorded)
        decoyed = sorted({s.get("address") for _, s in recorded if (s.get("address") or "").startswith("5D:")})
        check(f"{NAME}: her real address is re-attached despite the decoys' rivalry", reattached,
              str([(s.get("address"), s.get("identity"), s.get("available")) for _, s in recorded[-3:]]))
        check(f"{NAME}: no decoy is ever attached (re-attaching)", not decoyed, str(decoyed))
        check(f"{NAME}: the node relaying the decoys shows lookalike_flood (re-attaching)", flood)
        check(f"{NAME}: the bridge stayed up (re-attaching)", alive)
    figure(f"{NAME}: 20 decoys a phase, one a second, each heard once")
