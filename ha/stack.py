"""The stack the real-Home-Assistant suite runs against: a real mosquitto on a free loopback
port (open, or the shipped docker/mosquitto.conf + docker/mosquitto.acl with password users),
the aabridge binary with a configuration of its own, and an MQTT client for the test.
"""

import os
import secrets
import shutil
import subprocess
import threading
import time
from pathlib import Path

import paho.mqtt.client as mqtt

from hass import free_port

ROOT = Path(__file__).resolve().parent.parent

ALICE = "A1:B2:C3:D4:E5:F6"
BOB = "B1:B2:C3:D4:E5:F6"
NEW = "F1:E2:D3:C4:B5:A6"
PHONE = "11:22:33:44:55:66"
# An iPhone the script blueprint reports (docs/sources.md, "An iPhone"): no name in sources:.
IPHONE = "66:55:44:33:22:11"
GATEWAY = "kitchen"
ROOM = "Kitchen"
AVAILABILITY_S = 6
PICKER_TIMEOUT_S = 150
# AirPods Pro proximity-pairing advertisements (Apple manufacturer data, ProximityPairing):
# IN_EAR is the real one of Tests/Fixtures/gateway-payloads.jsonl (F1:E2:D3:C4:B5:A6) with its
# status and battery bytes changed to both buds in the ears (0x2a), left 50 % and right 80 %
# (0x85), case 60 % (0x06), so that every battery entity exists; IN_CASE is the fixture's real
# "both buds in the case" advertisement (F1:E2:D3:C4:B5:A7): offHead.
IN_EAR = "4c000719010e202a850600000a7d9fff27234873d4305e0fed1b39e2b8"
IN_CASE = "4c000719010e2054aab5310000e00ca78a604bd37df4604f2c73e9a7f4"
MANUFACTURER_DATA = IN_EAR

BRIDGE_CONFIGURATION = """\
mqtt:
  server: mqtt://127.0.0.1:{port}
  base_topic: aabridge
  client_id: aabridge-ha-test
  user: {user}
  keepalive: 10
  reconnect: {{min_s: 1, max_s: 2}}
homeassistant:
  enabled: true
  picker_timeout_s: {picker_timeout}
storage:
  path: {work}/aabridge.sqlite3
log:
  level: info
setup:
  supports: [bluetooth]
  bluetooth:
    company_identifiers: [0x004C]
    services: ["FE2C"]
    names: ["Acme"]
products:
  - name: AirPods or Beats
    hardware: inEarBud
    # headTracking (issue 52): auto_register registers it, so the Head tracking switch is there.
    capabilities: [audioSwitching, placement, headTracking, audioSpatialization]
    auto_register: true
    placement_decoder: apple_proximity
    setup_options: [rename]
    descriptor:
      bluetooth_company_identifier: 0x004C
      bluetooth_manufacturer_data_blob: "0719"
      bluetooth_manufacturer_data_mask: "ffff"
  - name: Acme Studio Headphones
    hardware: overEarHeadphone
    capabilities: [audioSwitching, placement]
    placement_decoder: none
    setup_options: [rename, confirmAuthorization]
    descriptor:
      bluetooth_service_uuid: "FE2C"
      bluetooth_name_substring: "Acme"
      bluetooth_name_compare: literal
gateways:
  - name: omg
    format: openmqttgateway
  # Home Assistant's scanners through custom_components/aabridge_relay (the suite's relay step).
  - name: relay
    format: ha_relay
accessories:
  - id: "{alice}"
    name: Alice's AirPods
    product: AirPods or Beats
  - id: "{bob}"
    name: Bob's Headphones
    product: Acme Studio Headphones
sources:
  - address: "{phone}"
    name: Alice's iPhone
rooms:
  {gateway}: {room}
  living_room_proxy: Living room
  bedroom_proxy: Bedroom
switching:
  placement_debounce_ms: 0
  availability_timeout_s: {availability}
"""


class Broker:
    """mosquitto on a free loopback port: open (anonymous), or the shipped configuration and ACL."""

    USERS = ("aabridge", "homeassistant", GATEWAY)

    def __init__(self, work, acl, log):
        self.work = Path(work)
        self.acl = acl
        self.port = free_port()
        self.log = log
        self.passwords = {user: secrets.token_urlsafe(12) for user in self.USERS} if acl else {}
        self.process = None

    def credentials(self, user):
        return (user, self.passwords[user]) if self.acl else (None, None)

    def start(self):
        self.work.mkdir(parents=True, exist_ok=True)
        mosquitto = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
        conf = self.work / "mosquitto.conf"
        if self.acl:
            shutil.copy(ROOT / "docker" / "mosquitto.acl", self.work / "mosquitto.acl")
            passwd = self.work / "passwd"
            passwd.write_text("")
            for user, password in self.passwords.items():
                subprocess.run([shutil.which("mosquitto_passwd") or "/usr/bin/mosquitto_passwd", "-b", str(passwd), user, password],
                               check=True)
            (self.work / "data").mkdir(exist_ok=True)
            text = (ROOT / "docker" / "mosquitto.conf").read_text()
            replaced = []
            for line in text.splitlines():
                if line == "listener 1883":
                    line = f"listener {self.port} 127.0.0.1"
                elif line.startswith("password_file "):
                    line = f"password_file {passwd}"
                elif line.startswith("acl_file "):
                    line = f"acl_file {self.work / 'mosquitto.acl'}"
                elif line.startswith("persistence_location "):
                    line = f"persistence_location {self.work / 'data'}/"
                elif line == "log_dest stdout":
                    line = f"log_dest file {self.work / 'broker.log'}"
                replaced.append(line)
            conf.write_text("\n".join(replaced) + "\n")
            if os.getuid() == 0:
                subprocess.run(["chown", "-R", "mosquitto", str(self.work)], check=False)
                os.chmod(self.work, 0o755)
        else:
            conf.write_text(f"listener {self.port} 127.0.0.1\nallow_anonymous true\n"
                            f"log_dest file {self.work / 'broker.log'}\nlog_type all\n")
            if os.getuid() == 0:
                subprocess.run(["chown", "-R", "mosquitto", str(self.work)], check=False)
        self.log(f"mosquitto -c {conf} (port {self.port}, {'shipped ACL' if self.acl else 'open'})")
        self.process = subprocess.Popen([mosquitto, "-c", str(conf)], stdout=open(self.work / "broker.out", "w"),
                                        stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                import socket
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                if self.process.poll() is not None:
                    break
                time.sleep(0.1)
        raise RuntimeError(f"mosquitto did not start: {(self.work / 'broker.out').read_text()}")

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)


class Bridge:
    """The aabridge binary with the suite's configuration."""

    def __init__(self, binary, work, broker, log):
        self.binary = binary
        self.work = Path(work)
        self.broker = broker
        self.log = log
        self.process = None

    def start(self):
        self.work.mkdir(parents=True, exist_ok=True)
        user, password = self.broker.credentials("aabridge")
        config = self.work / "aabridge.yaml"
        config.write_text(BRIDGE_CONFIGURATION.format(
            port=self.broker.port, user=user or "null", work=self.work, alice=ALICE, bob=BOB, phone=PHONE,
            gateway=GATEWAY, room=ROOM, availability=AVAILABILITY_S, picker_timeout=PICKER_TIMEOUT_S))
        env = dict(os.environ)
        if password:
            env["AABRIDGE_MQTT_PASSWORD"] = password
        self.log(f"{self.binary} run --config {config}")
        self.process = subprocess.Popen([self.binary, "run", "--config", str(config)], env=env,
                                        stdout=open(self.work / "aabridge.out", "w"), stderr=subprocess.STDOUT)

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()

    def output(self):
        path = self.work / "aabridge.out"
        return path.read_text(errors="replace") if path.exists() else ""


class Client:
    """A test MQTT client (paho, MQTT 5) that records every message it receives."""

    def __init__(self, broker, user, name, subscribe=()):
        self.messages = []
        self.lock = threading.Condition()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"ha-suite-{name}-{secrets.token_hex(3)}",
                                  protocol=mqtt.MQTTv5)
        user, password = broker.credentials(user)
        if user:
            self.client.username_pw_set(user, password)
        self.filters = list(subscribe)
        self.connected = threading.Event()
        self.client.on_connect = self._connected
        self.client.on_message = self._message
        self.client.connect("127.0.0.1", broker.port, keepalive=10)
        self.client.loop_start()
        if not self.connected.wait(10):
            raise RuntimeError(f"test client {name} did not connect")

    def _connected(self, client, userdata, flags, reason, properties):
        for topic in self.filters:
            client.subscribe(topic, qos=1)
        self.connected.set()

    def _message(self, client, userdata, message):
        with self.lock:
            self.messages.append((message.topic, message.payload, message.retain, time.monotonic(), message.qos))
            self.lock.notify_all()

    def publish(self, topic, payload, retain=False):
        info = self.client.publish(topic, payload, qos=1, retain=retain)
        info.wait_for_publish(10)
        return info

    def on(self, topic):
        with self.lock:
            return [m for m in self.messages if m[0] == topic]

    def wait(self, predicate, timeout=30):
        deadline = time.monotonic() + timeout
        with self.lock:
            while True:
                found = [m for m in self.messages if predicate(m)]
                if found:
                    return found[-1]
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.lock.wait(left)

    def close(self):
        self.client.loop_stop()
        self.client.disconnect()
