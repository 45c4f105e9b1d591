"""sigkill: the bridge SIGKILLed N times during pairing/registration/rename requests"""
import os
import random
import threading

from common import AIRPODS, AIRPODS_T, Bridge, HEADPHONES, HEADPHONES_T, PHONE, check, figure, household_config, sql, wait_online
from support import ADV_ID, ADV_PAYLOAD, ADV_TOPIC, scenario_setup, stored_paired, stored_registered

NAME = "sigkill"
ORDER = 20


def scenario_sigkill(binary, root, kills):
    print(f"== bridge SIGKILLed {kills} times during pairing/registration/rename requests", flush=True)
    work, broker, client = scenario_setup(root, "sigkill")
    database = os.path.join(work, "db.sqlite3")
    bridge = Bridge(binary, work, household_config(broker.port, database))
    # Per key: the value of the last acknowledged change, and the values of changes sent after
    # it that got no response (in flight when the bridge died: either outcome is allowed).
    state = {"name": {"acked": "Alice's AirPods", "pending": []},
             "registered": {"acked": "0", "pending": []},
             "paired": {"acked": "0", "pending": []}}
    survived, failures, acked_total, integrity_failures = 0, [], 0, 0
    acked_by = {"name": 0, "registered": 0, "paired": 0}
    seq = 0

    def note(key, value, response):
        nonlocal acked_total
        if response is None:
            state[key]["pending"].append(value)
        elif "error" not in response:
            state[key]["acked"] = value
            state[key]["pending"] = []
            acked_total += 1
            acked_by[key] += 1
        # an error response: nothing changed (the pending list stays as it was)

    def stored():
        name, _, _ = sql(database, f"SELECT display_name FROM accessories WHERE id = 0x{AIRPODS_T};")
        reg, _, _ = sql(database, f"SELECT count(*) FROM registrations WHERE accessory_id = 0x{HEADPHONES_T} AND invalidated = 0;")
        paired, _, _ = sql(database, "SELECT count(*) FROM accessories WHERE id = 0xF1E2D3C4B5A6;")
        return {"name": name, "registered": reg, "paired": paired}

    for k in range(kills):
        bridge.start()
        if not wait_online(client, 30):
            failures.append(f"kill {k + 1}: the bridge did not come back")
            break
        # Requests queued for the bridge's session while it was down have now been handled
        # (in order, before the health request): start from what is stored.
        now = stored()
        for key in state:
            if state[key]["pending"] or now[key] != state[key]["acked"]:
                state[key] = {"acked": now[key], "pending": []}
        killer = threading.Timer(random.uniform(0.2, 2.5), bridge.kill)
        killer.start()
        ops = 0
        while bridge.alive() and ops < 400:
            ops += 1
            seq += 1
            choice = random.random()
            if choice < 0.4:
                name = f"chaos-{seq}"
                note("name", name, client.request("accessory/rename", {"id": AIRPODS, "name": name}, wait=2))
            elif choice < 0.7:
                want = "0" if stored_registered(state) == "1" else "1"
                if want == "1":
                    r = client.request("accessory/register", {"id": HEADPHONES, "capabilities": ["audioSwitching", "placement"],
                                                              "placement": "offHead", "primary_source": PHONE}, wait=2)
                else:
                    r = client.request("accessory/invalidate", {"id": HEADPHONES}, wait=2)
                note("registered", want, r)
            else:
                if stored_paired(state) == "1":
                    note("paired", "0", client.request("accessory/remove", {"id": ADV_ID}, wait=2))
                else:
                    # Pairing: picker shown, the accessory advertises, the user selects it.
                    client.request("picker/show", {}, wait=2)
                    client.pub(ADV_TOPIC, ADV_PAYLOAD)
                    note("paired", "1", client.request("picker/select", {"id": ADV_ID, "name": f"Paired {seq}"}, wait=2))
        killer.join()
        bridge.kill()
        result, _, err = sql(database, "PRAGMA integrity_check;")
        if result != "ok":
            integrity_failures += 1
            failures.append(f"kill {k + 1}: integrity_check: {result} {err}")
            continue
        now = stored()
        lost = [f"{key}: stored {now[key]!r}, acknowledged {v['acked']!r}, in flight {v['pending']}"
                for key, v in state.items() if now[key] != v["acked"] and now[key] not in v["pending"]]
        if lost:
            failures.append(f"kill {k + 1}: " + "; ".join(lost))
        else:
            survived += 1
        # What is stored now is the truth the next round starts from.
        for key in state:
            state[key] = {"acked": now[key], "pending": []}
    check("sigkill: every acknowledged change present after each kill, integrity_check ok",
          survived == kills and integrity_failures == 0, "; ".join(failures[:3]))
    figure(f"SIGKILLs survived with zero acknowledged loss: {survived}/{kills} "
           f"({acked_total} acknowledged changes: {acked_by['name']} renames, {acked_by['registered']} register/invalidate, "
           f"{acked_by['paired']} pair/remove; integrity_check failures: {integrity_failures})")
    broker.stop()


def run(ctx):
    scenario_sigkill(ctx.binary, ctx.root, ctx.args.kills or (10 if ctx.short else 50))
