"""frozen-broker-shutdown: SIGTERM (and a second SIGTERM) while the broker is stopped (SIGSTOP)"""
import os
import signal
import subprocess
import time

from common import Bridge, check, figure, household_config, wait_for, wait_online
from support import retained_state, scenario_setup

NAME = "frozen-broker-shutdown"
ORDER = 70


# How long a clean shutdown may take with a broker that answers nothing (docs/operations.md):
# at most 5 s waiting for `offline`'s acknowledgement, then at most 2 s for the MQTT client to
# stop; 1 s more for the process to close the database and exit.
SHUTDOWN_BOUND_S = 8.0
# A second SIGTERM ends the bridge at once (after the commit in progress).
SECOND_SIGNAL_BOUND_S = 1.0



def scenario_frozen_broker_shutdown(binary, root):
    print("== frozen broker: SIGTERM while the broker is stopped (SIGSTOP); then a second SIGTERM 1 s after the first",
          flush=True)
    work, broker, client = scenario_setup(root, "frozen-broker-shutdown")
    database = os.path.join(work, "db.sqlite3")
    try:
        for variant in ("one SIGTERM", "second SIGTERM"):
            bridge = Bridge(binary, work, household_config(broker.port, database))
            bridge.start()
            if not check(f"frozen-broker-shutdown ({variant}): bridge online", wait_online(client)):
                bridge.kill()
                continue
            broker.proc.send_signal(signal.SIGSTOP)
            second_at, code = None, None
            try:
                began = time.monotonic()
                bridge.proc.send_signal(signal.SIGTERM)
                if variant == "second SIGTERM":
                    # 1 s in, the bridge is still waiting for `offline`'s acknowledgement
                    # (up to 5 s): the second signal lands in that wait.
                    time.sleep(1.0)
                    second_at = time.monotonic()
                    bridge.proc.send_signal(signal.SIGTERM)
                try:
                    code = bridge.proc.wait(20)
                except subprocess.TimeoutExpired:
                    pass
                ended = time.monotonic()
            finally:
                broker.proc.send_signal(signal.SIGCONT)
            if code is None:
                bridge.kill()
            took = ended - began
            if variant == "one SIGTERM":
                check(f"frozen-broker-shutdown: SIGTERM with the broker frozen: exit 0 within {SHUTDOWN_BOUND_S:.0f} s",
                      code == 0 and took <= SHUTDOWN_BOUND_S,
                      f"exit status {code} after {took:.2f} s" if code is not None else f"still running after {took:.0f} s")
                figure(f"frozen broker: SIGTERM -> exit {code} after {took:.2f} s (bound {SHUTDOWN_BOUND_S:.0f} s: "
                       f"5 s for offline's acknowledgement + 2 s for the MQTT client to stop + 1 s)")
            else:
                after = ended - second_at
                check(f"frozen-broker-shutdown: a second SIGTERM 1 s after the first: exit 143 within "
                      f"{SECOND_SIGNAL_BOUND_S:.0f} s of it",
                      code == 143 and after <= SECOND_SIGNAL_BOUND_S,
                      f"exit status {code} {after:.2f} s after the second signal ({took:.2f} s after the first)"
                      if code is not None else f"still running {after:.0f} s after the second signal")
                figure(f"frozen broker: second SIGTERM 1 s after the first -> exit {code} {after:.3f} s after it")
            # The broker runs again: what the bridge wrote before it ended (offline, or its
            # will once the broker sees the closed connection) makes the retained state offline.
            def offline():
                state = retained_state(client, 1)
                return state if state and '"offline"' in state else None

            state = wait_for(offline, 10)
            check(f"frozen-broker-shutdown ({variant}): once the broker resumes, the retained bridge/state is offline",
                  bool(state), state or str(retained_state(client)))
    finally:
        if broker.proc and broker.proc.poll() is None:
            broker.proc.send_signal(signal.SIGCONT)
        broker.stop()


def run(ctx):
    scenario_frozen_broker_shutdown(ctx.binary, ctx.root)
