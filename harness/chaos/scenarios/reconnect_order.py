"""reconnect-order: a retained state in flight when the link drops (harness/chaos/proxy.py) must not overwrite
the newer one the bridge published while disconnected"""
import json
import os
import time

from common import AIRPODS_T, BASE, Bridge, check, figure, household_config, wait_for, wait_online
from support import Subscriber, TELEMETRY, scenario_setup, state_kind, went_back

NAME = "reconnect-order"
ORDER = 90


# reconnect-order: the availability timeout of the scenario's bridge, and the longest the bridge's
# loop sleeps however far away its next deadline is (WakeSchedule.maximumSleepMilliseconds).
RECONNECT_AVAILABILITY_S = 3
WAKE_BOUND_S = 5.0


def scenario_reconnect_order(binary, root, rounds):
    print(f"== reconnect order: a retained state in flight when the connection drops must not overwrite the newer "
          f"one published while disconnected ({rounds} round{'s' if rounds > 1 else ''})", flush=True)
    for n in range(1, rounds + 1):
        reconnect_order_round(binary, root, n, rounds)


def reconnect_order_round(binary, root, n, rounds):
    from proxy import Proxy
    label = "reconnect-order" + (f" (round {n})" if rounds > 1 else "")
    work, broker, client = scenario_setup(root, f"reconnect-order-{n}")
    proxy = Proxy(broker.port)
    topic = f"{BASE}/accessory/{AIRPODS_T}"
    availability = f"{topic}/availability"
    timeout = RECONNECT_AVAILABILITY_S
    # The bridge reaches the broker only through the proxy; the scenario's own clients
    # (telemetry, requests, the recorder) talk to the broker directly.
    bridge = Bridge(binary, work, household_config(proxy.port, os.path.join(work, "db.sqlite3"), reconnect_max=1,
                                              availability_timeout=timeout))
    recorder = None
    try:
        bridge.start()
        if not check(f"{label}: bridge online through the proxy", wait_online(client)):
            return
        # Nothing has heard the AirPods yet: their retained state is the start's
        # ("available":false, "last_seen":null), and the bridge's publications so far are acknowledged
        # (the health request above was answered after them).
        proxy.withhold()
        sent_at = time.monotonic()
        # QoS 0: the bridge's acknowledgement of a QoS 1 message would be withheld too, and a
        # broker keeping the bridge's session would deliver the telemetry again after the
        # reconnect, a newer "heard" that is not what this scenario is about.
        client.pub(TELEMETRY, json.dumps({"placement": "inEar"}), qos=0)
        # State A: the telemetry makes them available, inEar. The broker -> bridge direction
        # still flows, so the bridge gets the telemetry and publishes A; the proxy reads A and
        # keeps it. Waiting for A *in the proxy* (not for a time) means: A was written to the
        # socket, so libmosquitto holds it in flight, waiting for a PUBACK that never comes.
        seen = wait_for(lambda: proxy.find(lambda p: p.topic == topic and p.withheld and state_kind(p.payload) == "A"), 10)
        if not check(f"{label}: setup: the bridge published state A (available, inEar), withheld by the proxy", seen):
            return
        a_at = seen[0].at
        with open(bridge.stderr_path, "rb") as f:
            warnings_before = f.read().count(b"reconnecting")
        # Cut both connections (A is dropped with the rest of what was withheld) and refuse new
        # ones, so that everything the bridge publishes from now on waits in its client.
        proxy.refuse()
        dropped = proxy.cut()

        def noticed():
            with open(bridge.stderr_path, "rb") as f:
                return f.read().count(b"reconnecting") > warnings_before

        # The runtime logs "MQTT: ...; reconnecting" after the client marked itself disconnected
        # (the supervisor sets connected = false, then reports it): from then on a publication
        # goes to the client's outbox, not to libmosquitto. B is due `timeout` seconds after the
        # bridge handled the telemetry, i.e. after sent_at: if the line is seen before
        # sent_at + timeout, B is made while disconnected (deterministic, not a race).
        ok = wait_for(noticed, 5)
        noticed_after = time.monotonic() - sent_at
        if not check(f"{label}: setup: the bridge saw the connection drop before state B was due",
                     ok and noticed_after < timeout,
                     f"seen {noticed_after:.3f} s after the telemetry; B is due {timeout} s after it"):
            return
        # The recorder subscribes directly at the broker now, so that it sees, in the broker's
        # order, everything that arrives after the reconnect (its first message is the retained one).
        recorder = Subscriber(broker.port, ["-v", "-t", topic, "-t", availability, "-F", "%U %r %t %p"])
        if not check(f"{label}: setup: the recorder subscribed at the broker", recorder.subscribed.is_set()):
            return
        # State B: not heard for `timeout` s, the AirPods become unavailable. The deadline is
        # at most a_at + timeout (the bridge handled the telemetry before A reached the proxy);
        # the loop's wake is armed for it, and in any case the loop never sleeps more than 5 s
        # (WakeSchedule), so at a_at + timeout + 5 s + 1 s B has been published (into the
        # outbox: the client is disconnected), however the deadline is rounded.
        time.sleep(max(0.0, a_at + timeout + WAKE_BOUND_S + 1.0 - time.monotonic()))
        refused = proxy.refused
        released_at = time.monotonic()
        proxy.release()
        # Reconnected (the bridge retries every 1 s: reconnect max_s 1) and its subscriptions
        # restored once a request is answered; the republish that follows a connection is
        # handled before that request, and the broker delivered the recorder everything the
        # bridge sent before the response.
        back = wait_online(client, 30)
        reconnected = time.monotonic() - released_at
        time.sleep(0.5)
        lines = recorder.stop()
        recorder = None
        final = client.first(topic, wait=2)
        final_kind = state_kind(final[0][1]) if final else None
        if not check(f"{label}: the bridge reconnects once the proxy lets it", back):
            return
        messages = []
        for line in lines:
            parts = line.split(" ", 3)
            if len(parts) == 4 and parts[1] in ("0", "1") and parts[2] in (topic, availability):
                messages.append((float(parts[0]), parts[1] == "1", parts[2], parts[3]))
        live = [m for m in messages if not m[1]]   # after the reconnect: not the retained copy
        states = [(at, state_kind(p)) for at, _, t, p in live if t == topic]
        kinds = [k for _, k in states]
        avail = ["online" if '"online"' in p else "offline" for _, _, t, p in live if t == availability]
        stale_ms = None
        if went_back(kinds, "B", "A"):
            first_b = kinds.index("B")
            a_index = kinds.index("A", first_b)
            later_b = [at for at, k in states[a_index:] if k == "B"]
            stale_ms = (later_b[0] - states[a_index][0]) * 1000 if later_b else None
        check(f"{label}: after the reconnect the broker's retained state never goes back from B (unavailable) "
              f"to the older A (available)", kinds and not went_back(kinds, "B", "A"),
              f"accessory states in the broker's order: {', '.join(kinds) or 'none'}" +
              (f"; A was the retained state again for {stale_ms:.2f} ms, until the next B" if stale_ms is not None else
               "; A stayed retained" if went_back(kinds, "B", "A") else ""))
        check(f"{label}: after the reconnect the availability never goes back from offline to online",
              avail and not went_back(avail, "offline", "online"),
              f"availability in the broker's order: {', '.join(avail) or 'none'}")
        check(f"{label}: once settled, the retained state on the broker is B (unavailable), the newest",
              final_kind == "B", f"retained: {final_kind}")
        figure(f"{label}: withheld {dropped:,} bytes (state A among them), cut; {refused} reconnect attempts refused "
               f"over {released_at - a_at:.1f} s; reconnected {reconnected:.1f} s after the release; accessory states "
               f"after it: {', '.join(kinds) or 'none'}; availability: {', '.join(avail) or 'none'}; retained at the end: "
               f"{final_kind}")
    finally:
        if recorder:
            recorder.stop()
        bridge.stop()
        proxy.stop()
        broker.stop()


def run(ctx):
    scenario_reconnect_order(ctx.binary, ctx.root, 1 if ctx.short else 3)
