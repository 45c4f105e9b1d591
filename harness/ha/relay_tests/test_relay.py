"""The relay's poll against scanners of habluetooth's own kinds, without a running Home
Assistant: what it forwards (each new advertisement once, only usable ones), what it says of
scanners that go, and that a failing MQTT is said once."""

import asyncio
import functools
import time
from types import SimpleNamespace

import pytest
from habluetooth import BaseHaRemoteScanner, BluetoothManager, set_manager

from aabridge_relay import relay as relay_module
from aabridge_relay.relay import Relay

def asynchronous(test):
    """Runs an async test in its own loop (no pytest plugin needed)."""
    @functools.wraps(test)
    def run(*arguments, **keywords):
        return asyncio.run(test(*arguments, **keywords))
    return run


IN_EAR = bytes.fromhex("0719010e202a850600000a7d9fff27234873d4305e0fed1b39e2b8")


class Scanner(BaseHaRemoteScanner):
    pass


class Manager(BluetoothManager):
    """habluetooth's manager, set up no further: a scanner needs one to be made, and hands it
    each advertisement after keeping it (where Home Assistant's filters; nothing here)."""

    def scanner_adv_received(self, service_info):
        pass


set_manager(Manager())


class FakeHass:
    """What the relay uses of Home Assistant: background tasks."""

    def __init__(self):
        self.tasks = []

    def async_create_background_task(self, coroutine, name):
        task = asyncio.get_running_loop().create_task(coroutine)
        self.tasks.append(task)
        return task


@pytest.fixture
def world(monkeypatch):
    published = []
    state = SimpleNamespace(scanners=[], fail=None, published=published)

    async def publish(hass, topic, payload, qos=0, retain=False):
        if state.fail:
            raise state.fail
        published.append((topic, payload, retain))

    monkeypatch.setattr(relay_module, "_current_scanners", lambda hass: state.scanners)
    monkeypatch.setattr(relay_module.mqtt, "async_publish", publish)
    monkeypatch.setattr(Relay, "_area", lambda self, source: "Living room")
    return state


def advertise(scanner, address, data=IN_EAR, rssi=-50, company=0x004C):
    scanner._async_on_advertisement(address, rssi, None, [], {}, {company: data}, None, {}, time.monotonic())


async def poll(relay, hass):
    relay._poll()
    await asyncio.gather(*hass.tasks)
    hass.tasks.clear()


def topics(world):
    return [topic for topic, _, _ in world.published]


@asynchronous
async def test_each_new_advertisement_once(world):
    hass = FakeHass()
    relay = Relay(hass, 1.0)
    scanner = Scanner("AA:00:00:00:00:01", "Living room proxy", None, False)
    world.scanners = [scanner]
    advertise(scanner, "F1:E2:D3:C4:B5:A6")
    advertise(scanner, "11:22:33:44:55:66", b"\x01\x02", company=0x0006)
    await poll(relay, hass)
    assert topics(world) == ["aabridge_relay/living_room_proxy/BTtoMQTT/F1E2D3C4B5A6", "aabridge_relay/living_room_proxy/LWT"]
    world.published.clear()
    await poll(relay, hass)
    assert world.published == []
    advertise(scanner, "F1:E2:D3:C4:B5:A6", rssi=-60)
    await poll(relay, hass)
    assert len(world.published) == 1 and b'"rssi":-60' in world.published[0][1]


@asynchronous
async def test_history_from_before_the_relay_is_not_forwarded(world):
    hass = FakeHass()
    scanner = Scanner("AA:00:00:00:00:01", "Living room proxy", None, False)
    advertise(scanner, "F1:E2:D3:C4:B5:A6")
    relay = Relay(hass, 1.0)
    world.scanners = [scanner]
    await poll(relay, hass)
    assert topics(world) == ["aabridge_relay/living_room_proxy/LWT"]


@asynchronous
async def test_a_removed_scanner_is_said_offline(world):
    hass = FakeHass()
    relay = Relay(hass, 1.0)
    world.scanners = [Scanner("AA:00:00:00:00:01", "Living room proxy", None, False)]
    await poll(relay, hass)
    world.published.clear()
    world.scanners = []
    await poll(relay, hass)
    assert world.published == [("aabridge_relay/living_room_proxy/LWT", b"offline", True)]
    assert relay.scanners == {}


@asynchronous
async def test_two_scanners_of_one_name_get_two_nodes(world):
    hass = FakeHass()
    relay = Relay(hass, 1.0)
    world.scanners = [Scanner("AA:00:00:00:00:01", "proxy", None, False), Scanner("AA:00:00:00:00:02", "proxy", None, False)]
    await poll(relay, hass)
    assert sorted(state.node for state in relay.scanners.values()) == ["proxy", "proxy_aa_00_00_00_00_02"]


@asynchronous
async def test_thousands_of_addresses_cost_a_walk_and_forward_nothing(world):
    hass = FakeHass()
    relay = Relay(hass, 1.0)
    scanner = Scanner("AA:00:00:00:00:01", "Living room proxy", None, False)
    world.scanners = [scanner]
    for index in range(5000):
        advertise(scanner, f"C0:00:{index >> 8:02X}:{index & 0xFF:02X}:00:01", b"\x01\x02", company=0x0006)
    await poll(relay, hass)
    assert topics(world) == ["aabridge_relay/living_room_proxy/LWT"]
    assert relay.figures.advertisements_changed == 5000
    await poll(relay, hass)
    assert relay.figures.advertisements_changed == 5000  # nothing new: nothing looked at again


@asynchronous
async def test_a_failing_mqtt_is_said_once_and_recovers(world, caplog):
    from homeassistant.exceptions import HomeAssistantError

    hass = FakeHass()
    relay = Relay(hass, 1.0)
    scanner = Scanner("AA:00:00:00:00:01", "Living room proxy", None, False)
    world.scanners = [scanner]
    world.fail = HomeAssistantError("MQTT is not connected")
    for _ in range(3):
        advertise(scanner, "F1:E2:D3:C4:B5:A6")
        await poll(relay, hass)
    assert sum("cannot publish to MQTT" in r.message for r in caplog.records) == 1
    world.fail = None
    advertise(scanner, "F1:E2:D3:C4:B5:A6")
    await poll(relay, hass)
    assert "aabridge_relay/living_room_proxy/BTtoMQTT/F1E2D3C4B5A6" in topics(world)
    assert "aabridge_relay/living_room_proxy/LWT" in topics(world)  # the heartbeat said again


class LocalAdapter:
    """A local adapter as habluetooth's HaScanner shows it: bleak's table of (device,
    advertisement) per address, no time per address, a new advertisement object each time."""

    def __init__(self, source, name):
        self.source = source
        self.adapter = name
        self.name = name
        self.discovered_devices_and_advertisement_data = {}

    def hear(self, address, data, rssi=-50):
        advertisement = SimpleNamespace(
            manufacturer_data={0x004C: data}, service_data={}, local_name=None, tx_power=None, rssi=rssi)
        self.discovered_devices_and_advertisement_data[address] = (SimpleNamespace(address=address), advertisement)

    def time_since_last_detection(self):
        return 1.0


@asynchronous
async def test_a_local_adapter_by_its_advertisement_objects(world):
    hass = FakeHass()
    relay = Relay(hass, 1.0)
    adapter = LocalAdapter("00:1A:7D:DA:71:13", "hci0")
    adapter.hear("F1:E2:D3:C4:B5:A6", IN_EAR)
    world.scanners = [adapter]
    await poll(relay, hass)
    # What the adapter held when the relay started is not forwarded.
    assert topics(world) == ["aabridge_relay/hci0/LWT"]
    world.published.clear()
    relay.started -= 10  # later on
    await poll(relay, hass)
    assert world.published == []
    adapter.hear("F1:E2:D3:C4:B5:A6", IN_EAR, rssi=-61)
    adapter.hear("11:22:33:44:55:66", b"\x10\x02\x01\x02")  # Nearby Info: of no use
    await poll(relay, hass)
    assert topics(world) == ["aabridge_relay/hci0/BTtoMQTT/F1E2D3C4B5A6"]
    del adapter.discovered_devices_and_advertisement_data["F1:E2:D3:C4:B5:A6"]
    await poll(relay, hass)
    assert "F1:E2:D3:C4:B5:A6" not in relay.scanners["00:1A:7D:DA:71:13"].last
