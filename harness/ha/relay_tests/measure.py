"""The relay's poll cost on this machine, outside Home Assistant but with habluetooth's own
remote scanner (the numbers in custom_components/aabridge_relay/README.md):

    .build/homeassistant/bin/python ha/relay_tests/measure.py

A poll over scanners whose addresses did not change (the steady state), and one where every
address of one scanner brought a new usable advertisement (publishing replaced by a list).
"""

import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import conftest  # noqa: E402,F401
from test_relay import IN_EAR, FakeHass, Scanner, advertise  # noqa: E402

from aabridge_relay import relay as relay_module  # noqa: E402
from aabridge_relay.relay import Relay  # noqa: E402


async def main():
    published = []

    async def publish(hass, topic, payload, qos=0, retain=False):
        published.append(topic)

    relay_module.mqtt.async_publish = publish
    Relay._area = lambda self, source: None
    scanners = [Scanner(f"AA:00:00:00:00:{n:02X}", f"proxy {n}", None, False) for n in range(4)]
    relay_module._current_scanners = lambda hass: scanners
    hass = FakeHass()
    relay = Relay(hass, 1.0)
    for scanner in scanners:
        for index in range(2500):
            advertise(scanner, f"C0:00:{index >> 8:02X}:{index & 0xFF:02X}:00:01", b"\x01\x02", company=0x0006)
    relay._poll()
    await asyncio.gather(*hass.tasks)
    rounds = 50
    started = time.perf_counter()
    for _ in range(rounds):
        relay._poll()
    steady = (time.perf_counter() - started) / rounds
    print(f"steady poll, 4 scanners x 2500 addresses: {steady * 1e3:.3f} ms ({steady / 10000 * 1e9:.0f} ns per address)")
    for index in range(500):
        advertise(scanners[0], f"F0:00:00:00:{index >> 8:02X}:{index & 0xFF:02X}", IN_EAR)
    started = time.perf_counter()
    relay._poll()
    await asyncio.gather(*hass.tasks)
    burst = time.perf_counter() - started - steady
    print(f"500 new proximity-pairing advertisements: {burst * 1e3:.2f} ms more ({burst / 500 * 1e6:.1f} µs each, "
          f"published {len(published)})")


asyncio.run(main())
