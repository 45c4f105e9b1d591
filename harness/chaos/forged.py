"""What the identity scenarios (reattach-hijack, replay-flapping, decoys) share: an AirPods Pro
proximity-pairing frame with any clear status and encrypted block, published as an
OpenMQTTGateway node relays it (a forged gateway stream: anyone in radio range of a node can
make it relay such frames), paced streams of them, and reading back what the bridge said
from a Recorder's file."""
import json
import subprocess
import time

from common import BASE

# Clear status bytes (docs/telemetry.md): 0x20 the broadcasting bud is the left one; 0x02 and
# 0x08 the buds in ear; 0x04 both in the case.
IN_EAR = 0x2B
IN_CASE = 0x24


def frame(status, encrypted=bytes(16)):
    """AirPods Pro (model 0x200E), buds 90 %, colour 0, then the 16-byte encrypted block."""
    return f"4c000719010e20{status:02x}990f310000{bytes(encrypted).hex()}"


def encrypt(block, key_hex):
    """AES-128-ECB of one 16-byte block with the accessory's encryption key (openssl: the
    standard library has no AES)."""
    out = subprocess.run(["openssl", "enc", "-aes-128-ecb", "-nopad", "-K", key_hex], input=bytes(block),
                         capture_output=True, check=True)
    return out.stdout[:16]


def charging_block(key_hex, charging=True):
    """The encrypted block of buds at 92 % and 91 %, both charging (in their case) or not, the
    case level unknown."""
    flag = 0x80 if charging else 0
    return encrypt(bytes([0x01, flag | 92, flag | 91, 0x7F]) + bytes(12), key_hex)


def relay(port, gateway, address, data, rssi):
    """One advertisement as OpenMQTTGateway node `gateway` publishes it."""
    topic = f"home/{gateway}/BTtoMQTT/{address.replace(':', '')}"
    payload = json.dumps({"id": address, "mac_type": 1, "manufacturerdata": data, "rssi": rssi})
    subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(port), "-q", "0", "-t", topic, "-m", payload],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=5)


def stream(port, seconds, period, sends):
    """Every `period` seconds for `seconds`: each (gateway, address, data, rssi) of `sends(i)`,
    i counting the periods; paced against the clock, so a slow publish does not stretch it."""
    start = time.monotonic()
    i = 0
    while time.monotonic() - start < seconds:
        for gateway, address, data, rssi in sends(i):
            relay(port, gateway, address, data, rssi)
        i += 1
        delay = start + i * period - time.monotonic()
        if delay > 0:
            time.sleep(delay)


def address(prefix, index):
    """A fresh random-looking address (a decoy, a rotation): `prefix` is the first byte."""
    return f"{prefix:02X}:{(index >> 24) & 0xFF:02X}:{(index >> 16) & 0xFF:02X}:{(index >> 8) & 0xFF:02X}:{index & 0xFF:02X}:5A"


def states(recorder, accessory_topic):
    """The accessory's state objects in order, each with the time it was published."""
    topic = f"{BASE}/accessory/{accessory_topic}"
    found = []
    for line in recorder.lines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] == topic:
            try:
                found.append((float(parts[0]), json.loads(parts[2])))
            except ValueError:
                continue
    return found


def published(recorder, topic):
    """Every payload (parsed JSON, or the text) published on `topic`, in order."""
    found = []
    for line in recorder.lines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] == topic:
            try:
                found.append(json.loads(parts[2]))
            except ValueError:
                found.append(parts[2])
    return found
