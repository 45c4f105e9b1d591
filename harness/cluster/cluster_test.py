#!/usr/bin/env python3
"""Cluster test for aabridge (docs/scaling.md): PostgreSQL, mosquitto and three aabridge
instances in cluster mode, OpenMQTTGateway traffic for many accessories, and the checks.
Run through scripts/cluster-test.

Phases (each prints PASS/FAIL lines and figures; the summary ends with "N passed, M failed"):
  steady      every accessory's retained state is published by the owner cluster_partitions
              names; the instances' bridge/instances/* partition lists are disjoint and cover
              all partitions (and agree with rendezvous hashing)
  kill        kill -9 of one instance under load: its accessories republished by survivors
              (other instance, higher epoch) within 10 s; only its accessories moved; no
              acknowledged registration lost
  join        the killed instance restarted: it takes back exactly its rendezvous share
  pg-restart  PostgreSQL restarted (fast stop, or --pg-kill: kill -9 of the postmaster) under
              load: instances own all partitions again, requests answered ok again, nothing
              acknowledged lost
  end         over the whole run: no placement change answered by two instances, no
              publication with an older epoch after a newer one for the same accessory

What the harness assumes of cluster mode (change it here when the bridge differs):
  - configuration: storage.backend/url, cluster.enabled/instance/partitions (instance_yaml);
    trust authentication for the role aabridge on 127.0.0.1, no password (Postgres.init)
  - partition and rendezvous hashing as in checks.py (checks.score)
  - <base>/bridge/instances/<i> retained {"state","partitions"}: "online" once started (the
    start waits for it), republished when ownership changes, also after a PostgreSQL restart;
    its will sets "offline" (Monitor, phase_kill)
  - <base>/accessory/<ID> state and .../decision carry "instance" and "epoch"; a takeover
    republishes every taken accessory's state with the partition's new, higher epoch
  - register responses carry the request's string transaction and "status" "ok" | "error"
    with error.code; only the owner answers (Registrar)
  - tables cluster_partitions(partition, owner, epoch) and registrations(accessory_id,
    secondary_source) with addresses as BIGINT (Cluster.table_owners, stored_generations)
  - a placement decision's reason is "placement:<placement>" (phase_end)

Uses python3-paho-mqtt (Debian package) for MQTT, psql for queries, PostgreSQL 15's initdb and
postgres run as the `postgres` system user. Everything listens on 127.0.0.1 only; every wait is
bounded; figures are measured from observed events (message arrival times), not from sleeps.
"""
import argparse
import json
import os
import queue
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import RESULTS, Bridge, Broker, Postgres, bridge_config, check, figure, summary, wait_for  # noqa: E402

try:
    import paho.mqtt.client as mqtt
except ImportError:  # reported by main(); --selftest's pure checks still run
    mqtt = None

BASE = "aabridge"
PRODUCT = "AirPods or Beats"
INSTANCES = ["a", "b", "c"]
VICTIM = "b"                       # the instance killed and restarted
TAKEOVER_BOUND_S = 10.0            # the bound for "owned again and republished"
FAKE_FAULT = ""                    # --fake-fault: a fault the stand-in instances inject
# Apple proximity pairing (type 0x07, 25 bytes) of AirPods Pro (model 0x200E), as the fixture
# in docs/mqtt-api.md: status 0x22 = broadcasting bud left (0x20) + in ear (0x02); 0x20 = out
# of the ear and not in the case, which the apple_proximity decoder reads as offHead.
MFD_HEAD = "4c000719010e20"
MFD_TAIL = "f58f00000a7d9fff27234873d4305e0fed1b39e2b8"
STATUS_WORN, STATUS_OFF = "22", "20"



def note(text):
    print(f"  .. {text}", flush=True)


# ---------------------------------------------------------------------------------------------
# Addresses: accessory n is A0:B0:C1:nn:nn:nn; its phone (primary source) 50:00:00:nn:nn:nn;
# a registration's generation g is in its secondary source 5E:gg:gg:gg:gg:gg.
def accessory_address(n):
    return 0xA0B0C1000000 | n


def phone_address(n):
    return 0x500000000000 | n


def generation_address(g):
    return 0x5E0000000000 | g


def colon(value):
    return ":".join(f"{(value >> (8 * (5 - i))) & 0xFF:02X}" for i in range(6))


def plain(value):
    return f"{value:012X}"


def generations(rows, count):
    """Rows (accessory_id, secondary_source) of the registrations table, as text -> {accessory
    index: generation}, None where the secondary source is not a generation address."""
    out = {}
    for accessory_id, secondary in rows:
        n = int(accessory_id) - accessory_address(0)
        if 0 <= n < count:
            value = int(secondary) if secondary not in ("", None) else None
            out[n] = value & 0xFFFFFFFFFF if value is not None and value >> 40 == 0x5E else None
    return out


# ---------------------------------------------------------------------------------------------
def instance_yaml(name, broker_port, pg_url, accessories, partitions, debounce_ms, cluster=True, storage_path=None):
    """An instance's configuration: cluster mode on PostgreSQL, or (--selftest) one plain
    instance on SQLite; `accessories` AirPods, each with its phone."""
    product = {"name": PRODUCT, "hardware": "inEarBud", "capabilities": "[audioSwitching, placement]",
               "auto_register": "true", "placement_decoder": "apple_proximity", "setup_options": "[rename]",
               "descriptor": {"bluetooth_company_identifier": "0x004C", "bluetooth_manufacturer_data_blob": '"0719"',
                              "bluetooth_manufacturer_data_mask": '"ffff"'}}
    return bridge_config(broker_port, pg_url if cluster else storage_path, client_id=f"aabridge-{name}",
                         homeassistant=False, setup=("[0x004C]", None, None), products=(product,),
                         gateways=(("omg", "openmqttgateway"),), cluster=(name, partitions) if cluster else None,
                         accessories=[(colon(accessory_address(n)), f'"Buds {n}"', f'"{PRODUCT}"') for n in range(accessories)],
                         sources=[(colon(phone_address(n)), f'"Phone {n}"') for n in range(accessories)],
                         debounce=debounce_ms)


class Instance(Bridge):
    """One aabridge instance (or, with --fake, the stand-in's command): aabridge-<name>.yaml and
    aabridge-<name>.log in the run's directory."""

    def __init__(self, binary, root, name, yaml_text):
        super().__init__(binary, root, yaml_text, env={"FAKE_FAULT": FAKE_FAULT}, name=f"aabridge-{name}")
        self.name = name

    def kill(self):
        if self.alive():
            self.proc.send_signal(signal.SIGKILL)
        if self.proc:
            self.proc.wait()


# ---------------------------------------------------------------------------------------------
def paho_client(client_id):
    if hasattr(mqtt, "CallbackAPIVersion"):  # paho-mqtt 2.x
        return mqtt.Client(mqtt.CallbackAPIVersion.VERSION1, client_id=client_id, protocol=mqtt.MQTTv311)
    return mqtt.Client(client_id=client_id, protocol=mqtt.MQTTv311)


class Monitor:
    """One subscriber to <base>/#: every message with its arrival time (time.monotonic(), the
    clock the traffic and the phases use), and indexes for the checks."""

    def __init__(self, port):
        self.lock = threading.Lock()
        self.states = {}        # accessory id (int) -> [(t, instance, epoch, retained)]
        self.latest = {}        # accessory id -> (t, payload dict) of its latest state
        self.decisions = []     # (t, accessory id, instance, epoch, reason, action)
        self.publications = []  # (t, accessory id, instance, epoch): states and decisions
        self.instances = {}     # instance -> [(t, payload dict)] of bridge/instances/<instance>
        self.bridge_state = []  # (t, state)
        self.responses = {}     # transaction -> (t, payload dict)
        self.waiters = {}       # transaction -> threading.Event
        self.malformed = 0
        self.connected = threading.Event()
        self.client = paho_client(f"cluster-test-monitor-{os.getpid()}")
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message
        self.client.connect("127.0.0.1", port, keepalive=30)
        self.client.loop_start()
        if not self.connected.wait(10):
            raise RuntimeError("the monitor did not connect")

    def _on_connect(self, client, userdata, flags, rc):
        client.subscribe(f"{BASE}/#", qos=1)
        self.connected.set()

    def _on_message(self, client, userdata, message):
        t = time.monotonic()
        topic = message.topic
        parts = topic.split("/")
        if len(parts) < 2 or parts[1] == "bridge" and len(parts) > 2 and parts[2] == "request":
            return
        try:
            payload = json.loads(message.payload) if message.payload else None
        except ValueError:
            self.malformed += 1
            return
        with self.lock:
            if parts[1] == "accessory" and len(parts) in (3, 4) and isinstance(payload, dict):
                try:
                    accessory = int(parts[2], 16)
                except ValueError:
                    return
                instance, epoch = payload.get("instance"), payload.get("epoch")
                if len(parts) == 3:
                    self.states.setdefault(accessory, []).append((t, instance, epoch, bool(message.retain)))
                    self.latest[accessory] = (t, payload)
                    self.publications.append((t, accessory, instance, epoch))
                elif parts[3] == "decision":
                    self.decisions.append((t, accessory, instance, epoch, payload.get("reason"), payload.get("action")))
                    self.publications.append((t, accessory, instance, epoch))
            elif parts[1:3] == ["bridge", "instances"] and len(parts) == 4 and isinstance(payload, dict):
                self.instances.setdefault(parts[3], []).append((t, payload))
            elif parts[1:3] == ["bridge", "state"] and isinstance(payload, dict):
                self.bridge_state.append((t, payload.get("state")))
            elif parts[1:3] == ["bridge", "response"] and isinstance(payload, dict):
                transaction = payload.get("transaction")
                if isinstance(transaction, str):
                    if transaction not in self.responses:   # the first answer counts
                        self.responses[transaction] = (t, payload)
                    event = self.waiters.get(transaction)
                    if event:
                        event.set()

    def expect(self, transaction):
        event = threading.Event()
        with self.lock:
            self.waiters[transaction] = event
            if transaction in self.responses:
                event.set()
        return event

    def response(self, transaction):
        with self.lock:
            self.waiters.pop(transaction, None)
            return self.responses.get(transaction)

    def instance_status(self, name):
        with self.lock:
            history = self.instances.get(name)
            return history[-1] if history else None

    def online_lists(self, since=None):
        """{instance: partitions} of the instances whose latest status is online (and was
        published after `since`, when given)."""
        out = {}
        with self.lock:
            for name, history in self.instances.items():
                t, payload = history[-1]
                if payload.get("state") == "online" and (since is None or t >= since):
                    out[name] = list(payload.get("partitions") or [])
        return out

    def state_owners(self):
        with self.lock:
            return {a: p.get("instance") for a, (t, p) in self.latest.items() if p}

    def republished_after(self, accessories, since, not_by, old_epochs):
        """{accessory: arrival} of the first state after `since` by an instance other than
        `not_by` with an epoch above the one it had (when it had one)."""
        found = {}
        with self.lock:
            for a in accessories:
                for t, instance, epoch, _ in reversed(self.states.get(a, [])):
                    if t < since:
                        break
                    old = old_epochs.get(a)
                    if instance != not_by and instance is not None and (old is None or (epoch or -1) > old):
                        found[a] = t  # keep going back: the earliest such message wins
        return found

    def epochs(self):
        with self.lock:
            return {a: p.get("epoch") for a, (t, p) in self.latest.items() if p}

    def stop(self):
        self.client.loop_stop()
        self.client.disconnect()


class Traffic:
    """OpenMQTTGateway advertisements (home/gw<k>/BTtoMQTT/<MAC>) for every accessory in turn,
    paced at `rate` messages/s. Accessories in `flipping` go in and out of the ear: accessory n
    is worn in alternate half-periods (offset per accessory); the others are always out of
    the ear (heard, available, no placement decisions). The first message that carries a new
    placement is a change: changes[n] = [(sent_at, 'worn'|'off')]."""

    def __init__(self, port, accessories, flipping, rate, half_period, gateways=3):
        self.accessories = accessories
        self.flipping = set(flipping)
        self.rate = rate
        self.half_period = half_period
        self.gateways = gateways
        self.changes = {}
        # Registered without a placement, every accessory starts offHead: its first worn
        # advertisement is a change.
        self.last = {n: "off" for n in range(accessories)}
        self.sent = 0
        self.stop_event = threading.Event()
        self.lock = threading.Lock()
        self.client = paho_client(f"cluster-test-gateways-{os.getpid()}")
        self.client.max_queued_messages_set(0)
        self.client.connect("127.0.0.1", port, keepalive=30)
        self.client.loop_start()
        self.offsets = {n: random.Random(n).uniform(0, half_period) for n in range(accessories)}
        self.thread = None

    def placement(self, n, t):
        if n not in self.flipping:
            return "off"
        return "worn" if int((t + self.offsets[n]) / self.half_period) % 2 == 0 else "off"

    def start(self):
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        interval = 1.0 / self.rate
        next_at = time.monotonic()
        n = 0
        while not self.stop_event.is_set():
            now = time.monotonic()
            if now < next_at:
                time.sleep(min(next_at - now, 0.05))
                continue
            next_at += interval
            if next_at < now - 1.0:   # fell behind by more than a second: do not burst to catch up
                next_at = now
            kind = self.placement(n, now)
            address = accessory_address(n)
            payload = json.dumps({"id": colon(address), "mac_type": 1, "rssi": -60 - (n % 7),
                                  "manufacturerdata": MFD_HEAD + (STATUS_WORN if kind == "worn" else STATUS_OFF) + MFD_TAIL})
            self.client.publish(f"home/gw{n % self.gateways}/BTtoMQTT/{plain(address)}", payload, qos=0)
            with self.lock:
                if self.last.get(n) != kind:
                    self.changes.setdefault(n, []).append((now, kind))
                    self.last[n] = kind
                self.sent += 1
            n = (n + 1) % self.accessories

    def snapshot_changes(self):
        with self.lock:
            return {n: list(c) for n, c in self.changes.items()}

    def stop(self):
        self.stop_event.set()
        if self.thread:
            self.thread.join(5)
        self.client.loop_stop()
        self.client.disconnect()


class Registrar:
    """accessory/register requests (QoS 1) for the accessories in `targets`, one at a time per
    accessory, `rate` requests/s in all from `workers` threads. Each request carries a new
    generation in its secondary source; acked[n] = the generation of n's last `ok`. An
    accessory whose request went unanswered gets no further request: the request may still be
    carried out later (the broker keeps it for a dead instance's session), and an older request
    applied after a newer acknowledged one is not what the loss check measures."""

    def __init__(self, port, monitor, targets, rate, workers=None, timeout=8.0):
        self.monitor = monitor
        self.targets = list(targets)
        self.rate = rate
        # Enough workers that requests left unanswered (each waits `timeout`) do not slow the
        # pace: an outage must not hide when answers come back.
        self.workers = workers or int(rate * timeout) + 4
        self.timeout = timeout
        self.generation = 0
        self.lock = threading.Lock()
        self.acked = {}         # n -> generation
        self.log = []           # (sent_at, n, generation, outcome 'ok'|'error'|'unanswered', answered_at, instance, error)
        self.tainted = set()
        self.stop_event = threading.Event()
        self.paused = threading.Event()
        self.threads = []
        self.client = paho_client(f"cluster-test-registrar-{os.getpid()}")
        self.client.connect("127.0.0.1", port, keepalive=30)
        self.client.loop_start()
        self.queue = queue.Queue()
        self.tokens = threading.Semaphore(0)

    def register(self, n, primary=True):
        """One request, waited for; returns its log entry."""
        with self.lock:
            self.generation += 1
            g = self.generation
        transaction = f"reg-{n}-{g}"
        body = {"id": colon(accessory_address(n)), "capabilities": ["audioSwitching", "placement"],
                "primary_source": colon(phone_address(n)), "secondary_source": colon(generation_address(g)),
                "transaction": transaction}
        event = self.monitor.expect(transaction)
        sent = time.monotonic()
        self.client.publish(f"{BASE}/bridge/request/accessory/register", json.dumps(body), qos=1)
        event.wait(self.timeout)
        answer = self.monitor.response(transaction)
        if answer is None:
            entry = (sent, n, g, "unanswered", None, None, None)
        else:
            t, payload = answer
            ok = payload.get("status") == "ok"
            entry = (sent, n, g, "ok" if ok else "error", t, payload.get("instance"),
                     None if ok else (payload.get("error") or {}).get("code"))
        with self.lock:
            self.log.append(entry)
            if entry[3] == "ok":
                self.acked[n] = max(self.acked.get(n, 0), g)
            elif entry[3] == "unanswered":
                self.tainted.add(n)
        return entry

    def register_all(self, accessories, parallel=32):
        """Registers every accessory once (setup); returns the log entries."""
        pending = queue.Queue()
        for n in accessories:
            pending.put(n)
        out = []

        def worker():
            while True:
                try:
                    n = pending.get_nowait()
                except queue.Empty:
                    return
                out.append(self.register(n))

        threads = [threading.Thread(target=worker, daemon=True) for _ in range(parallel)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        return out

    def start(self):
        def pacer():
            interval = 1.0 / self.rate
            while not self.stop_event.is_set():
                if not self.paused.is_set():
                    self.tokens.release()
                time.sleep(interval)

        def worker(index):
            rng = random.Random(index)
            while not self.stop_event.is_set():
                if not self.tokens.acquire(timeout=0.5):
                    continue
                with self.lock:
                    candidates = [n for n in self.targets if n not in self.tainted and n not in busy]
                    if not candidates:
                        continue
                    n = rng.choice(candidates)
                    busy.add(n)
                try:
                    self.register(n)
                finally:
                    with self.lock:
                        busy.discard(n)

        busy = set()
        self.threads = [threading.Thread(target=pacer, daemon=True)]
        self.threads += [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(self.workers)]
        for th in self.threads:
            th.start()

    def entries(self, since=None, until=None):
        with self.lock:
            return [e for e in self.log if (since is None or e[0] >= since) and (until is None or e[0] <= until)]

    def stop(self):
        self.stop_event.set()
        for th in self.threads:
            th.join(self.timeout + 2)
        self.client.loop_stop()
        self.client.disconnect()


# ---------------------------------------------------------------------------------------------
class Cluster:
    """Everything of one run: PostgreSQL, the broker, the instances, the monitor, the traffic."""

    def __init__(self, args, root):
        self.args = args
        self.root = root
        self.n = args.accessories
        self.partitions = args.partitions
        self.accessories = [accessory_address(i) for i in range(self.n)]
        self.pg = Postgres(root)
        self.broker = Broker(root, extra="max_inflight_messages 0\n")
        self.instances = {}
        self.monitor = None
        self.traffic = None
        self.registrar = None
        self.started = time.monotonic()   # "+N s" in details count from here

    def partition(self, address):
        return checks.partition_of(address, self.partitions)

    def start_infrastructure(self):
        print(f"== PostgreSQL (initdb, 127.0.0.1), mosquitto; {self.n} accessories, {self.partitions} partitions", flush=True)
        self.pg.init()
        started = time.monotonic()
        self.pg.start()
        self.pg.create()
        figure(f"PostgreSQL initdb + start: port {self.pg.port}, up in {time.monotonic() - started:.1f} s")
        self.broker.start()
        self.monitor = Monitor(self.broker.port)
        yaml_for = {name: instance_yaml(name, self.broker.port, self.pg.url, self.n, self.partitions,
                                        self.args.debounce_ms) for name in INSTANCES}
        binary = self.args.binary
        if self.args.fake:
            binary = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_instance.py")]
            note("--fake: the instances are cluster/fake_instance.py, a stand-in for the harness's own test")
        for name in INSTANCES:
            self.instances[name] = Instance(binary, self.root, name, yaml_for[name])

    def table_owners(self):
        rows = self.pg.psql("SELECT partition, owner, epoch FROM cluster_partitions")
        return {int(p): o for p, o, e in rows if o}, {int(p): int(e) for p, o, e in rows if e}

    def stored_generations(self):
        """{accessory index: generation in its registration's secondary source} (None when the
        secondary source is not one of ours, or there is no registration)."""
        return generations(self.pg.psql("SELECT accessory_id, secondary_source FROM registrations"), self.n)

    def instance_online(self, name, since):
        status = self.monitor.instance_status(name)
        return status and status[0] >= since and status[1].get("state") == "online"

    def start_instance(self, name, timeout):
        since = time.monotonic()
        self.instances[name].start()
        up = wait_for(lambda: self.instance_online(name, since) or not self.instances[name].alive(), timeout)
        ok = self.instances[name].alive() and self.instance_online(name, since)
        return (time.monotonic() - since) if ok else None, up

    def start_failure(self, name):
        instance = self.instances[name]
        why = (f"exited with status {instance.proc.returncode}" if not instance.alive()
               else f"not online within {self.args.start_timeout:.0f} s")
        return f"{why}; log: {' | '.join(instance.tail(3))}"

    def settled(self, live, since=None):
        """The ownership the live instances publish equals rendezvous over them, and every
        accessory's latest state comes from its rendezvous owner. Returns the problems."""
        expected = checks.rendezvous_map(self.partitions, live)
        lists = self.monitor.online_lists()
        problems = []
        if set(lists) != set(live):
            problems.append(f"online instances {sorted(lists)}, expected {sorted(live)}")
        if since is not None:
            # Every instance that should own something has said so again since `since` (one
            # that owns nothing before and after need not republish an empty list).
            fresh = self.monitor.online_lists(since)
            stale = [name for name in live if name not in fresh and any(o == name for o in expected.values())]
            if stale:
                problems.append(f"no bridge/instances list since the event from {stale}")
        problems += checks.partition_lists_problems({k: v for k, v in lists.items() if k in live}, self.partitions)
        for name in live:
            want = sorted(p for p, o in expected.items() if o == name)
            if sorted(lists.get(name, [])) != want:
                problems.append(f"{name} lists {len(lists.get(name, []))} partitions, rendezvous gives it {len(want)}")
        owners = self.monitor.state_owners()
        wrong = [a for a in self.accessories if owners.get(a) != expected[self.partition(a)]]
        if wrong:
            problems.append(f"{len(wrong)} accessories' retained state not from their rendezvous owner "
                            f"(e.g. {plain(wrong[0])}: {owners.get(wrong[0])}, expected {expected[self.partition(wrong[0])]})")
        return problems

    def stop_all(self):
        for component in (self.registrar, self.traffic):
            if component:
                try:
                    component.stop()
                except Exception:
                    pass
        for instance in self.instances.values():
            instance.stop()
        if self.monitor:
            self.monitor.stop()
        self.broker.stop()
        self.pg.stop("fast")


# ---------------------------------------------------------------------------------------------
def phase_start(cl):
    print("== three instances (a first, then b and c)", flush=True)
    for name in INSTANCES:
        took, _ = cl.start_instance(name, cl.args.start_timeout)
        if not check(f"start: instance {name} online (bridge/instances/{name} state online)", took is not None,
                     f"{took:.1f} s" if took is not None else cl.start_failure(name)):
            return False
    # "online" may come before an instance has taken its partitions: registrations sent before
    # the ownership settles could find no owner. Wait for the lists rendezvous gives.
    started = time.monotonic()
    lists_ok = wait_for(lambda: not [p for p in cl.settled(INSTANCES) if "retained state" not in p],
                        cl.args.settle_timeout, 0.2)
    problems = [p for p in cl.settled(INSTANCES) if "retained state" not in p]
    check("start: bridge/instances lists settle to rendezvous over a, b, c", lists_ok is not None,
          f"{time.monotonic() - started:.1f} s after c was online" if lists_ok else "; ".join(problems[:3]))
    return True


def phase_setup(cl):
    """Registers every accessory (its own phone as primary source) and starts the traffic."""
    print(f"== registrations of {cl.n} accessories, then traffic ({cl.args.rate} msg/s)", flush=True)
    registrar = Registrar(cl.broker.port, cl.monitor, [], cl.args.request_rate)
    cl.registrar = registrar
    started = time.monotonic()
    entries = registrar.register_all(range(cl.n))
    took = time.monotonic() - started
    ok = sum(1 for e in entries if e[3] == "ok")
    figure(f"setup registrations: {ok}/{cl.n} ok in {took:.1f} s "
           f"({sum(1 for e in entries if e[3] == 'error')} errors, {sum(1 for e in entries if e[3] == 'unanswered')} unanswered)")
    check("setup: every accessory registered (status ok)", ok == cl.n,
          "; ".join(f"{plain(accessory_address(e[1]))}: {e[3]} {e[6] or ''}" for e in entries if e[3] != "ok")[:300])
    # A quarter of the accessories get registration requests during the run, the others flip
    # placement: so a decision is caused by the traffic only and can be matched to its change.
    register_targets = [n for n in range(cl.n) if n % 4 == 0]
    flipping = [n for n in range(cl.n) if n % 4 != 0]
    registrar.targets = register_targets
    registrar.tainted.clear()
    cl.traffic = Traffic(cl.broker.port, cl.n, flipping, cl.args.rate, cl.args.half_period)
    cl.traffic.start()
    registrar.start()
    return True


def phase_steady(cl):
    print("== steady state", flush=True)
    started = time.monotonic()
    problems = wait_for(lambda: not cl.settled(INSTANCES), cl.args.settle_timeout, 0.5)
    remaining = cl.settled(INSTANCES)
    figure(f"steady state settled {time.monotonic() - started:.1f} s into the steady phase" if problems
           else f"steady state not settled after {cl.args.settle_timeout} s")
    table, _ = cl.table_owners()
    owners = cl.monitor.state_owners()
    wrong = checks.ownership_problems(cl.accessories, cl.partitions, table, owners)
    check(f"steady: each of the {cl.n} accessories has a retained state from the owner cluster_partitions names",
          not wrong, f"{len(wrong)} wrong; e.g. " + "; ".join(f"{plain(a)}: {why}" for a, why in wrong[:3]) if wrong else "")
    lists = cl.monitor.online_lists()
    lp = checks.partition_lists_problems(lists, cl.partitions)
    check("steady: bridge/instances/* partition lists are disjoint and cover all partitions", not lp and len(lists) == 3,
          "; ".join(lp[:3]) + f" (online: {sorted(lists)})" if lp or len(lists) != 3 else
          ", ".join(f"{k}: {len(v)}" for k, v in sorted(lists.items())))
    balance = checks.balance_problem(cl.partitions, INSTANCES)
    check("steady: rendezvous hashing gives each instance a fair share of the partitions", balance is None, balance or "")
    rv = checks.rendezvous_map(cl.partitions, INSTANCES)
    differ = [p for p in range(cl.partitions) if table.get(p) != rv[p]]
    check("steady: cluster_partitions agrees with rendezvous hashing over a, b, c", not differ,
          f"{len(differ)} partitions differ, e.g. {differ[:5]}" if differ else "")
    if remaining:
        note("not settled: " + "; ".join(remaining[:3]))
    per = {name: sum(1 for a in cl.accessories if owners.get(a) == name) for name in INSTANCES}
    figure("accessories per instance: " + ", ".join(f"{k} {v}" for k, v in per.items()))
    return not wrong


def phase_kill(cl):
    victim = VICTIM
    survivors = [n for n in INSTANCES if n != victim]
    print(f"== kill -9 of instance {victim} under load", flush=True)
    time.sleep(cl.args.load_before)
    before = cl.monitor.state_owners()
    old_epochs = cl.monitor.epochs()
    lists = cl.monitor.online_lists()
    victim_partitions = set(lists.get(victim, []))
    theirs = [a for a in cl.accessories if cl.partition(a) in victim_partitions]
    t_kill = time.monotonic()
    cl.instances[victim].kill()
    # Wait (generously) for all of them to be republished, then judge against the 10 s bound.
    wait_for(lambda: len(cl.monitor.republished_after(theirs, t_kill, victim, old_epochs)) == len(theirs),
             max(60.0, TAKEOVER_BOUND_S * 3), 0.2)
    found = cl.monitor.republished_after(theirs, t_kill, victim, old_epochs)
    takeover = max((t - t_kill for t in found.values()), default=None)
    late = [a for a in theirs if a not in found or found[a] - t_kill > TAKEOVER_BOUND_S]
    figure(f"takeover time (kill -9 -> last of {victim}'s {len(theirs)} accessories republished by a survivor): "
           + (f"{takeover:.2f} s" if takeover is not None and len(found) == len(theirs) else
              f"{len(found)}/{len(theirs)} republished (last at {takeover if takeover is None else round(takeover, 2)} s)"))
    check(f"kill: each of {victim}'s {len(theirs)} accessories republished by a survivor with a higher epoch within "
          f"{TAKEOVER_BOUND_S:.0f} s", theirs and not late,
          f"{len(late)} late or missing, e.g. {plain(late[0])}" if late else
          ("" if theirs else f"{victim} owned no accessory before the kill"))
    settled = wait_for(lambda: not cl.settled(survivors), 30, 0.5)
    problems = cl.settled(survivors)
    check(f"kill: the survivors' bridge/instances lists cover all partitions, as rendezvous over {survivors} gives",
          settled is not None, "; ".join(problems[:3]))
    status = cl.monitor.instance_status(victim)
    check(f"kill: bridge/instances/{victim} says offline (its MQTT will)",
          status and status[1].get("state") == "offline" and status[0] >= t_kill,
          f"latest: {status[1] if status else None}")
    # If the dead instance's will wrote offline (it was delivered when the kill closed its socket,
    # long before the takeover above), a survivor must write online again.
    wait_for(lambda: cl.monitor.bridge_state and cl.monitor.bridge_state[-1][1] == "online", 10, 0.2)
    history = [s for t, s in cl.monitor.bridge_state if t >= t_kill]
    check("kill: bridge/state is online (a survivor republished it after the dead instance's will)",
          cl.monitor.bridge_state and cl.monitor.bridge_state[-1][1] == "online",
          f"bridge/state after the kill: {history}")
    after = cl.monitor.state_owners()
    moved = checks.moved(before, after)
    unexpected = [a for a in moved if a not in set(theirs)]
    figure(f"accessories moved on leave: {len(moved)} (the dead instance had {len(theirs)}; "
           f"{len(victim_partitions)} of {cl.partitions} partitions)")
    check("kill: only the dead instance's accessories moved", not unexpected,
          f"{len(unexpected)} others moved, e.g. {plain(unexpected[0])}" if unexpected else "")
    loss_check(cl, "kill")
    return True


def phase_join(cl):
    victim = VICTIM
    print(f"== restart of instance {victim}", flush=True)
    time.sleep(cl.args.load_before)
    before = cl.monitor.state_owners()
    expected_share = set(checks.share(cl.partitions, INSTANCES, victim))
    expected_moves = sorted(a for a in cl.accessories if cl.partition(a) in expected_share)
    t_join = time.monotonic()
    took, _ = cl.start_instance(victim, cl.args.start_timeout)
    if not check(f"join: instance {victim} online again", took is not None,
                 f"{took:.1f} s" if took is not None else cl.start_failure(victim)):
        return False
    settled = wait_for(lambda: not cl.settled(INSTANCES), cl.args.settle_timeout, 0.5)
    problems = cl.settled(INSTANCES)
    figure(f"join: settled {time.monotonic() - t_join:.1f} s after the restart" if settled else
           f"join: not settled after {cl.args.settle_timeout} s: {'; '.join(problems[:3])}")
    lists = cl.monitor.online_lists()
    got = set(lists.get(victim, []))
    check(f"join: {victim} holds exactly its rendezvous share ({len(expected_share)} of {cl.partitions} partitions)",
          got == expected_share, f"holds {len(got)}; extra {sorted(got - expected_share)[:5]}, "
          f"missing {sorted(expected_share - got)[:5]}" if got != expected_share else "")
    after = cl.monitor.state_owners()
    moved = checks.moved(before, after)
    figure(f"accessories moved on join: {len(moved)} (its share: {len(expected_moves)} of {cl.n})")
    check(f"join: only {victim}'s share moved (to {victim}); the survivors kept all the others",
          set(moved) == set(expected_moves) and all(after.get(a) == victim for a in moved),
          f"moved {len(moved)}, expected {len(expected_moves)}; wrongly moved "
          f"{len(set(moved) - set(expected_moves))}, not moved {len(set(expected_moves) - set(moved))}"
          if set(moved) != set(expected_moves) else "")
    check("join: ownership settled (lists = rendezvous, states from owners)", settled is not None,
          "; ".join(problems[:3]))
    loss_check(cl, "join")
    return True


def phase_pg_restart(cl):
    mode = "kill" if cl.args.pg_kill else "fast"
    print(f"== PostgreSQL restarted under load ({'kill -9 of the postmaster' if mode == 'kill' else 'fast stop'}, "
          f"down {cl.args.pg_down:.0f} s)", flush=True)
    time.sleep(cl.args.load_before)
    t_down = time.monotonic()
    cl.pg.stop(mode)
    stopped = time.monotonic()
    time.sleep(max(0.0, cl.args.pg_down - (stopped - t_down)))
    cl.pg.start()
    t_up = time.monotonic()
    figure(f"PostgreSQL down for {t_up - t_down:.1f} s ({mode})")
    # Recovered: every instance published its partitions again after PostgreSQL came back, and
    # the lists equal rendezvous over the three; and a register request sent after t_up is ok.
    settled = wait_for(lambda: not cl.settled(INSTANCES, since=t_up), cl.args.settle_timeout, 0.2)
    t_owned = time.monotonic() if settled else None
    first_ok = wait_for(lambda: next((e[4] for e in sorted(cl.registrar.entries(since=t_up), key=lambda e: e[4] or 1e18)
                                      if e[3] == "ok"), None), cl.args.settle_timeout, 0.2)
    if t_owned is not None:
        recovery = max(t_owned, first_ok or t_owned) - t_up
        figure(f"PostgreSQL restart recovery time (up again -> all partitions owned as rendezvous gives and a "
               f"request answered ok): {recovery:.2f} s (ownership {t_owned - t_up:.2f} s, first ok "
               f"{(first_ok - t_up) if first_ok else float('nan'):.2f} s); outage to recovery {max(t_owned, first_ok or t_owned) - t_down:.2f} s")
    check("pg-restart: instances own all their partitions again (bridge/instances republished after the restart)",
          settled is not None, "; ".join(cl.settled(INSTANCES, since=t_up)[:3]))
    check("pg-restart: registration requests answered ok again", first_ok is not None)
    # A request is logged once answered or timed out: let those sent until now resolve.
    time.sleep(cl.registrar.timeout + 1.0)
    t_recovered = max(t_owned or time.monotonic(), first_ok or 0)
    for label, since, until in (("during the outage", t_down, t_up), ("while recovering", t_up, t_recovered)):
        sent = cl.registrar.entries(since=since, until=until)
        errors = [e for e in sent if e[3] == "error"]
        unanswered = [e for e in sent if e[3] == "unanswered"]
        codes = sorted({e[6] for e in errors if e[6]})
        figure(f"requests sent {label} ({until - since:.1f} s): {len(sent)}: {len(errors)} answered with an error "
               f"({', '.join(codes) or '-'}), {len(unanswered)} unanswered, {len(sent) - len(errors) - len(unanswered)} ok "
               f"(errors and unanswered were not acknowledged)")
    alive = [n for n in INSTANCES if cl.instances[n].alive()]
    check("pg-restart: the same three processes throughout", len(alive) == 3, f"alive: {alive}")
    loss_check(cl, "pg-restart")
    return True


def loss_check(cl, label):
    """Every acknowledged registration is in the registrations table (or a newer one is)."""
    # What was acknowledged is taken before the table is read: the registrar keeps sending, and
    # an answer that came between the read and the snapshot would look lost (CI saw generation
    # 578 acknowledged at the very moment of the check, the table read just before holding 577).
    # A request acknowledged before the snapshot is committed (the bridge stores before
    # answering), so no wait is needed; the query retries while PostgreSQL is still coming up.
    with cl.registrar.lock:
        acked = dict(cl.registrar.acked)
    stored = None
    for _ in range(50):
        try:
            stored = cl.stored_generations()
            break
        except RuntimeError:
            time.sleep(0.2)
    if not check(f"{label}: registrations table readable", stored is not None):
        return
    lost = checks.lost_registrations(acked, stored)
    figure(f"{label}: acknowledged-loss count: {len(lost)} (of {len(acked)} accessories with an acknowledged "
           f"registration, {len(cl.registrar.log)} requests so far)")
    with cl.registrar.lock:
        by_generation = {e[2]: e for e in cl.registrar.log}

    def story(g):  # what became of the request that carried generation g
        e = by_generation.get(g)
        if e is None:
            return "not logged yet"
        return f"sent at +{e[0] - cl.started:.1f} s, {e[3]}" + (f" by {e[5]} at +{e[4] - cl.started:.1f} s" if e[4] else "")

    # A stored generation older than the acknowledged one is typically an older request carried
    # out late (e.g. delivered from a restarted instance's persistent broker session).
    check(f"{label}: no acknowledged registration lost", not lost,
          "; ".join(f"{plain(accessory_address(n))}: acked generation {g} ({story(g)}), stored {s}"
                    + (f" ({story(s)})" if s else "") for n, g, s in lost[:3]))


def phase_end(cl):
    print("== whole run: duplicate decisions and epochs", flush=True)
    cl.traffic.stop()
    cl.registrar.stop()
    time.sleep(1.0 + cl.args.debounce_ms / 1000.0)   # the last decisions reach the monitor
    changes = {accessory_address(n): c for n, c in cl.traffic.snapshot_changes().items()}
    with cl.monitor.lock:
        decisions = [(t, a, inst, reason) for t, a, inst, epoch, reason, action in cl.monitor.decisions
                     if isinstance(reason, str) and reason.startswith("placement:")]
        publications = list(cl.monitor.publications)
        all_decisions = len(cl.monitor.decisions)
    window = cl.args.half_period   # a decision belongs to the change before it, within half a period
    groups, unattributed = checks.attribute_decisions(changes, decisions, window)
    dups = checks.duplicate_decisions(groups)
    total_changes = sum(len(c) for c in changes.values())
    figure(f"placement changes sent: {total_changes}; placement decisions: {len(decisions)} "
           f"({len(groups)} changes answered, {unattributed} unattributed); all decisions: {all_decisions}; "
           f"telemetry messages sent: {cl.traffic.sent}")
    figure(f"duplicate-decision count (a change answered by two instances): {len(dups)}")
    # Changes sent while their owner was dead or PostgreSQL was down may go unanswered; most
    # must not (an empty decision stream would pass the duplicate check vacuously).
    check("end: most placement changes were answered by a decision", len(groups) >= 0.5 * total_changes,
          f"{len(groups)} of {total_changes} changes answered")
    check("end: no placement change answered by decisions from two instances", not dups,
          "; ".join(f"{plain(a)} change {i}: {insts}" for (a, i), insts in dups[:3]))
    missing_epoch = sum(1 for p in publications if p[3] is None or p[2] is None)
    check("end: every accessory state and decision carries instance and epoch", missing_epoch == 0,
          f"{missing_epoch} of {len(publications)} without")
    regressions = checks.epoch_regressions(publications)
    figure(f"publications with an older epoch after a newer one (same accessory): {len(regressions)}")
    check("end: no accessory publication with an older epoch after a newer one", not regressions,
          "; ".join(f"{plain(a)}: {old} after {new}" for a, t, old, new in regressions[:3]))
    requests = cl.registrar.log
    figure(f"registration requests: {len(requests)} ({sum(1 for e in requests if e[3] == 'ok')} ok, "
           f"{sum(1 for e in requests if e[3] == 'error')} error, {sum(1 for e in requests if e[3] == 'unanswered')} unanswered)")


def run_cluster(args, root):
    cl = Cluster(args, root)
    try:
        cl.start_infrastructure()
        if not phase_start(cl) or not phase_setup(cl):
            return
        for name, phase in (("steady", phase_steady), ("kill", phase_kill), ("join", phase_join),
                            ("pg-restart", phase_pg_restart), ("end", phase_end)):
            try:
                phase(cl)
            except Exception as error:  # a broken phase is a failure, not a crash of the run
                check(f"{name}: phase ran to the end", False, repr(error))
                if name != "end":
                    continue
    finally:
        if any(not ok for _, ok, _ in RESULTS):
            print("== the instances' last log lines (CLUSTER_KEEP=1 keeps the whole logs)", flush=True)
            for name, instance in cl.instances.items():
                for line in instance.tail(4):
                    print(f"  {name}: {line[:300]}")
        cl.stop_all()


# ---------------------------------------------------------------------------------------------
def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=".build/release/aabridge")
    parser.add_argument("--short", action="store_true", help="CI form: 300 accessories, shorter phases")
    parser.add_argument("--accessories", type=int)
    parser.add_argument("--partitions", type=int, default=64)
    parser.add_argument("--rate", type=float, help="telemetry messages/s in all")
    parser.add_argument("--request-rate", type=float, help="registration requests/s during the run")
    parser.add_argument("--half-period", type=float, help="seconds between placement changes of one accessory")
    parser.add_argument("--debounce-ms", type=int, default=100)
    parser.add_argument("--pg-down", type=float, default=3.0, help="seconds PostgreSQL stays down")
    parser.add_argument("--pg-kill", action="store_true", help="kill -9 the postmaster instead of a fast stop")
    parser.add_argument("--fake", action="store_true",
                        help="run cluster/fake_instance.py (a stand-in implementing the contract) instead of aabridge, "
                             "to test the harness itself")
    parser.add_argument("--fake-fault", choices=["lose-acked", "forget-placement", "stale-epoch", "slow-takeover"],
                        help="with --fake: inject a fault the checks must catch (cluster/fake_instance.py)")
    parser.add_argument("--selftest", action="store_true",
                        help="no cluster: the checks on synthetic data, PostgreSQL start/kill/restart, "
                             "and the traffic against one plain (SQLite) instance")
    args = parser.parse_args()
    global FAKE_FAULT
    FAKE_FAULT = args.fake_fault or ""
    args.explicit_accessories = args.accessories   # --selftest: its single instance's count (default 40)
    args.accessories = args.accessories or (300 if args.short else 1000)
    args.rate = args.rate or (200.0 if args.short else 300.0)
    args.request_rate = args.request_rate or (10.0 if args.short else 20.0)
    args.half_period = args.half_period or (6.0 if args.short else 10.0)
    args.load_before = 3.0 if args.short else 10.0    # seconds of load before each fault
    args.start_timeout = 60.0
    args.settle_timeout = 60.0
    if mqtt is None and not args.selftest:
        print("cluster_test.py: python3-paho-mqtt is missing (apt-get install python3-paho-mqtt; scripts/install-deps)",
              file=sys.stderr)
        return 2
    root = tempfile.mkdtemp(prefix="aabridge-cluster-")
    started = time.monotonic()
    try:
        if args.selftest:
            import selftest
            selftest.run(args, root, sys.modules[__name__])
        else:
            run_cluster(args, root)
    except Exception as error:
        check("the run reached its end", False, repr(error))
    finally:
        if os.environ.get("CLUSTER_KEEP") or os.environ.get("KEEP"):
            print(f"work directory kept: {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    return summary(started)


if __name__ == "__main__":
    sys.exit(main())
