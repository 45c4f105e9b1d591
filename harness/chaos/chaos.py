#!/usr/bin/env python3
"""Fault tests for aabridge around the real release binary, mosquitto, the mosquitto
command line clients, sqlite3 and PostgreSQL (stdlib only). Run through scripts/chaos.

Each scenario is one file in harness/chaos/scenarios/ (NAME, ORDER, run(ctx)); this runner
imports every module there, so a new scenario is a new file. Each prints PASS/FAIL lines and
figures; the summary ends with "N passed, M failed". The scenarios today:
  broker-restarts  the broker restarted N times under a steady telemetry stream
  sigkill          the bridge SIGKILLed N times during pairing/registration/rename requests
  disk-full        a small tmpfs filled up, remounted read-only, and a read-only start
  flood            telemetry far above the sustainable rate for D seconds
  flood-large      512 KiB payloads (over the 64 KiB telemetry limit) for D seconds
  secrets          a password from a file and from the environment: never in any output
  frozen-broker-shutdown  SIGTERM (and a second SIGTERM) while the broker is stopped (SIGSTOP)
  oversize-flood   48 MiB messages on a gateway topic, the broker without a packet limit
  reconnect-order  a retained state in flight when the link drops (proxy.py) must not
                   overwrite the newer one the bridge published while disconnected
  solo-postgres    two more bridges without cluster mode on the first's PostgreSQL database:
                   each refused with exit 3; the first answers every request exactly once
  http-rebinding   a console without a token: foreign Host, missing Host, foreign Origin
                   on the request API, /events and /metrics: refused, the accessories unchanged
  http-idle-connections  40 idle connections from 127.0.0.1: /healthz from 127.0.0.2 still
                   answers at once, and the idle ones are closed after the header timeout
  replay-flapping  real in-case frames and replayed in-ear ones at 1 Hz each: placement flaps
                   a bounded number of times; with the encryption key, never in ear
  decoys           a fresh decoy address a second from one node: a rotation still followed, an
                   away accessory still re-attached, the node shows lookalike_flood
  reattach-hijack  copies of an accessory's frames elsewhere before it goes quiet, then a forged
                   address: never attached there; forged in its own room, undone (reattachUndone)
                   when the real one is heard; the real one always offered
Everything listens on 127.0.0.1 only; every loop is bounded in count and time.
"""
import argparse
import importlib
import os
import pkgutil
import shutil
import sys
import tempfile
import time
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]
from common import check, summary  # noqa: E402
from support import SKIPPED  # noqa: E402


def scenarios():
    """The scenario modules of scenarios/, in ORDER (then NAME)."""
    found = []
    for info in pkgutil.iter_modules([os.path.join(HERE, "scenarios")]):
        module = importlib.import_module(f"scenarios.{info.name}")
        if hasattr(module, "NAME") and hasattr(module, "run"):
            found.append(module)
    return sorted(found, key=lambda m: (getattr(m, "ORDER", 1000), m.NAME))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--short", action="store_true")
    parser.add_argument("--only", default="")
    parser.add_argument("--list", action="store_true", help="the scenarios' names, one a line")
    parser.add_argument("--restarts", type=int)
    parser.add_argument("--kills", type=int)
    parser.add_argument("--flood-seconds", type=int)
    args = parser.parse_args()
    modules = scenarios()
    if args.list:
        print("\n".join(m.NAME for m in modules))
        return 0
    only = set(filter(None, args.only.split(",")))
    unknown = only - {m.NAME for m in modules}
    if unknown:
        print(f"chaos.py: unknown scenario(s) {', '.join(sorted(unknown))}; known: "
              f"{', '.join(m.NAME for m in modules)}", file=sys.stderr)
        return 2
    root = tempfile.mkdtemp(prefix="aabridge-chaos-")
    started = time.monotonic()
    ctx = SimpleNamespace(binary=args.binary, root=root, short=args.short, args=args)
    try:
        for module in modules:
            if only and module.NAME not in only:
                continue
            try:
                module.run(ctx)
            except Exception as error:  # a broken scenario is a failure, not a crash of the suite
                check(f"{module.NAME}: scenario ran to the end", False, repr(error))
    finally:
        if os.environ.get("CHAOS_KEEP"):
            print(f"work directory kept: {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    return summary(started, SKIPPED)


if __name__ == "__main__":
    sys.exit(main())
