"""disk-full: a small tmpfs filled up, remounted read-only, and a read-only start"""
import os
import subprocess
import time

from common import AIRPODS, AIRPODS_T, BASE, Bridge, Broker, Client, check, figure, household_config, sql, wait_online
from support import Recorder, skip

NAME = "disk-full"
ORDER = 30


def scenario_disk_full(binary, root):
    print("== disk full (2 MiB tmpfs), storage remounted read-only, read-only start", flush=True)
    work = os.path.join(root, "diskfull")
    mnt = os.path.join(work, "mnt")
    os.makedirs(mnt)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", mnt]).returncode != 0:
        # Not a failure of the bridge: this machine does not let us mount (no root or no
        # CAP_SYS_ADMIN). Reported loudly, and in the summary, instead of silently passing.
        skip("disk-full", "cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)")
        return
    broker = Broker(work)
    bridge = None
    try:
        broker.start()
        client = Client(broker.port)
        database = os.path.join(mnt, "db.sqlite3")
        bridge = Bridge(binary, work, household_config(broker.port, database))
        recorder = Recorder(broker.port, os.path.join(work, "recorded.txt"))
        bridge.start()
        check("disk-full: bridge online", wait_online(client))
        r = client.request("accessory/rename", {"id": AIRPODS, "name": "before full"})
        check("disk-full: a change is acknowledged while there is space", r is not None and "error" not in r, str(r))
        last_acked = "before full"
        # Fill the file system.
        subprocess.run(["dd", "if=/dev/zero", f"of={mnt}/filler", "bs=4k"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        refused, acked_while_full, other = 0, 0, []
        for i in range(60):  # long names grow the WAL until a write cannot get a page
            name = f"full-{i}-" + "x" * 100
            r = client.request("accessory/rename", {"id": AIRPODS, "name": name})
            if r is None:
                other.append("no response")
            elif "error" in r:
                if r["error"].get("code") == "unknown" and "not stored" in r["error"].get("message", ""):
                    refused += 1
                else:
                    other.append(str(r["error"]))
            else:
                acked_while_full += 1
                last_acked = name
            if refused >= 3:
                break
        check("disk-full: changes refused with `unknown` (\"not stored: ...\")", refused >= 1 and not other,
              f"refused {refused}, acknowledged {acked_while_full} (space found in the WAL), other {other[:2]}")
        health = client.request("health")
        check("disk-full: reads keep working (health answered)", health is not None and "data" in health)
        current = client.first(f"{BASE}/accessory/{AIRPODS_T}", wait=2)
        check("disk-full: retained accessory state still served", bool(current))
        time.sleep(0.5)
        logs = [l for l in recorder.lines() if f" {BASE}/bridge/log " in l and "storage" in l]
        check("disk-full: the storage error is on bridge/log", bool(logs), logs[0][:200] if logs else "")

        # Read-only storage while running.
        os.remove(f"{mnt}/filler")
        r = client.request("accessory/rename", {"id": AIRPODS, "name": "space again"})
        check("disk-full: writes work again once space is freed (no restart)", r is not None and "error" not in r, str(r))
        if r is not None and "error" not in r:
            last_acked = "space again"
        # Read-only storage: Linux refuses to remount a file system read-only while the bridge
        # holds its database open for writing, so the bridge is killed, the file system
        # remounted read-only, and the bridge started on it.
        bridge.kill()
        ro = subprocess.run(["mount", "-o", "remount,ro", mnt]).returncode == 0
        check("read-only: storage file system remounted read-only", ro)
        bridge.start()
        check("read-only start: the bridge comes online on a read-only file system", wait_online(client))
        r = client.request("accessory/rename", {"id": AIRPODS, "name": "ro start"})
        check("read-only start: changes refused with `unknown`", r is not None and r.get("error", {}).get("code") == "unknown", str(r))
        acc = client.first(f"{BASE}/accessory/{AIRPODS_T}", wait=2)
        check("read-only start: stored state served", bool(acc) and last_acked in acc[0][1], acc[0][1][:120] if acc else "")
        bridge.kill()
        subprocess.run(["mount", "-o", "remount,rw", mnt])
        name, _, _ = sql(database, f"SELECT display_name FROM accessories WHERE id = 0x{AIRPODS_T};")
        ok, _, _ = sql(database, "PRAGMA integrity_check;")
        check("disk-full: nothing acknowledged was lost, nothing refused was stored; integrity ok",
              name == last_acked and ok == "ok", f"stored {name!r}, last acknowledged {last_acked!r}, integrity {ok}")
        figure(f"disk full: {refused} changes refused with unknown, {acked_while_full} acknowledged while full (all stored)")
        recorder.stop()
        with open(bridge.stderr_path, "rb") as f:
            stderr = f.read().decode("utf-8", "replace")
        check("read-only start: stderr says read-only", "read-only" in stderr)
    finally:
        if bridge:
            bridge.kill()
        broker.stop()
        subprocess.run(["umount", "-l", mnt])


def run(ctx):
    scenario_disk_full(ctx.binary, ctx.root)
