"""secrets: a password from a file and from the environment: never in any output"""
import os
import random
import signal
import subprocess
import time

from common import AIRPODS, BASE, Bridge, Broker, Client, check, household_config, wait_online
from support import Recorder

NAME = "secrets"
ORDER = 60


def scenario_secrets(binary, root):
    print("== secrets: password from a file and from the environment, never in any output", flush=True)
    for source in ["file", "environment"]:
        work = os.path.join(root, f"secrets-{source}")
        os.makedirs(work)
        secret = f"Chaos-S3cret-{source}-{random.randrange(1 << 40):x}"
        password_file = os.path.join(work, "mqtt-password")
        with open(password_file, "w") as f:
            f.write(secret + "\n")
        # mosquitto with a password file and ACLs: without the right password the bridge gets nowhere.
        subprocess.run(["mosquitto_passwd", "-c", "-b", os.path.join(work, "passwd"), "bridge", secret], check=True)
        subprocess.run(["mosquitto_passwd", "-b", os.path.join(work, "passwd"), "observer", "observer-pw"], check=True)
        with open(os.path.join(work, "acl"), "w") as f:
            f.write(f"user bridge\ntopic readwrite #\nuser observer\ntopic readwrite {BASE}/#\ntopic readwrite homeassistant/#\n")
        broker = Broker(work, extra=f"allow_anonymous false\npassword_file {work}/passwd\nacl_file {work}/acl\n")
        with open(broker.conf) as f:
            text = f.read().replace("allow_anonymous true\n", "")
        with open(broker.conf, "w") as f:
            f.write(text)
        broker.start()
        client = Client(broker.port, "observer", "observer-pw")
        recorder = Recorder(broker.port, os.path.join(work, "recorded.txt"), auth=("-u", "observer", "-P", "observer-pw"))
        line = f"  user: bridge\n  password_file: {password_file}" if source == "file" else "  user: bridge"
        env = {"AABRIDGE_MQTT_PASSWORD": secret} if source == "environment" else {}
        bridge = Bridge(binary, work, household_config(broker.port, os.path.join(work, "db.sqlite3"), password_line=line), env=env)
        bridge.start()
        online = wait_online(client)
        client.request("accessory/rename", {"id": AIRPODS, "name": "x" * 200})  # refused: an error response
        client.request("nonsense/request", {})
        client.pub(f"{BASE}/bridge/request/accessory/register", "{not json")
        time.sleep(1)
        bridge.proc.send_signal(signal.SIGTERM)
        bridge.proc.wait(15)
        # validate prints the configuration summary: it must not show the secret either.
        v = subprocess.run([binary, "validate", "--config", bridge.config], capture_output=True,
                           env=bridge.env, timeout=30)
        time.sleep(0.5)
        recorder.stop()
        with open(bridge.stderr_path, "rb") as f:
            emitted = f.read() + b"\n".join(l.encode() for l in recorder.lines()) + v.stdout + v.stderr
        check(f"secrets ({source}): the bridge ran with the password", online)
        check(f"secrets ({source}): the password appears in nothing the bridge emitted "
              f"({len(emitted):,} bytes: MQTT messages, stderr, validate output)",
              secret.encode() not in emitted and len(emitted) > 0)
        broker.stop()


def run(ctx):
    scenario_secrets(ctx.binary, ctx.root)
