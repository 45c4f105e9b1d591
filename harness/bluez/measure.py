#!/usr/bin/env python3
"""Instructions per advertisement on the bluez path (docs/performance.md, issues 51 and 53).

    scripts/measure-bluez-path [--binary PATH] [--counts 100,1100] [--runs 1] [--keep DIR]

For each count N: python-dbusmock's BlueZ on a private bus (Tests/BlueZ/bluez_mock.py: its
own dbus-daemon, adapter hci0), mosquitto on a free 127.0.0.1 port, and `aabridge run` (a
release build) with one `format: bluez` gateway under `valgrind --tool=callgrind` with
aabridge-bench's sigsuspend shim preloaded. Once discovery runs: one device (its
InterfacesAdded) and N PropertiesChanged {ManufacturerData, RSSI} of one configured AirPods Pro
(a 27-byte proximity-pairing frame), sent one at a time at the mock's pace; then, once
`/metrics` counts N+1 advertisements for `box`, SIGTERM and callgrind's total for the whole
process. The difference between two counts divided by theirs is the cost of one advertisement.

Every process started here (bus, mock, broker, bridge) is stopped at the end (harness/common.py).
Run with the bluez-mock venv's python (scripts/measure-bluez-path does).
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import common  # noqa: E402

sys.path.insert(0, os.path.join(common.ROOT, "Tests", "BlueZ"))
import bluez_mock  # noqa: E402

DEVICE = "F1:E2:D3:C4:B5:A6"
# A real AirPods Pro proximity-pairing frame (Tests/Fixtures/gateway-payloads.jsonl), after 0x004C.
FRAME = "0719010e2022f58f00000a7d9fff27234873d4305e0fed1b39e2b8"
SHIM = """#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>
int sigsuspend(const sigset_t *mask) {
    sigset_t copy = *mask;
    return (int)syscall(SYS_rt_sigsuspend, &copy, 8);
}
"""


def shim(directory):
    """aabridge-bench's sigsuspend shim (Sources/aabridge-bench/SigsuspendShim.swift), built here."""
    source, library = os.path.join(directory, "sigsuspend.c"), os.path.join(directory, "sigsuspend.so")
    with open(source, "w") as f:
        f.write(SHIM)
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", library, source], check=True)
    return library


def advertisements(http_port):
    try:
        text = urllib.request.urlopen(f"http://127.0.0.1:{http_port}/metrics", timeout=30).read().decode()
    except OSError:
        return None
    match = re.search(r'^aabridge_gateway_advertisements_total\{gateway="box"\} (\d+)', text, re.M)
    return int(match.group(1)) if match else 0


def total(path):
    with open(path) as f:
        lines = [line for line in f if line.startswith(("totals:", "summary:"))]
    return int(lines[-1].split()[1])


def measure(binary, count, library, workdir):
    mock = bluez_mock.Mock()
    broker = common.Broker(os.path.join(workdir, "broker")).start()
    bridge = None
    try:
        mock.run(["adapter", "hci0"])
        http_port = common.free_port()
        yaml = common.bridge_config(
            broker.port, os.path.join(workdir, "aabridge.sqlite3"), client_id=f"bluez-path-{count}", homeassistant=False,
            log_level="warning", gateways=(("box", "bluez"),), accessories=((DEVICE, "Box AirPods", "AirPods Pro"),),
            extra=f"http:\n  listen: 127.0.0.1:{http_port}\n")
        out = os.path.join(workdir, f"callgrind.{count}.out")
        command = ["/usr/bin/env", f"LD_PRELOAD={library}", "/usr/bin/valgrind", "--tool=callgrind",
                   f"--callgrind-out-file={out}", f"--log-file={out}.valgrind.log", binary]
        bridge = common.Bridge(command, workdir, yaml, env={"DBUS_SYSTEM_BUS_ADDRESS": mock.address}, name=f"aabridge-{count}")
        bridge.start()
        discovering = common.wait_for(lambda: bridge.alive() and mock.run(["discovering", "hci0"]) == "true", 300, interval=1)
        if not discovering:
            raise RuntimeError(f"no discovery within 300 s; log: {bridge.tail(10)}")
        if not common.wait_for(lambda: advertisements(http_port) is not None, 120, interval=1):
            raise RuntimeError("no /metrics")
        mock.run(["device", "hci0", DEVICE, "public", "-60"])
        started = time.monotonic()
        for index in range(count):
            mock.run(["manufacturer", "hci0", DEVICE, "0x004C", FRAME, str(-40 - index % 20)])
        sent = time.monotonic() - started
        time.sleep(3)
        polls = 1
        heard = advertisements(http_port)
        deadline = time.monotonic() + 600
        while heard != count + 1 and time.monotonic() < deadline:
            time.sleep(3)
            polls += 1
            heard = advertisements(http_port)
        if heard != count + 1:
            raise RuntimeError(f"/metrics counted {heard} advertisements for box, not {count + 1}")
        status = bridge.stop(timeout=120)
        bridge = None
        instructions = total(out)
        print(f"  N={count}: {instructions:,} instructions (box heard {heard}, sent in {sent:.1f} s, "
              f"{polls} /metrics polls, exit {status})", flush=True)
        return instructions
    finally:
        if bridge:
            bridge.stop(timeout=60)
        broker.stop()
        mock.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(common.ROOT, ".build", "release", "aabridge"))
    parser.add_argument("--counts", default="100,1100")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--keep", help="a directory to keep the callgrind files in (callgrind_annotate)")
    options = parser.parse_args()
    counts = [int(c) for c in options.counts.split(",")]
    binary = os.path.abspath(options.binary)
    with tempfile.TemporaryDirectory(prefix="aabridge-bluez-path-") as scratch:
        workdir = os.path.abspath(options.keep) if options.keep else scratch
        os.makedirs(workdir, exist_ok=True)
        library = shim(workdir)
        for run in range(options.runs):
            print(f"run {run + 1}: {binary}", flush=True)
            totals = [measure(binary, count, library, os.path.join(workdir, f"{run}-{count}")) for count in counts]
            low, high = counts[0], counts[-1]
            if high > low:
                per = (totals[-1] - totals[0]) / (high - low)
                print(f"  per advertisement: ({totals[-1]:,} - {totals[0]:,}) / {high - low} = {per:,.0f}", flush=True)


if __name__ == "__main__":
    main()
