"""reattach-hijack: someone in radio range copies Alice's frames into another room just before
her AirPods go quiet, then forges a fresh address of her model and colour there; later her
real AirPods come back from a new address in her room. The forged address is never attached
where it was forged; where it was forged in her own room (indistinguishable), the real one
undoes it (reattachUndone); a real accessory is always offered (issue 49, finding 1)"""
import os

from common import AIRPODS, AIRPODS_T, BASE, check
from forged import IN_EAR, address, frame, published, states, stream
from support import Recorder, started_bridge

NAME = "reattach-hijack"
ORDER = 137


def listed(recorder, wanted):
    """Whether `bridge/lookalikes` ever listed `wanted`."""
    return any(isinstance(payload, list) and any(entry.get("address") == wanted for entry in payload)
               for payload in published(recorder, f"{BASE}/bridge/lookalikes"))


def attached(recorded, forged):
    """Whether a state ever showed Alice re-attached to `forged`."""
    return any(s.get("address") == forged and s.get("identity") == "reattached" for _, s in recorded)


def heard_then_away(port):
    """Alice in the bedroom at -55 dBm (2 Hz, 5 s), then silent past the 2-s availability."""
    stream(port, 5, 0.5, lambda i: [("bedroom", AIRPODS, frame(IN_EAR), -55)])


def phase(ctx, name, forgery):
    """A fresh bridge (availability 2 s) and a recorder; Alice heard in the bedroom, then quiet;
    `forgery(port, client)` plays the rest and returns what the checks need; they get the
    recorded states and the recorder as well. None when the bridge did not come online."""
    started = started_bridge(ctx.binary, ctx.root, name, availability_timeout=2)
    if not started:
        return None
    work, broker, client, bridge = started
    try:
        recorder = Recorder(broker.port, os.path.join(work, "recorded.txt"))
        heard_then_away(broker.port)
        result = forgery(broker.port, client)
        client.request("health")
        recorder.stop()
        check(f"{name}: the bridge stayed up", bridge.alive())
        return result, states(recorder, AIRPODS_T), recorder
    finally:
        bridge.stop()
        broker.stop()


def elsewhere(ctx):
    name = f"{NAME}-kitchen"
    forged, real = address(0x5F, 1), address(0x4E, 2)

    def forgery(port, client):
        # 4 copies of her frame at -20 dBm from the kitchen just before she goes quiet.
        stream(port, 1, 0.25, lambda i: [("kitchen", AIRPODS, frame(IN_EAR), -20)])
        stream(port, 4, 1.0, lambda i: [])
        stream(port, 8, 0.5, lambda i: [("kitchen", forged, frame(IN_EAR), -20)])
        # Her real AirPods from a new address in the bedroom, the forger still on.
        stream(port, 8, 0.5, lambda i: [("bedroom", real, frame(IN_EAR), -55), ("kitchen", forged, frame(IN_EAR), -20)])
        return client.request("accessory/reattach", {"id": AIRPODS, "address": real})

    ran = phase(ctx, name, forgery)
    if ran:
        answer, recorded, recorder = ran
        check(f"{name}: the address forged in another room is never attached", not attached(recorded, forged))
        check(f"{name}: her real new address is offered (never shut out)", listed(recorder, real))
        check(f"{name}: a person re-attaches the real one", (answer or {}).get("status") == "ok", str(answer))


def same_room(ctx):
    name = f"{NAME}-bedroom"
    forged, real = address(0x5F, 3), address(0x4E, 4)

    def forgery(port, client):
        stream(port, 4, 1.0, lambda i: [])
        # Forged in her own room: as good as her own, it may be re-attached...
        stream(port, 8, 0.5, lambda i: [("bedroom", forged, frame(IN_EAR), -55)])
        # ...until her real AirPods come out of the case beside it.
        stream(port, 6, 0.5, lambda i: [("bedroom", real, frame(IN_EAR), -50), ("bedroom", forged, frame(IN_EAR), -55)])

    ran = phase(ctx, name, forgery)
    if ran:
        _, recorded, recorder = ran
        undone = [e for e in published(recorder, f"{BASE}/bridge/event")
                  if isinstance(e, dict) and e.get("type") == "reattachUndone"]
        last = recorded[-1][1] if recorded else {}
        was_attached = attached(recorded, forged)
        if was_attached:
            check(f"{name}: the forged re-attachment is undone when her real AirPods are heard (reattachUndone)",
                  bool(undone), f"{len(undone)} events")
        stands = last.get("address") == forged and last.get("identity") == "reattached"
        check(f"{name}: no wrong attachment stands at the end", not stands,
              f"last state: address {last.get('address')}, identity {last.get('identity')}, available {last.get('available')}")
        check(f"{name}: both are offered", listed(recorder, real) and (not was_attached or listed(recorder, forged)))


def run(ctx):
    print(f"== {NAME}: copies of Alice's frames elsewhere before she goes quiet, then a forged address", flush=True)
    elsewhere(ctx)
    same_room(ctx)
