#!/usr/bin/env python3
"""A compressed week (docs/reliability.md, "A compressed week"): the real release binary
against a real mosquitto, a household's traffic at many times its real rate, over real time.
Run through scripts/soak.

Each simulated day lasts duration/7 real seconds and holds:
  - 3 paired accessories: Alice's AirPods (public address, worn / in the case in turns),
    Bob's Headphones (public address), Carol's AirPods reported by ESPresense by their IRK
    from a new address each time (rotating)
  - 60 neighbouring Apple devices whose random addresses rotate ROTATIONS_PER_DAY times a day
    (tens of thousands of distinct addresses per simulated day)
  - 4 OpenMQTTGateway nodes whose LWT goes offline and online again
  - Home Assistant restarts (its birth message on homeassistant/status), twice a day
  - requests throughout: health every second, a QoS 1 rename every 3 s
  - one broker restart
What it measures is resources: the fixed windows (the 30 s room window, the 15 s follow
window, the re-attach delay) do not compress. Behaviour over a week is HouseholdWeekTests'.

Every SAMPLE_S seconds: RSS, CPU per message, open descriptors, threads, the SQLite file and
WAL sizes, and /metrics (on loopback): it has no queue-depth gauge, so what stands for the
queues is the count of telemetry dropped for overload (the backlog's and the client's bounds). After the warm-up (the first fifth) each must stay flat:
the slope (least squares, per hour) and the maximum are reported; an RSS or database slope above
its limit (LIMITS), descriptors or threads more than COUNT_MARGIN above the warm-up's highest,
a request left unanswered, an acknowledged rename not stored, or the bridge exiting fail the
run. Everything listens on 127.0.0.1 only; every wait is bounded.
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from common import (AIRPODS, AIRPODS_T, HEADPHONES, Bridge, Broker, Client, check, figure, free_port,  # noqa: E402
                    household_config, sql, stop_process, summary, wait_online)

SAMPLE_S = 10
NEIGHBOURS = 60
ROTATIONS_PER_DAY = 300            # each neighbour's address changes this often a simulated day
NODES = ["hall", "kitchen", "office", "bedroom"]
CAROL = "C1:B2:C3:D4:E5:F6"
CAROL_IRK = "ec0234a357c8ad05341010a60a397d9b"
# A slope above these (after the warm-up, per real hour) is a leak, not noise: a week at the
# real rate is this run's traffic many times over, so even a slow leak shows here.
LIMITS = {"rss_mib": 8.0, "db_mib": 2.0}
# Descriptors and threads are small whole numbers: one more thread that Dispatch starts on demand
# halfway through a ten-minute run is a slope of +11/h, so a slope says nothing there. What leaks
# them leaks one per event (a broker restart, a Home Assistant birth, a gateway's LWT cycle: at
# least five of each after the warm-up) or per request (hundreds), so the bound is on the count:
# after the warm-up it stays within this many of the warm-up's highest.
COUNT_MARGIN = {"fds": 2, "threads": 2}
# The WAL is a sawtooth that SQLite's auto-checkpoint (1,000 pages) resets, and its file keeps
# its largest size: a bound on its size, not on its slope.
WAL_LIMIT_MIB = 16.0
# Apple proximity pairing of AirPods Pro (docs/mqtt-api.md's fixture): status 0x22 in the ear,
# 0x55 in the case with the lid open; and a Nearby Info frame (type 0x10) for the neighbours.
POD_HEAD, POD_TAIL = "4c000719010e20", "f58f00000a7d9fff27234873d4305e0fed1b39e2b8"
NEARBY = "4c0010051b1c0a1d3e"


def yaml_text(port, database, http_port):
    return household_config(port, database, health=30, homeassistant=True, availability_timeout=60, log_level="warning",
                            gateways=(("omg", "openmqttgateway"), ("native", "native"), ("esp", "espresense")),
                            more_accessories=((CAROL, "Carol's AirPods", "AirPods Pro", {"irk": f'"{CAROL_IRK}"'}),),
                            extra=f"http:\n  listen: 127.0.0.1:{http_port}\n")


class Traffic:
    """The household's advertisements, as lines into one `mosquitto_pub -l` per node (one
    process per topic keeps the rate high without a Python MQTT client)."""

    def __init__(self, port, rate, day_s):
        self.port, self.rate, self.day_s = port, rate, day_s
        self.sent = 0
        self.addresses = set()
        self.stop = threading.Event()
        self.running = threading.Event()   # cleared while the broker restarts
        self.running.set()
        self.idle = threading.Event()      # set while the thread waits for `running`
        self.publishers = {}

    def publisher(self, topic):
        proc = self.publishers.get(topic)
        if proc is None or proc.poll() is not None:
            proc = subprocess.Popen(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(self.port), "-q", "0",
                                     "-t", topic, "-l", "-i", f"soak-{topic.replace('/', '-')}"],
                                    stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.publishers[topic] = proc
        return proc

    def close(self):
        """Stops the publishers (after `stop`): they would outlive the soak otherwise."""
        for proc in list(self.publishers.values()):
            stop_process(proc, 5)
        self.publishers.clear()

    def send(self, topic, payload):
        proc = self.publisher(topic)
        try:
            proc.stdin.write((payload + "\n").encode())
            self.sent += 1
        except (BrokenPipeError, OSError):  # the broker restarted: the next line starts a new one
            self.publishers.pop(topic, None)
            try:
                proc.kill()
            except OSError:
                pass

    def neighbour(self, n, now):
        epoch = int(now / (self.day_s / ROTATIONS_PER_DAY))
        value = random.Random(n * 1_000_003 + epoch).getrandbits(46) | (0b01 << 46)  # resolvable private
        address = ":".join(f"{(value >> (8 * (5 - i))) & 0xFF:02X}" for i in range(6))
        self.addresses.add(address)
        return address

    def run(self, started):
        slice_s = 0.05
        tick = 0
        while not self.stop.is_set():
            if not self.running.is_set():
                # A publisher of a broker that went away could block its pipe: end them all
                # while the broker is down, and start new ones after.
                for proc in self.publishers.values():
                    proc.kill()
                    proc.wait()
                self.publishers.clear()
                self.idle.set()
                self.running.wait(60)
                self.idle.clear()
                continue
            now = time.monotonic() - started
            day_fraction = (now % self.day_s) / self.day_s
            for _ in range(max(1, int(self.rate * slice_s))):
                tick += 1
                node = NODES[tick % len(NODES)]
                topic = f"home/{node}/BTtoMQTT"
                kind = tick % 20
                if kind == 0:
                    worn = int(day_fraction * 24) % 3 != 0      # a third of the day in its case
                    status = "22" if worn else "55"
                    self.send(topic, json.dumps({"id": AIRPODS, "mac_type": 0, "rssi": -50 - tick % 20,
                                                 "manufacturerdata": POD_HEAD + status + POD_TAIL}))
                elif kind == 1:
                    self.send(topic, json.dumps({"id": HEADPHONES, "mac_type": 0, "rssi": -60 - tick % 15,
                                                 "name": "Acme Studio", "servicedata": "fe2c"}))
                elif kind == 2:
                    mac = "%012x" % (random.getrandbits(46) | (0b01 << 46))
                    room = NODES[(tick // 20) % len(NODES)]
                    self.send(f"espresense/devices/irk:{CAROL_IRK}/{room}",
                              json.dumps({"mac": mac, "id": f"irk:{CAROL_IRK}", "rssi@1m": -59,
                                          "rssi": -60.5 - tick % 10, "distance": 1.5}))
                else:
                    address = self.neighbour(tick % NEIGHBOURS, now)
                    self.send(topic, json.dumps({"id": address, "mac_type": 1, "rssi": -70 - tick % 25,
                                                 "manufacturerdata": NEARBY}))
            for proc in self.publishers.values():
                try:
                    proc.stdin.flush()
                except (BrokenPipeError, OSError):
                    pass
            time.sleep(slice_s)
        for proc in self.publishers.values():
            try:
                proc.stdin.close()
                proc.wait(5)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()


def proc_figures(pid):
    values = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "Threads"):
                values[key] = int(rest.split()[0])
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return {"rss_mib": values["VmRSS"] / 1024, "threads": values["Threads"],
            "fds": len(os.listdir(f"/proc/{pid}/fd")), "cpu_s": (int(fields[11]) + int(fields[12])) / ticks}


def metrics(port):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
            text = response.read().decode()
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            try:
                out[name] = float(value)
            except ValueError:
                pass
    return out


def slope_per_hour(points):
    """Least-squares slope of [(seconds, value)], per hour."""
    if len(points) < 3:
        return 0.0
    n = len(points)
    mx = sum(t for t, _ in points) / n
    my = sum(v for _, v in points) / n
    var = sum((t - mx) ** 2 for t, _ in points)
    return 0.0 if var == 0 else sum((t - mx) * (v - my) for t, v in points) / var * 3600


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--duration", type=float, default=3600, help="real seconds for the simulated week")
    parser.add_argument("--rate", type=float, default=400, help="advertisements per real second")
    args = parser.parse_args()
    started_run = time.monotonic()
    day_s = args.duration / 7
    root = tempfile.mkdtemp(prefix="aabridge-soak-")
    print(f"== a compressed week: {args.duration:.0f} s real, a simulated day every {day_s:.0f} s, "
          f"{args.rate:.0f} advertisements/s; work directory {root}", flush=True)
    broker = Broker(root)
    broker.start()
    client = Client(broker.port)
    database = os.path.join(root, "aabridge.sqlite3")
    http_port = free_port()
    bridge = Bridge(args.binary, root, yaml_text(broker.port, database, http_port))
    bridge.start()
    if not check("soak: the bridge comes online", wait_online(client, 30)):
        bridge.kill()
        broker.stop()
        return summary(started_run)
    started = time.monotonic()
    traffic = Traffic(broker.port, args.rate, day_s)
    threading.Thread(target=traffic.run, args=(started,), daemon=True).start()

    samples = []
    requests = {"sent": 0, "answered": 0, "renames_acked": 0}
    last_acked_name = None
    unanswered = []
    next_sample = next_request = next_rename = time.monotonic()
    broker_restarts = birth = lwt = 0
    day_events = set()
    while time.monotonic() - started < args.duration and bridge.alive():
        now = time.monotonic()
        elapsed = now - started
        day, fraction = int(elapsed // day_s), (elapsed % day_s) / day_s
        # The day's events, each once: HA restarts at 0.2 and 0.7, a gateway's LWT offline at
        # 0.3 and online at 0.4, the broker restarted at 0.5.
        for at, event in ((0.2, "birth"), (0.7, "birth2"), (0.3, "lwt-off"), (0.4, "lwt-on"), (0.5, "broker")):
            if fraction >= at and (day, event) not in day_events:
                day_events.add((day, event))
                node = NODES[day % len(NODES)]
                if event.startswith("birth"):
                    client.pub("homeassistant/status", "offline")
                    client.pub("homeassistant/status", "online")
                    birth += 1
                elif event == "lwt-off":
                    client.pub(f"home/{node}/LWT", "offline", retain=True)
                    lwt += 1
                elif event == "lwt-on":
                    client.pub(f"home/{node}/LWT", "online", retain=True)
                elif event == "broker":
                    traffic.running.clear()
                    traffic.idle.wait(30)
                    broker.stop()
                    time.sleep(1)
                    broker.start()
                    traffic.running.set()
                    broker_restarts += 1
                    wait_online(client, 30)
        if now >= next_request:
            next_request += 1
            requests["sent"] += 1
            if client.request("health", wait=10):
                requests["answered"] += 1
            else:
                unanswered.append(("health", round(elapsed)))
        if now >= next_rename:
            next_rename += 3
            name = f"Soak {requests['sent']}"
            requests["sent"] += 1
            response = client.request("accessory/rename", {"id": AIRPODS, "name": name}, wait=10)
            if response and response.get("status") == "ok":
                requests["answered"] += 1
                requests["renames_acked"] += 1
                last_acked_name = name
            elif response:
                requests["answered"] += 1
            else:
                unanswered.append(("rename", round(elapsed)))
        if now >= next_sample:
            next_sample += SAMPLE_S
            try:
                values = proc_figures(bridge.pid)
            except OSError:
                break
            m = metrics(http_port)
            values.update(t=elapsed, sent=traffic.sent,
                          received=m.get("aabridge_mqtt_messages_received_total", 0),
                          db_mib=os.path.getsize(database) / 2**20 if os.path.exists(database) else 0,
                          wal_mib=os.path.getsize(database + "-wal") / 2**20 if os.path.exists(database + "-wal") else 0,
                          queues={k: v for k, v in m.items() if 'reason="overload"' in k})
            samples.append(values)
            print(f"  .. t={elapsed:5.0f}s day {day + 1} rss={values['rss_mib']:.2f}MiB fds={values['fds']} "
                  f"threads={values['threads']} db={values['db_mib']:.2f}MiB wal={values['wal_mib']:.2f}MiB "
                  f"sent={traffic.sent} addresses={len(traffic.addresses)}", flush=True)
        time.sleep(0.05)
    traffic.stop.set()
    alive = bridge.alive()
    check("soak: the bridge ran to the end (no crash)", alive, "" if alive else f"exit {bridge.proc.returncode}")
    # Every request answered: a request in flight across a broker restart is QoS 1 and must be too.
    check("soak: every request answered", not unanswered and requests["answered"] == requests["sent"],
          f"{requests['answered']} of {requests['sent']} answered; unanswered: {unanswered[:10]}")
    status = bridge.stop()
    check("soak: a graceful stop at the end", status == 0, f"exit {status}")
    stored, _, _ = sql(database, f"SELECT display_name FROM accessories WHERE id = 0x{AIRPODS_T};")
    check("soak: the last acknowledged rename is stored", last_acked_name is not None and stored == last_acked_name,
          f"stored {stored!r}, last acknowledged {last_acked_name!r}")
    integrity, _, _ = sql(database, "PRAGMA integrity_check;")
    check("soak: the database is sound", integrity == "ok", integrity)

    warm = [s for s in samples if s["t"] >= args.duration / 5]
    figure(f"duration {args.duration:.0f} s real = 7 simulated days of {day_s:.0f} s; {len(samples)} samples, "
           f"{len(warm)} after warm-up")
    figure(f"traffic: {traffic.sent} advertisements ({traffic.sent / max(1, args.duration):.0f}/s), "
           f"{len(traffic.addresses)} distinct neighbour addresses ({len(traffic.addresses) / 7:.0f} per simulated day), "
           f"{requests['sent']} requests, {requests['renames_acked']} acknowledged renames, {broker_restarts} broker "
           f"restarts, {birth} Home Assistant births, {lwt} gateway LWT offline/online cycles")
    wal = [s["wal_mib"] for s in samples]
    figure(f"wal_mib: slope {slope_per_hour([(s['t'], s['wal_mib']) for s in warm]):+.2f}MiB/h after warm-up, "
           f"max {max(wal, default=0):.2f}MiB (limit {WAL_LIMIT_MIB})")
    check(f"soak: the WAL stays below {WAL_LIMIT_MIB} MiB", max(wal, default=0) <= WAL_LIMIT_MIB, f"max {max(wal, default=0):.2f}")
    for key, unit in (("rss_mib", "MiB"), ("db_mib", "MiB")):
        points = [(s["t"], s[key]) for s in warm]
        slope = slope_per_hour(points)
        top = max((v for _, v in points), default=0)
        figure(f"{key}: slope {slope:+.2f}{unit}/h after warm-up (limit {LIMITS[key]}), max {top:.2f}{unit}")
        check(f"soak: {key} stays flat (slope <= {LIMITS[key]}/h)", len(points) >= 3 and slope <= LIMITS[key],
              f"slope {slope:+.2f}/h over {len(points)} samples")
    for key in ("fds", "threads"):
        early = [s[key] for s in samples if s["t"] < args.duration / 5]
        late = [s[key] for s in warm]
        bound = max(early, default=0) + COUNT_MARGIN[key]
        top = max(late, default=0)
        figure(f"{key}: {min(late, default=0)}-{top} after warm-up (at most {bound}: the warm-up's highest "
               f"{max(early, default=0)} + {COUNT_MARGIN[key]}); slope {slope_per_hour([(s['t'], s[key]) for s in warm]):+.2f}/h")
        check(f"soak: {key} stay within {COUNT_MARGIN[key]} of the warm-up's highest", bool(early) and len(late) >= 3
              and top <= bound, f"highest {top} after warm-up, bound {bound}")
    if len(warm) >= 2:
        cpu = warm[-1]["cpu_s"] - warm[0]["cpu_s"]
        received = warm[-1]["received"] - warm[0]["received"]
        per = [((b["cpu_s"] - a["cpu_s"]) / max(1, b["received"] - a["received"]) * 1e6) for a, b in zip(warm, warm[1:])
               if b["received"] > a["received"]]
        figure(f"CPU per message received: {cpu / max(1, received) * 1e6:.1f} µs overall after warm-up, "
               f"{max(per, default=0):.1f} µs max over a {SAMPLE_S} s window; slope "
               f"{slope_per_hour([(b['t'], p) for b, p in zip(warm[1:], per)]):+.2f} µs/h")
        queues = sorted({k for s in warm for k in s["queues"]})
        for key in queues:
            points = [(s["t"], s["queues"].get(key, 0)) for s in warm]
            figure(f"{key}: slope {slope_per_hour(points):+.2f}/h, max {max(v for _, v in points):.0f}")
        if not queues:
            figure("queue depths: /metrics has no queue gauge; nothing was dropped for overload either")
    traffic.close()
    broker.stop()
    if os.environ.get("SOAK_KEEP") != "1":
        shutil.rmtree(root, ignore_errors=True)
    return summary(started_run)


if __name__ == "__main__":
    sys.exit(main())
