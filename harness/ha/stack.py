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

import common
from common import ACME_HEADPHONES, bridge_config, mosquitto_passwd

ROOT = Path(common.ROOT)

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

# The suite's products: AirPods and Beats by the first two bytes of Apple's proximity pairing
# (headTracking, issue 52: auto_register registers it, so the Head tracking switch is there),
# and the headphones by a literal name.
AIRPODS_OR_BEATS = {"name": "AirPods or Beats", "hardware": "inEarBud",
                    "capabilities": "[audioSwitching, placement, headTracking, audioSpatialization]",
                    "auto_register": "true", "placement_decoder": "apple_proximity", "setup_options": "[rename]",
                    "descriptor": {"bluetooth_company_identifier": "0x004C", "bluetooth_manufacturer_data_blob": '"0719"',
                                   "bluetooth_manufacturer_data_mask": '"ffff"'}}
HEADPHONES_LITERAL = dict(ACME_HEADPHONES, descriptor=dict(ACME_HEADPHONES["descriptor"], bluetooth_name_compare="literal"))


def bridge_configuration(port, user, work):
    """The suite's bridge: the OpenMQTTGateway gateway and Home Assistant's scanners through
    custom_components/aabridge_relay (the suite's relay step), rooms, a short availability."""
    return bridge_config(port, f"{work}/aabridge.sqlite3", client_id="aabridge-ha-test", user=user or "null",
                         picker_timeout=PICKER_TIMEOUT_S, health=None, products=(AIRPODS_OR_BEATS, HEADPHONES_LITERAL),
                         gateways=(("omg", "openmqttgateway"), ("relay", "ha_relay")),
                         accessories=((ALICE, "Alice's AirPods", "AirPods or Beats"),
                                      (BOB, "Bob's Headphones", "Acme Studio Headphones")),
                         sources=((PHONE, "Alice's iPhone"),),
                         rooms={GATEWAY: ROOM, "living_room_proxy": "Living room", "bedroom_proxy": "Bedroom"},
                         availability_timeout=AVAILABILITY_S)


class Broker(common.Broker):
    """mosquitto on a free loopback port: open (anonymous), or the shipped configuration and ACL."""

    USERS = ("aabridge", "homeassistant", GATEWAY)

    def __init__(self, work, acl, log):
        self.work = Path(work)
        self.acl = acl
        self.passwords = {user: secrets.token_urlsafe(12) for user in self.USERS} if acl else {}
        self.say = log
        super().__init__(work, configure=self.configuration)

    def credentials(self, user):
        return (user, self.passwords[user]) if self.acl else (None, None)

    def configuration(self, port):
        self.work.mkdir(parents=True, exist_ok=True)
        if not self.acl:
            return (f"listener {port} 127.0.0.1\nallow_anonymous true\nuser root\n"
                    f"log_dest file {self.work / 'broker.log'}\nlog_type all\n")
        shutil.copy(ROOT / "docker" / "mosquitto.acl", self.work / "mosquitto.acl")
        mosquitto_passwd(self.work / "passwd", self.passwords)
        (self.work / "data").mkdir(exist_ok=True)
        replaced = []
        for line in (ROOT / "docker" / "mosquitto.conf").read_text().splitlines():
            if line == "listener 1883":
                line = f"listener {port} 127.0.0.1"
            elif line.startswith("password_file "):
                line = f"password_file {self.work / 'passwd'}"
            elif line.startswith("acl_file "):
                line = f"acl_file {self.work / 'mosquitto.acl'}"
            elif line.startswith("persistence_location "):
                line = f"persistence_location {self.work / 'data'}/"
            elif line == "log_dest stdout":
                line = f"log_dest file {self.work / 'broker.log'}"
            replaced.append(line)
        if os.getuid() == 0:
            subprocess.run(["chown", "-R", "mosquitto", str(self.work)], check=False)
            os.chmod(self.work, 0o755)
        return "\n".join(replaced) + "\n"

    def start(self):
        self.say(f"mosquitto -c {self.conf} (port {self.port}, {'shipped ACL' if self.acl else 'open'})")
        return super().start()


class Bridge(common.Bridge):
    """The aabridge binary with the suite's configuration."""

    def __init__(self, binary, work, broker, log):
        user, password = broker.credentials("aabridge")
        super().__init__(binary, work, bridge_configuration(broker.port, user, work),
                         env={"AABRIDGE_MQTT_PASSWORD": password} if password else None)
        self.say = log

    def start(self):
        self.say(f"{self.binary} run --config {self.config}")
        return super().start()


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
