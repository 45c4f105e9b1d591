#!/usr/bin/env python3
"""A stand-in for one aabridge instance in cluster mode, for testing the harness itself
(`cluster_test.py --fake`) before cluster mode exists. It implements the contract's
observable behaviour in the simplest way, NOT the bridge: membership and partition ownership
with PostgreSQL session advisory locks (through one psql process = one session), rendezvous
hashing over the live members, cluster_partitions owner/epoch, retained state / decisions /
register responses carrying instance and epoch, bridge/instances/<name>, and the MQTT will.
Placement is read from the status byte of the proximity-pairing message, without debounce;
a decision is published after its placement is committed.

Usage (as the harness starts an instance): fake_instance.py run --config FILE
"""
import json
import os
import re
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402
import paho.mqtt.client as mqtt  # noqa: E402

PARTITION_CLASS, MEMBER_CLASS = 1094795840, 1094795841
# Faults to show the harness catches them (cluster_test.py --fake-fault): "lose-acked" answers
# every fifth registration ok without storing it, "forget-placement"
# takes partitions over without loading placements (duplicate decisions), "stale-epoch" keeps
# publishing a given-up partition's states once more after unlocking it (older epoch after newer),
# "slow-takeover" waits 12 s before taking partitions it did not hold at its start.
FAULT = os.environ.get("FAKE_FAULT", "")
BASE = "aabridge"


def now_text():
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + ".000Z"


def log(text):
    print(f"{now_text()} fake: {text}", flush=True)


class Session:
    """One PostgreSQL session: a psql process fed queries on stdin."""

    def __init__(self, url):
        self.proc = subprocess.Popen(["psql", "-X", "-q", "-At", "-F", "\t", url], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, bufsize=0)
        self.lock = threading.Lock()
        self.query("SELECT 1")

    def query(self, sql):
        with self.lock:
            if self.proc.poll() is not None:
                raise IOError("session gone")
            try:
                self.proc.stdin.write((sql.rstrip().rstrip(";") + ";\n\\echo __END__\n").encode())
                self.proc.stdin.flush()
            except OSError as error:
                raise IOError(str(error))
            rows, errors = [], []
            while True:
                line = self.proc.stdout.readline()
                if not line:
                    raise IOError("session gone")
                text = line.decode(errors="replace").rstrip("\n")
                if text == "__END__":
                    break
                if text.startswith(("ERROR:", "psql:", "FATAL:", "server closed", "connection to server",
                                    "The connection", "\tThis probably", "no connection")):
                    errors.append(text)
                elif text:
                    rows.append(text.split("\t"))
            if errors:
                if any("connection" in e or "server closed" in e or "FATAL" in e for e in errors):
                    self.close()
                    raise IOError("; ".join(errors))
                raise RuntimeError("; ".join(errors))
            return rows

    def close(self):
        try:
            self.proc.kill()
            self.proc.wait()
        except OSError:
            pass


class Fake:
    def __init__(self, config):
        text = open(config).read()
        self.port = int(re.search(r"server: mqtt://127\.0\.0\.1:(\d+)", text).group(1))
        self.url = re.search(r'url: "([^"]+)"', text).group(1)
        self.name = re.search(r"instance: (\S+)", text).group(1)
        self.partitions = int(re.search(r"partitions: (\d+)", text).group(1))
        ids = re.findall(r'id: "([0-9A-F:]{17})"', text)
        self.accessories = [int(i.replace(":", ""), 16) for i in ids]
        self.by_partition = {}
        for a in self.accessories:
            self.by_partition.setdefault(checks.partition_of(a, self.partitions), []).append(a)
        self.lock_key = checks.fnv1a64(self.name.encode()) & 0x7FFFFFFF
        self.session = None
        self.held = {}            # partition -> epoch
        self.placement = {}       # accessory -> 'inEar' | 'offHead' (owned ones)
        self.registration = {}    # accessory -> (primary, secondary)
        self.state_lock = threading.RLock()
        self.client = mqtt.Client(client_id=f"aabridge-{self.name}", clean_session=False)
        self.client.will_set(f"{BASE}/bridge/instances/{self.name}",
                             json.dumps({"instance": self.name, "state": "offline", "partitions": [], "accessories": 0,
                                         "at": None}), qos=1, retain=True)
        self.client.on_connect = self.on_connect
        self.client.on_message = self.on_message
        self.started_with = None   # the partitions first taken (faults apply to later takeovers)
        self.slow_since = None
        self.registrations_seen = 0
        self.events = []
        self.events_ready = threading.Condition()

    # --- PostgreSQL -------------------------------------------------------------------------
    def connect_db(self):
        self.session = Session(self.url)
        s = self.session
        s.query("CREATE TABLE IF NOT EXISTS cluster_members(instance TEXT PRIMARY KEY, lock_key BIGINT, "
                "started_at TIMESTAMPTZ, heartbeat_at TIMESTAMPTZ)")
        s.query("CREATE TABLE IF NOT EXISTS cluster_partitions(partition INT PRIMARY KEY, owner TEXT, epoch BIGINT, "
                "since TIMESTAMPTZ)")
        s.query("CREATE TABLE IF NOT EXISTS registrations(accessory_id BIGINT PRIMARY KEY, capabilities INT, "
                "placement TEXT, primary_source BIGINT, secondary_source BIGINT, invalidated BOOLEAN, "
                "updated_at TIMESTAMPTZ)")
        s.query(f"INSERT INTO cluster_members VALUES ('{self.name}', {self.lock_key}, now(), now()) "
                f"ON CONFLICT (instance) DO UPDATE SET lock_key = EXCLUDED.lock_key, started_at = now()")
        if s.query(f"SELECT pg_try_advisory_lock({MEMBER_CLASS}, {self.lock_key})") != [["t"]]:
            raise RuntimeError("member lock taken: another live instance with this name")

    def live(self):
        rows = self.session.query(
            f"SELECT m.instance FROM cluster_members m JOIN pg_locks l ON l.locktype = 'advisory' AND "
            f"l.classid = {MEMBER_CLASS} AND l.objid = m.lock_key AND l.objsubid = 2 AND l.granted")
        return sorted({r[0] for r in rows})

    def rebalance(self):
        live = self.live()
        want = {p for p in range(self.partitions) if checks.rendezvous_owner(p, live) == self.name}
        changed = False
        for p in sorted(set(self.held) - want):       # give up: stop publishing, then unlock
            with self.state_lock:
                epoch = self.held[p]
                if FAULT != "stale-epoch":
                    del self.held[p]
                    for a in self.by_partition.get(p, []):
                        self.placement.pop(a, None)
            self.session.query(f"SELECT pg_advisory_unlock({PARTITION_CLASS}, {p})")
            if FAULT == "stale-epoch":
                time.sleep(1.0)   # the new owner has published meanwhile
                with self.state_lock:
                    for a in self.by_partition.get(p, []):
                        self.publish_state(a)
                    del self.held[p]
            changed = True
        if FAULT == "slow-takeover" and want - set(self.held) and self.started_with is not None \
                and not (want - set(self.held)) <= self.started_with:
            if self.slow_since is None:
                self.slow_since = time.monotonic()
            if time.monotonic() - self.slow_since < 12:
                want = set(self.held) | (want & self.started_with)
            else:
                self.slow_since = None
        for p in sorted(want - set(self.held)):
            if self.session.query(f"SELECT pg_try_advisory_lock({PARTITION_CLASS}, {p})") != [["t"]]:
                continue    # its previous owner has not let go yet: next round
            epoch = int(self.session.query(
                f"INSERT INTO cluster_partitions VALUES ({p}, '{self.name}', 1, now()) ON CONFLICT (partition) DO "
                f"UPDATE SET epoch = cluster_partitions.epoch + (CASE WHEN cluster_partitions.owner = "
                f"'{self.name}' THEN 0 ELSE 1 END), owner = '{self.name}', since = now() RETURNING epoch")[0][0])
            ids = self.by_partition.get(p, [])
            rows = self.session.query(
                "SELECT accessory_id, placement, primary_source, secondary_source FROM registrations WHERE "
                f"accessory_id IN ({','.join(str(a) for a in ids) or 'NULL'})") if ids else []
            if FAULT == "forget-placement" and self.started_with is not None:
                rows = []
            with self.state_lock:
                for accessory_id, placement, primary, secondary in rows:
                    a = int(accessory_id)
                    self.placement[a] = placement or "offHead"
                    self.registration[a] = (primary, secondary)
                self.held[p] = epoch
                for a in ids:
                    self.placement.setdefault(a, "offHead")
                    self.publish_state(a)
            changed = True
        if self.started_with is None and self.held:
            self.started_with = set(self.held)
        if changed:
            self.publish_instance()

    def drop_all(self):
        with self.state_lock:
            had = bool(self.held)
            self.held.clear()
            self.placement.clear()
        if had:
            self.publish_instance()

    # --- MQTT -------------------------------------------------------------------------------
    def publish_instance(self):
        with self.state_lock:
            parts = sorted(self.held)
            count = sum(len(self.by_partition.get(p, [])) for p in parts)
        self.client.publish(f"{BASE}/bridge/instances/{self.name}",
                            json.dumps({"instance": self.name, "state": "online", "partitions": parts,
                                        "accessories": count, "at": now_text()}), qos=1, retain=True)

    def publish_state(self, a):
        p = checks.partition_of(a, self.partitions)
        placement = self.placement.get(a, "offHead")
        self.client.publish(f"{BASE}/accessory/{a:012X}", json.dumps(
            {"id": a, "placement": placement, "worn": placement == "inEar", "instance": self.name,
             "epoch": self.held[p]}), qos=1, retain=True)

    def on_connect(self, client, userdata, flags, rc):
        client.subscribe([("home/+/BTtoMQTT/#", 0), (f"{BASE}/bridge/request/#", 1), (f"{BASE}/bridge/state", 1)])
        client.publish(f"{BASE}/bridge/state", json.dumps({"state": "online"}), qos=1, retain=True)
        self.publish_instance()

    def on_message(self, client, userdata, message):
        with self.events_ready:
            self.events.append(message)
            self.events_ready.notify()

    def handle(self, message):
        topic = message.topic
        if topic == f"{BASE}/bridge/state":
            if b"offline" in message.payload and not message.retain:
                self.client.publish(topic, json.dumps({"state": "online"}), qos=1, retain=True)
            return
        try:
            payload = json.loads(message.payload)
        except ValueError:
            return
        if "/BTtoMQTT/" in topic:
            a = int(payload.get("id", "0").replace(":", ""), 16)
            p = checks.partition_of(a, self.partitions)
            mfd = payload.get("manufacturerdata", "")
            if p not in self.held or len(mfd) < 16:
                return
            placement = "inEar" if int(mfd[14:16], 16) & 0x0A else "offHead"
            with self.state_lock:
                if p not in self.held or self.placement.get(a) == placement:
                    return
                epoch = self.held[p]
            try:
                self.session.query(f"UPDATE registrations SET placement = '{placement}' WHERE accessory_id = {a}")
            except (IOError, RuntimeError):
                return
            with self.state_lock:
                if p not in self.held:
                    return
                self.placement[a] = placement
                self.publish_state(a)
                self.client.publish(f"{BASE}/accessory/{a:012X}/decision", json.dumps(
                    {"action": "route" if placement == "inEar" else "release", "accessory": a,
                     "reason": f"placement:{placement}", "placement": placement, "instance": self.name,
                     "epoch": epoch}), qos=1)
        elif topic == f"{BASE}/bridge/request/accessory/register":
            a = int(payload["id"].replace(":", ""), 16)
            p = checks.partition_of(a, self.partitions)
            with self.state_lock:
                if p not in self.held:
                    return
                epoch = self.held[p]
            primary = int(payload["primary_source"].replace(":", ""), 16)
            secondary = int(payload["secondary_source"].replace(":", ""), 16)
            response = {"transaction": payload.get("transaction"), "instance": self.name, "epoch": epoch}
            self.registrations_seen += 1
            lose = FAULT == "lose-acked" and self.registrations_seen % 5 == 0 and self.started_with is not None
            try:
                if not lose:
                    self.session.query(
                        f"INSERT INTO registrations VALUES ({a}, 3, 'offHead', {primary}, {secondary}, false, now()) "
                        f"ON CONFLICT (accessory_id) DO UPDATE SET primary_source = {primary}, "
                        f"secondary_source = {secondary}, placement = 'offHead', updated_at = now()")
                response.update(status="ok", data={})
                with self.state_lock:
                    self.placement[a] = "offHead"
            except (IOError, RuntimeError) as error:
                response.update(status="error", error={"code": "unknown", "message": str(error)[:200]}, data={})
            self.client.publish(f"{BASE}/bridge/response/accessory/register", json.dumps(response), qos=1)

    def worker(self):
        while True:
            with self.events_ready:
                while not self.events:
                    self.events_ready.wait()
                message = self.events.pop(0)
            try:
                self.handle(message)
            except Exception as error:  # a bad message must not stop the fake
                log(f"message on {message.topic}: {error!r}")

    def run(self):
        self.client.connect("127.0.0.1", self.port, keepalive=10)
        self.client.loop_start()
        threading.Thread(target=self.worker, daemon=True).start()
        while True:
            try:
                if self.session is None:
                    self.connect_db()
                    log("connected to PostgreSQL")
                self.rebalance()
            except (IOError, RuntimeError) as error:
                log(f"PostgreSQL: {error}")
                if self.session:
                    self.session.close()
                self.session = None
                self.drop_all()
            time.sleep(0.3)


if __name__ == "__main__":
    config = sys.argv[sys.argv.index("--config") + 1]
    Fake(config).run()
