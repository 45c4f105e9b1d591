"""replay-flapping: an accessory's real frames and replayed ones with the clear status changed,
from another node, at 1 Hz each: placement must not flap, and with the encryption key the
replay cannot put it in ear at all (issue 49, finding 2)"""
import math
import os

from common import AIRPODS, AIRPODS_T, BASE, check, figure
from forged import IN_CASE, IN_EAR, charging_block, frame, states, stream
from support import Recorder, started_bridge

NAME = "replay-flapping"
ORDER = 135

CAROL = "C0:A1:B2:C3:D4:E5"
CAROL_T = CAROL.replace(":", "")
KEY = "00112233445566778899aabbccddeeff"


def placements(recorded):
    """The placements the states went through, consecutive repeats dropped."""
    seen = []
    for _, state in recorded:
        if not seen or seen[-1] != state.get("placement"):
            seen.append(state.get("placement"))
    return seen


def run(ctx):
    seconds = 30 if ctx.short else 60
    print(f"== {NAME}: real in-case frames and replayed in-ear ones, 1 Hz each, for {seconds} s", flush=True)
    started = started_bridge(ctx.binary, ctx.root, NAME, debounce=500,
                             more_accessories=((CAROL, "Carol's AirPods", "AirPods Pro"),))
    if not started:
        return
    work, broker, client, bridge = started
    try:
        keys = client.request("accessory/keys", {"id": CAROL, "encryption_key": KEY})
        check(f"{NAME}: Carol's encryption key taken", (keys or {}).get("status") == "ok", str(keys))
        recorder = Recorder(broker.port, os.path.join(work, "recorded.txt"))
        real_case = frame(IN_CASE)
        forged_ear = frame(IN_EAR)
        # Carol's real frames carry her encrypted block (buds charging in the case); the replay
        # keeps the block and changes only the clear status.
        block = charging_block(KEY)
        carol_case, carol_forged = frame(IN_CASE, block), frame(IN_EAR, block)

        # Control: each stream alone moves placement (else the checks below could not fail);
        # Carol's in-ear frame with a block of buds out of the case does put her in ear.
        worn = frame(IN_EAR, charging_block(KEY, charging=False))
        stream(broker.port, 2, 0.5, lambda i: [("kitchen", AIRPODS, forged_ear, -40), ("kitchen", CAROL, worn, -40)])
        stream(broker.port, 2, 0.5, lambda i: [("bedroom", AIRPODS, real_case, -60), ("bedroom", CAROL, carol_case, -60)])
        client.request("health")
        control = placements(states(recorder, AIRPODS_T)), placements(states(recorder, CAROL_T))
        check(f"{NAME}: control: the replayed frames alone put Alice and Carol in ear, their real ones take them out",
              control[0][-2:] == ["inEar", "offHead"] and control[1][-2:] == ["inEar", "offHead"], str(control))
        stream(broker.port, 3, 1.0, lambda i: [])
        start = len(states(recorder, AIRPODS_T))
        carol_start = len(states(recorder, CAROL_T))

        def sends(i):
            if i % 2 == 0:
                return [("bedroom", AIRPODS, real_case, -60), ("bedroom", CAROL, carol_case, -60)]
            return [("kitchen", AIRPODS, forged_ear, -40), ("kitchen", CAROL, carol_forged, -40)]

        stream(broker.port, seconds, 0.5, sends)
        client.request("health")  # everything before it was taken
        recorder.stop()
        alice = placements(states(recorder, AIRPODS_T)[start - 1:])
        carol = placements(states(recorder, CAROL_T)[carol_start - 1:])
        changes = max(0, len(alice) - 1)
        # The review (8fb8ac2, debounce 500 ms): 29 of 57 states in ear, about one change a
        # second. Each contradiction after the first doubles the window (1 s, 2 s, ... 30 s), so a change needs a
        # hold twice as long as the last: a few at the start on a jittery stream, then none.
        bound = 2 + math.ceil(math.log2(seconds))
        figure(f"{NAME}: without keys, {changes} placement changes in {seconds} s of 1 Hz real against 1 Hz replayed "
               f"(placements: {' > '.join(str(p) for p in alice[:12])})")
        check(f"{NAME}: without keys, placement flaps at most {bound} times", changes <= bound, str(alice[:20]))
        check(f"{NAME}: with the encryption key, the replay never puts Carol in ear", carol == ["offHead"], str(carol))
        check(f"{NAME}: the bridge stayed up", bridge.alive())
    finally:
        bridge.stop()
        broker.stop()
