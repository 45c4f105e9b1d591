"""What the fault tests share (chaos/chaos.py, cluster/cluster_test.py): PASS/FAIL lines and
figures, free loopback ports, waiting, and a mosquitto on 127.0.0.1."""

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


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
