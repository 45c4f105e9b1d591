"""What the chaos scenarios share beyond harness/common.py: the OpenMQTTGateway advertisement,
skipped scenarios, subscribers and recorders on the mosquitto clients, a scenario's broker, raw HTTP."""
import json
import os
import queue
import random
import socket
import subprocess
import threading
import time

from common import AIRPODS_T, BASE, Bridge, Broker, Client, check, free_port, household_config, wait_online

ADV_TOPIC = "home/gw1/BTtoMQTT/F1E2D3C4B5A6"
ADV_ID = "F1:E2:D3:C4:B5:A6"
ADV_PAYLOAD = ('{"id":"F1:E2:D3:C4:B5:A6","mac_type":1,"manufacturerdata":'
               '"4c000719010e2022f58f00000a7d9fff27234873d4305e0fed1b39e2b8","rssi":-55}')
TELEMETRY = f"{BASE}/telemetry/livingroom/{AIRPODS_T}"

SKIPPED = []   # (scenario, why): could not run on this machine


def skip(name, why):
    SKIPPED.append((name, why))
    print(f"  SKIP {name}: {why}", flush=True)


def expect_after(client, topic, trigger, wait=10):
    """Subscribes to `topic`, runs `trigger`, and returns the first message that arrives (or None)."""
    args = ["mosquitto_sub", "-h", "127.0.0.1", "-p", str(client.port)] + client.auth + ["-t", topic, "-C", "1",
                                                                                          "-W", str(wait), "-v"]
    sub = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    time.sleep(0.5)  # subscribed (loopback)
    trigger()
    try:
        out, _ = sub.communicate(timeout=wait + 5)
    except subprocess.TimeoutExpired:
        sub.kill()
        out, _ = sub.communicate()
    text = out.decode("utf-8", "replace").strip()
    return text or None


class Recorder:
    """Everything published under aabridge/# and homeassistant/# (with timestamps), to a file."""

    def __init__(self, port, path, auth=()):
        self.path = path
        self.out = open(path, "ab")
        self.proc = subprocess.Popen(["mosquitto_sub", "-h", "127.0.0.1", "-p", str(port), *auth, "-t", f"{BASE}/#",
                                      "-t", "homeassistant/#", "-F", "%U %t %p"], stdout=self.out,
                                     stderr=subprocess.DEVNULL)

    def stop(self):
        self.proc.terminate()
        self.proc.wait()
        self.out.close()

    def lines(self):
        with open(self.path, "rb") as f:
            return f.read().decode("utf-8", "replace").splitlines()


def started_bridge(binary, root, name, **options):
    """scenario_setup, and a bridge on the household's configuration (`options` as
    household_config's, an SQLite database in the work directory) started and online (checked
    as "`name`: bridge online"): (work, broker, client, bridge); None when it did not come online
    (the bridge and the broker are stopped then)."""
    work, broker, client = scenario_setup(root, name)
    bridge = Bridge(binary, work, household_config(broker.port, os.path.join(work, "db.sqlite3"), **options))
    bridge.start()
    if not check(f"{name}: bridge online", wait_online(client)):
        bridge.kill()
        broker.stop()
        return None
    return work, broker, client, bridge


def scenario_setup(root, name):
    """A scenario's own work directory under `root`, a started broker and a client of it."""
    work = os.path.join(root, name)
    os.makedirs(work)
    broker = Broker(work)
    broker.start()
    return work, broker, Client(broker.port)


def stored_registered(state):
    v = state["registered"]
    return v["pending"][-1] if v["pending"] else v["acked"]


def stored_paired(state):
    v = state["paired"]
    return v["pending"][-1] if v["pending"] else v["acked"]


def retained_state(client, wait=2):
    got = client.first(f"{BASE}/bridge/state", wait=wait)
    return got[0][1] if got else None


class Subscriber:
    """mosquitto_sub with -d, started and subscribed (its SUBACK seen) before it is returned."""

    def __init__(self, port, args, wait=5):
        self.proc = subprocess.Popen(["stdbuf", "-oL", "mosquitto_sub", "-h", "127.0.0.1", "-p", str(port), "-d"] + args,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.lines = []
        self.subscribed = threading.Event()

        def reader():
            for raw in self.proc.stdout:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                self.lines.append(line)
                if "SUBACK" in line:
                    self.subscribed.set()

        self.thread = threading.Thread(target=reader, daemon=True)
        self.thread.start()
        self.subscribed.wait(wait)

    def stop(self, wait=0):
        try:
            self.proc.wait(wait)
        except subprocess.TimeoutExpired:
            pass
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait()
        self.thread.join(5)
        return self.lines


def state_kind(payload):
    """A: available (the telemetry's state), B: unavailable after being heard, S: the start's."""
    try:
        value = json.loads(payload)
    except ValueError:
        return "?"
    if not isinstance(value, dict):
        return "?"
    if value.get("available") is True:
        return "A"
    return "B" if value.get("last_seen") else "S"


def went_back(sequence, newer, older):
    """Whether `older` comes after `newer` in the sequence."""
    return newer in sequence and older in sequence[sequence.index(newer):]


def count_answers(client, name, requests, wait=4):
    """Sends `requests` requests `name` and counts, per request, the responses that carry its
    transaction within `wait` seconds of the last (every instance that answers is counted)."""
    sub = subprocess.Popen(["stdbuf", "-oL", "mosquitto_sub", "-h", "127.0.0.1", "-p", str(client.port), "-q", "1", "-d",
                            "-t", f"{BASE}/bridge/response/{name}", "-W", str(wait + 5 * requests + 5)],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(raw.decode("utf-8", "replace").strip()) for raw in sub.stdout],
                     daemon=True).start()
    transactions = [f"count-{os.getpid()}-{n}-{random.randrange(1 << 30)}" for n in range(requests)]
    answers = {t: 0 for t in transactions}
    try:
        while "SUBACK" not in lines.get(timeout=10):
            pass
        for transaction in transactions:
            client.pub(f"{BASE}/bridge/request/{name}", json.dumps({"transaction": transaction}))
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                break
            try:
                value = json.loads(line) if line.startswith("{") else None
            except ValueError:
                value = None
            if isinstance(value, dict) and value.get("transaction") in answers:
                answers[value["transaction"]] += 1
    finally:
        sub.kill()
        sub.wait()
    return [answers[t] for t in transactions]


def http_exchange(port, raw, source="127.0.0.1", timeout=10):
    """One raw HTTP request to 127.0.0.1:port from `source`; (status or 0, body bytes)."""
    with socket.socket() as s:
        s.settimeout(timeout)
        s.bind((source, 0))
        s.connect(("127.0.0.1", port))
        s.sendall(raw)
        data = b""
        try:
            while chunk := s.recv(65536):
                data += chunk
        except (socket.timeout, ConnectionResetError):
            pass
    head, _, body = data.partition(b"\r\n\r\n")
    parts = head.split(b" ")
    return (int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0), body


def http_request(port, method, path, host="default", origin=None, body=b"", version="1.1", source="127.0.0.1"):
    lines = [f"{method} {path} HTTP/{version}"]
    if host is not None:
        lines.append(f"Host: {f'127.0.0.1:{port}' if host == 'default' else host}")
    if origin:
        lines.append(f"Origin: {origin}")
    lines += ["Connection: close", f"Content-Length: {len(body)}", "", ""]
    return http_exchange(port, "\r\n".join(lines).encode() + body, source=source)


def http_bridge(binary, root, name, extra=""):
    work, broker, client = scenario_setup(root, name)
    hport = free_port()
    yaml_text = household_config(broker.port, os.path.join(work, "db.sqlite3")) + f"http:\n  listen: 127.0.0.1:{hport}\n{extra}"
    bridge = Bridge(binary, work, yaml_text)
    bridge.start()
    return broker, client, bridge, hport
