"""What every harness under harness/ shares (chaos, cluster, soak, ha, macos): PASS/FAIL lines
and figures, free loopback ports below the ephemeral range, waiting, a mosquitto and a
PostgreSQL on 127.0.0.1, the bridge's configuration, the bridge process, and the cleanup of
every process a harness started.

Nothing left running: importing this module marks the process's environment with
AABRIDGE_TEST_RUN (kept and extended when a script set it; scripts/lib/leftovers looks for it)
and AABRIDGE_HARNESS_PID (this process), which every child and grandchild inherits (mosquitto,
PostgreSQL and its backends, the bridge, Home Assistant, the mosquitto clients). At exit (normal
end, an exception, Ctrl-C, SIGTERM, SIGHUP) every process still carrying this process's
AABRIDGE_HARNESS_PID gets SIGTERM, then SIGKILL after 5 s: also the ones a scenario forgot to
stop. Only processes whose environment names this very harness process are touched.
"""

import atexit
import json
import os
import queue
import random
import signal
import socket
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASE = "aabridge"

# ---------------------------------------------------------------------------------------------
# Processes: the marker, and the cleanup at exit.

MARKER = "AABRIDGE_TEST_RUN"
OWNER = "AABRIDGE_HARNESS_PID"
os.environ[MARKER] = os.environ.get(MARKER) or f"harness-{os.getpid()}"
os.environ[OWNER] = str(os.getpid())


def _environment(pid):
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


def started_here():
    """The pids of live processes (not this one, not zombies) whose environment names this
    harness process as their owner."""
    mine = f"{OWNER}={os.getpid()}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                if f.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                    continue
        except (OSError, IndexError):
            continue
        if mine in _environment(entry):
            found.append(int(entry))
    return found


def stop_started(grace=5.0):
    """SIGTERM to every process this harness started that is still alive, SIGKILL after
    `grace` seconds; returns the pids it had to signal (a clean harness returns [])."""
    pids = started_here()
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and started_here():
        time.sleep(0.05)
    for pid in started_here():
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    # Reap our own children (others were reaped by their parents or are re-parented).
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG) == (0, 0):
                break
        except ChildProcessError:
            break
    return pids


def _at_exit():
    left = stop_started()
    if left:
        print(f"harness: stopped {len(left)} process(es) still running at exit: {left}", file=sys.stderr, flush=True)


def _on_signal(number, _frame):
    # SystemExit runs the `finally` blocks and then atexit (SIGTERM's default would run neither).
    raise SystemExit(128 + number)


atexit.register(_at_exit)
if __import__("threading").current_thread() is __import__("threading").main_thread():
    for _signal in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(_signal, _on_signal)

# ---------------------------------------------------------------------------------------------
# Results.

RESULTS = []   # (name, ok, detail)
FIGURES = []   # "key: value" lines


def check(name, ok, detail=""):
    RESULTS.append((name, bool(ok), detail))
    print(f"  {'PASS' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}", flush=True)
    return ok


def figure(text):
    FIGURES.append(text)
    print(f"  figure: {text}", flush=True)


_last_port = None


def free_port():
    """A loopback port below the kernel's ephemeral range, not handed out before by this process.

    The kernel's bind(0) port comes from the ephemeral range, where an outgoing connection beside
    the test (a client's source port) may take it before the process meant to listen on it binds.
    """
    global _last_port
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            start = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        start = 32768
    low, high = 10000, max(start, 11000) - 1
    span = high - low + 1
    candidate = low + (os.getpid() * 97) % span if _last_port is None else _last_port + 1
    for _ in range(span):
        if not low <= candidate <= high:
            candidate = low
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", candidate))
            except OSError:
                candidate += 1
                continue
        _last_port = candidate
        return candidate
    raise RuntimeError(f"no free loopback port in {low}..{high}")


def listening(port, timeout, proc=None):
    """Until 127.0.0.1:`port` accepts a connection (True), `proc` exits or `timeout` s pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and (proc is None or proc.poll() is None):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def wait_for(predicate, timeout, interval=0.02):
    """The first truthy predicate() within `timeout` seconds, else the last (falsy) value."""
    deadline = time.monotonic() + timeout
    value = predicate()
    while not value and time.monotonic() < deadline:
        time.sleep(interval)
        value = predicate()
    return value


def summary(started, skipped=None):
    """The figures, the failures and the `N passed, M failed` line; the exit status (1 on any
    failure, or when nothing was checked)."""
    passed = sum(1 for r in RESULTS if r[1])
    failed = len(RESULTS) - passed
    print("\n== figures")
    for line in FIGURES:
        print(f"  {line}")
    for name, ok, detail in RESULTS:
        if not ok:
            print(f"  FAILED: {name}: {detail}")
    for name, why in skipped or []:
        print(f"  SKIPPED: {name}: {why}")
    counts = f"{passed} passed, {failed} failed" + ("" if skipped is None else f", {len(skipped)} scenarios skipped")
    print(f"\n{counts} ({time.monotonic() - started:.0f} s)")
    return 1 if failed or not RESULTS else 0


def mosquitto_passwd(path, users):
    """A mosquitto password file at `path` with `users` ({user: password})."""
    with open(path, "w"):
        pass
    for user, password in users.items():
        subprocess.run(["mosquitto_passwd", "-b", str(path), user, password], check=True)
    os.chmod(path, 0o644)


class Broker:
    """mosquitto on a free 127.0.0.1 port. By default anonymous, without persistence, run as
    root, logging to `workdir`/mosquitto.log, with `extra` appended to its configuration;
    `configure(port)` returns a whole configuration instead (the shipped one, with users)."""

    def __init__(self, workdir, extra="", configure=None):
        self.port = free_port()
        self.dir = str(workdir)
        self.conf = os.path.join(self.dir, "mosquitto.conf")
        self.log = os.path.join(self.dir, "mosquitto.log")
        os.makedirs(self.dir, exist_ok=True)
        text = configure(self.port) if configure else (
            f"listener {self.port} 127.0.0.1\nallow_anonymous true\npersistence false\n"
            f"max_queued_messages 200000\nuser root\nlog_dest file {self.log}\n{extra}")
        with open(self.conf, "w") as f:
            f.write(text)
        self.proc = None

    def start(self):
        out = open(os.path.join(self.dir, "mosquitto.out"), "ab")
        self.proc = subprocess.Popen(["mosquitto", "-c", self.conf], stdout=out, stderr=subprocess.STDOUT)
        out.close()
        if not listening(self.port, 10, self.proc):
            self.stop()
            with open(os.path.join(self.dir, "mosquitto.out"), errors="replace") as f:
                raise RuntimeError(f"mosquitto did not start: {f.read()[-500:]}")
        return self

    def stop(self, sig=signal.SIGTERM):
        stop_process(self.proc, 10, sig)
        self.proc = None


def stop_process(proc, timeout=15, sig=signal.SIGTERM):
    """Sends `sig` (SIGTERM) to a Popen, waits up to `timeout` s, then SIGKILL; its exit status
    (None when it had to be killed or never ran)."""
    if proc is None:
        return None
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            return proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            return None
    return proc.returncode


PG_BIN = os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin")


class Postgres:
    """A throwaway PostgreSQL cluster: initdb in `root`/pg, owned by the postgres system user
    (initdb and postgres refuse to run as root), TCP on 127.0.0.1 only, trust authentication
    for the role `aabridge` which owns the database `aabridge`."""

    def __init__(self, root, user="postgres"):
        self.dir = os.path.join(root, "pg")
        self.data = os.path.join(self.dir, "data")
        self.log = os.path.join(self.dir, "postgres.log")
        self.port = free_port()
        self.user = user
        self.proc = None
        self.url = f"postgresql://aabridge@127.0.0.1:{self.port}/aabridge"

    def _as_postgres(self):
        import pwd
        entry = pwd.getpwnam(self.user)
        return dict(user=entry.pw_uid, group=entry.pw_gid, extra_groups=[])

    def init(self):
        os.makedirs(self.dir)
        import pwd
        entry = pwd.getpwnam(self.user)
        os.chown(self.dir, entry.pw_uid, entry.pw_gid)
        # The temp root is 0700 root's: the postgres user must be able to reach its directory.
        parent = os.path.dirname(self.dir)
        os.chmod(parent, 0o755)
        r = subprocess.run([f"{PG_BIN}/initdb", "-D", self.data, "-A", "trust", "-U", "postgres", "-E", "UTF8",
                            "--no-sync"], capture_output=True, cwd=self.dir, **self._as_postgres())
        if r.returncode != 0:
            raise RuntimeError(f"initdb failed: {r.stderr.decode(errors='replace')[-500:]}")
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write(f"\nlisten_addresses = '127.0.0.1'\nport = {self.port}\nunix_socket_directories = '{self.dir}'\n"
                    f"max_connections = 100\nsynchronous_commit = on\nfsync = on\n")
        with open(os.path.join(self.data, "pg_hba.conf"), "w") as f:
            f.write("local all all trust\nhost all all 127.0.0.1/32 trust\n")

    def start(self, timeout=30):
        log = open(self.log, "ab")
        self.proc = subprocess.Popen([f"{PG_BIN}/postgres", "-D", self.data], stdout=log, stderr=log,
                                     cwd=self.dir, **self._as_postgres())
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"postgres exited with {self.proc.returncode} (see {self.log})")
            if self.ready():
                return True
            time.sleep(0.1)
        raise RuntimeError("postgres did not accept connections")

    def ready(self):
        r = subprocess.run([f"{PG_BIN}/pg_isready", "-h", "127.0.0.1", "-p", str(self.port), "-q"],
                           capture_output=True)
        return r.returncode == 0

    def create(self):
        self.psql("CREATE ROLE aabridge LOGIN", database="postgres", user="postgres")
        self.psql("CREATE DATABASE aabridge OWNER aabridge", database="postgres", user="postgres")

    def stop(self, mode="fast", timeout=60):
        """Stops the postmaster: 'fast' (SIGINT, as pg_ctl stop -m fast) or 'kill' (SIGKILL of
        the postmaster; its backends notice and exit, the next start runs crash recovery)."""
        if not self.proc or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGKILL if mode == "kill" else signal.SIGINT)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if mode == "kill":
            # Backends outlive a killed postmaster until they notice; a new postmaster refuses to
            # start while they hold the old shared memory. Wait until no process uses the data dir.
            wait_for(lambda: not self._backends(), 30, 0.1)

    def _backends(self):
        found = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmd = f.read()
                if b"postgres" in cmd and os.readlink(f"/proc/{pid}/cwd") in (self.data, self.dir):
                    found.append(int(pid))
            except OSError:
                continue
        return found

    def psql(self, query, database="aabridge", user="aabridge", timeout=30):
        """Runs one query; returns its rows as lists of strings (tab-separated, unaligned).
        Raises RuntimeError on failure."""
        r = subprocess.run(["psql", "-X", "-q", "-At", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1",
                            "-p", str(self.port), "-U", user, "-d", database, "-c", query],
                           capture_output=True, timeout=timeout)
        if r.returncode != 0:
            raise RuntimeError(f"psql: {r.stderr.decode(errors='replace').strip()[:300]}")
        out = r.stdout.decode(errors="replace")
        return [line.split("\t") for line in out.splitlines() if line]


# ---------------------------------------------------------------------------------------------
# The bridge: its configuration and its process.

AIRPODS_PRO = {"name": "AirPods Pro", "hardware": "inEarBud", "capabilities": "[audioSwitching, placement]",
               "auto_register": "true", "placement_decoder": "apple_proximity", "setup_options": "[rename]",
               "descriptor": {"bluetooth_company_identifier": "0x004C",
                              "bluetooth_manufacturer_data_blob": '"0719010e20"',
                              "bluetooth_manufacturer_data_mask": '"ffffffffff"'}}
ACME_HEADPHONES = {"name": "Acme Studio Headphones", "hardware": "overEarHeadphone",
                   "capabilities": "[audioSwitching, placement]", "placement_decoder": "none",
                   "setup_options": "[rename, confirmAuthorization]",
                   "descriptor": {"bluetooth_service_uuid": '"FE2C"', "bluetooth_name_substring": '"Acme"'}}


def _fields(fields, first, lead):
    """YAML lines of a mapping ({key: value or {key: value}}, values written as given, None left
    out): the first key after `first`, the others after `lead`, nested keys two deeper."""
    lines = []
    for key, value in fields.items():
        if value is None:
            continue
        prefix, first = first, lead
        if isinstance(value, dict):
            lines.append(f"{prefix}{key}:")
            lines += [f"{lead}  {k}: {v}" for k, v in value.items() if v is not None]
        else:
            lines.append(f"{prefix}{key}: {value}")
    return lines


def _block(name, fields):
    """`name:` and its fields."""
    return "\n".join([f"{name}:"] + _fields(fields, "  ", "  ")) + "\n"


def _items(name, entries):
    """`name:` and a list of mappings."""
    return "\n".join([f"{name}:"] + [line for entry in entries for line in _fields(entry, "  - ", "    ")]) + "\n"


def bridge_config(port, storage, *, client_id="aabridge-harness", user=None, reconnect_max=2, password_line="",
                  homeassistant=True, picker_timeout=None, health=60, log_level="info",
                  setup=("[0x004C]", '["FE2C"]', '["Acme"]'), products=(AIRPODS_PRO, ACME_HEADPHONES),
                  gateways=(("omg", "openmqttgateway"), ("native", "native")), accessories=(), sources=(),
                  rooms=None, debounce=0, availability_timeout=120, immediate_rssi=None, cluster=None, extra=""):
    """The bridge's YAML configuration, one template for every harness.

    `storage`: an SQLite path, or a postgresql:// URL (backend postgresql). `accessories`:
    (id, name, product) or (id, name, product, {more fields}); `sources`: (address, name);
    `gateways`: (name, format); `rooms`: {gateway: room}; `cluster`: (instance, partitions);
    `setup`: the bluetooth company identifiers, services and names (None: leave one out);
    `extra`: more top-level sections, appended."""
    parts = [_block("mqtt", {"server": f"mqtt://127.0.0.1:{port}", "base_topic": BASE, "client_id": client_id,
                             "user": user, "keepalive": 10,
                             "reconnect": f"{{min_s: 1, max_s: {reconnect_max}}}"}) + password_line + ("\n" if password_line else ""),
             _block("homeassistant", {"enabled": str(homeassistant).lower(), "picker_timeout_s": picker_timeout})]
    if str(storage).startswith("postgresql://"):
        parts.append(_block("storage", {"backend": "postgresql", "url": f'"{storage}"'}))
    else:
        parts.append(_block("storage", {"path": storage}))
    if cluster:
        parts.append(_block("cluster", {"enabled": "true", "instance": cluster[0], "partitions": cluster[1]}))
    if health is not None:
        parts.append(_block("health", {"interval_s": health}))
    parts.append(_block("log", {"level": log_level}))
    companies, services, names = setup
    parts.append(_block("setup", {"supports": "[bluetooth]",
                                  "bluetooth": {"company_identifiers": companies, "services": services, "names": names}}))
    parts.append(_items("products", products))
    parts.append(_items("gateways", [{"name": name, "format": form} for name, form in gateways]))
    if accessories:
        parts.append(_items("accessories", [dict({"id": f'"{a[0]}"', "name": a[1], "product": a[2]},
                                                 **(a[3] if len(a) > 3 else {})) for a in accessories]))
    if sources:
        parts.append(_items("sources", [{"address": f'"{address}"', "name": name} for address, name in sources]))
    if rooms:
        parts.append(_block("rooms", rooms))
    parts.append(_block("switching", {"placement_debounce_ms": debounce, "availability_timeout_s": availability_timeout,
                                      "immediate_rssi": immediate_rssi}))
    return "".join(parts) + extra


class Bridge:
    """The aabridge binary (or, for the cluster's --fake, a command list) with a configuration
    written to `workdir`/`name`.yaml; its output in `workdir`/`name`.log."""

    def __init__(self, binary, workdir, yaml_text, env=None, name="aabridge"):
        self.binary = binary
        self.config = os.path.join(str(workdir), f"{name}.yaml")
        os.makedirs(str(workdir), exist_ok=True)
        with open(self.config, "w") as f:
            f.write(yaml_text)
        self.stderr_path = self.log = os.path.join(str(workdir), f"{name}.log")
        self.env = dict(os.environ, **(env or {}))
        self.proc = None

    def start(self):
        out = open(self.log, "ab")
        command = list(self.binary) if isinstance(self.binary, (list, tuple)) else [self.binary]
        self.proc = subprocess.Popen(command + ["run", "--config", self.config], stdout=out, stderr=out, env=self.env)
        out.close()
        return self

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill(self):
        if self.alive():
            self.proc.kill()
        if self.proc:
            self.proc.wait()

    def stop(self, timeout=15):
        return stop_process(self.proc, timeout)

    def output(self):
        try:
            with open(self.log, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def tail(self, n=5):
        return self.output().splitlines()[-n:]

    def rss_kb(self):
        return proc_status_kb(self.pid, "VmRSS") if self.pid else None


def proc_status_kb(pid, key):
    """A `key:` line of /proc/`pid`/status in kB (VmRSS, VmHWM), or None."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


# ---------------------------------------------------------------------------------------------
# The household the chaos scenarios and the soak run: two accessories, a phone, two gateways.

AIRPODS = "A1:B2:C3:D4:E5:F6"
AIRPODS_T = "A1B2C3D4E5F6"
HEADPHONES = "B1:B2:C3:D4:E5:F6"
HEADPHONES_T = "B1B2C3D4E5F6"
PHONE = "11:22:33:44:55:66"
HOUSEHOLD = ((AIRPODS, "Alice's AirPods", "AirPods Pro"), (HEADPHONES, "Bob's Headphones", "Acme Studio Headphones"))


def household_config(port, database, client_id="chaos-bridge", more_accessories=(), **options):
    """bridge_config for the household: its accessories (and `more_accessories`), Alice's
    iPhone, placement at once (immediate RSSI -50); `options` as bridge_config's."""
    options.setdefault("immediate_rssi", -50)
    return bridge_config(port, database, client_id=client_id, accessories=HOUSEHOLD + tuple(more_accessories),
                         sources=((PHONE, "Alice's iPhone"),), **options)


# ---------------------------------------------------------------------------------------------
# The mosquitto command line clients.

class Client:
    """The mosquitto command line clients against one broker port."""

    def __init__(self, port, user=None, password=None):
        self.port = port
        self.counter = 0
        self.auth = ["-u", user, "-P", password] if user else []

    def pub(self, topic, payload, qos=1, retain=False, timeout=5):
        args = ["mosquitto_pub", "-h", "127.0.0.1", "-p", str(self.port)] + self.auth + ["-q", str(qos), "-t", topic, "-m", payload]
        if retain:
            args.append("-r")
        try:
            return subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=timeout).returncode == 0
        except subprocess.TimeoutExpired:
            return False

    def first(self, topic, wait=1, count=1):
        """Messages on `topic` (retained ones included) within `wait` seconds: [(topic, payload)]."""
        args = ["mosquitto_sub", "-h", "127.0.0.1", "-p", str(self.port)] + self.auth + ["-t", topic, "-C", str(count),
                "-W", str(wait), "-v"]
        try:
            out = subprocess.run(args, capture_output=True, timeout=wait + 5).stdout.decode("utf-8", "replace")
        except subprocess.TimeoutExpired:
            return []
        return [tuple(line.split(" ", 1)) if " " in line else (line, "") for line in out.splitlines()]

    def request(self, name, members=None, wait=3):
        """Publishes a request and returns its response (dict) or None (no response within `wait`).
        Subscribes first (waits for the SUBACK), then publishes, then reads responses until the
        one with this request's transaction: responses share one topic, so concurrent
        requests see each other's (mosquitto_rr would stop at the first one)."""
        self.counter += 1
        transaction = f"c{os.getpid()}-{threading.get_ident() % 100000}-{self.counter}-{random.randrange(1 << 30)}"
        body = dict(members or {}, transaction=transaction)
        deadline = time.monotonic() + wait
        sub = subprocess.Popen(["stdbuf", "-oL", "mosquitto_sub", "-h", "127.0.0.1", "-p", str(self.port)] + self.auth +
                               ["-q", "1", "-d", "-t", f"{BASE}/bridge/response/{name}", "-W", str(wait + 5)],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        lines = queue.Queue()

        def reader():
            for raw in sub.stdout:
                lines.put(raw.decode("utf-8", "replace").strip())
            lines.put(None)

        threading.Thread(target=reader, daemon=True).start()
        result = None
        try:
            subscribed = False
            while time.monotonic() < deadline:
                try:
                    line = lines.get(timeout=max(0.01, deadline - time.monotonic()))
                except queue.Empty:
                    break
                if line is None:
                    break
                if not subscribed:
                    if "SUBACK" in line:
                        subscribed = True
                        if not self.pub(f"{BASE}/bridge/request/{name}", json.dumps(body), timeout=wait):
                            break
                    continue
                if not line.startswith("{"):
                    continue
                try:
                    value = json.loads(line)
                except ValueError:
                    continue
                if isinstance(value, dict) and value.get("transaction") == transaction:
                    result = value
                    break
        finally:
            sub.kill()
            sub.wait()
        return result


def wait_online(client, timeout=30):
    """Until the bridge answers a health request (a new process is up and its loop runs)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if client.request("health", wait=1):
            return True
    return False


def sql(database, query):
    r = subprocess.run(["sqlite3", database, query], capture_output=True, timeout=30)
    return r.stdout.decode().strip(), r.returncode, r.stderr.decode().strip()
