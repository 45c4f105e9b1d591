"""What the fault tests share (chaos/chaos.py, cluster/cluster_test.py, soak/soak.py): PASS/FAIL
lines and figures, free loopback ports, waiting, a mosquitto and a PostgreSQL on 127.0.0.1."""

import os
import signal
import socket
import subprocess
import time

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


def listening(port, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
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


class Broker:
    """mosquitto on a free 127.0.0.1 port, without persistence; `extra` is appended to its
    configuration."""

    def __init__(self, workdir, extra=""):
        self.port = free_port()
        self.dir = workdir
        self.conf = os.path.join(workdir, "mosquitto.conf")
        with open(self.conf, "w") as f:
            f.write(f"listener {self.port} 127.0.0.1\nallow_anonymous true\npersistence false\n"
                    f"max_queued_messages 200000\nuser root\nlog_dest file {workdir}/mosquitto.log\n{extra}")
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(["mosquitto", "-c", self.conf], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        if not listening(self.port, 10):
            raise RuntimeError("mosquitto did not start")

    def stop(self, sig=signal.SIGTERM):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


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
