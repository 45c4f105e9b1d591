"""The relay: polls every Home Assistant Bluetooth scanner's own history of advertisements and
publishes the new ones aabridge can use through Home Assistant's MQTT integration.

Why a poll of each scanner and not a callback: Home Assistant's Bluetooth manager drops Apple
advertisements other than iBeacon, HomeKit, Nearby and Find My before any callback or websocket
subscriber sees them (habluetooth `manager.py`, the Apple pre-filter), and forwards only the
strongest scanner's. Each scanner keeps its last advertisement per address before that filter,
with its own RSSI; Bermuda reads scanners the same way.

Cost: each poll walks each scanner's address -> time table once (a float comparison per
address); decoding, filtering and publishing happen only for the addresses whose advertisement
changed since the last poll. Everything runs on Home Assistant's event loop without blocking:
publishing is a task of its own, and a poll that finds the previous one still publishing keeps
only the newest advertisement per scanner and address for it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass, field
from datetime import timedelta

from habluetooth import get_manager

from homeassistant.components import bluetooth, mqtt
from homeassistant.core import CALLBACK_TYPE, HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import area_registry as ar, device_registry as dr
from homeassistant.helpers.event import async_track_time_interval

from . import frames
from .const import HEARTBEAT_SECONDS, MAXIMUM_PER_POLL, STALE_SECONDS, TOPIC_ROOT

_LOGGER = logging.getLogger(__package__)


@dataclass
class ScannerState:
    """What the relay remembers of one scanner."""

    node: str
    name: str
    area: str | None = None
    # Per address, the last advertisement looked at: its time (remote scanners) or the
    # advertisement object itself (local adapters keep no times; bleak makes a new object
    # for each advertisement).
    last: dict[str, object] = field(default_factory=dict)
    online: bool | None = None
    heartbeat_at: float = 0.0


@dataclass
class Figures:
    """What the relay did, for its diagnostics and the README's measurement."""

    polls: int = 0
    addresses_walked: int = 0
    advertisements_changed: int = 0
    forwarded: int = 0
    deferred: int = 0
    publish_failures: int = 0
    poll_seconds: float = 0.0


class Relay:
    """One relay per config entry (there is at most one)."""

    def __init__(self, hass: HomeAssistant, interval: float) -> None:
        self.hass = hass
        self.interval = interval
        self.scanners: dict[str, ScannerState] = {}
        self.figures = Figures()
        # Advertisements older than the relay itself are history (a restart's restored
        # scanners): aabridge needs what is heard now.
        self.started = time.monotonic()
        self._pending: dict[tuple[str, str], tuple[str, bytes, bool]] = {}
        self._publisher: asyncio.Task | None = None
        self._cancel: CALLBACK_TYPE | None = None
        # Causes already logged (at most once each until the relay works again).
        self._logged: set[str] = set()

    @callback
    def start(self) -> None:
        self._cancel = async_track_time_interval(
            self.hass, self._poll, timedelta(seconds=self.interval), name="aabridge relay poll", cancel_on_shutdown=True)

    async def stop(self) -> None:
        if self._cancel is not None:
            self._cancel()
            self._cancel = None
        if self._publisher is not None:
            self._publisher.cancel()
            self._publisher = None
        # The scanners are said offline so aabridge does not wait for silence to tell.
        for state in self.scanners.values():
            await self._publish_now(f"{TOPIC_ROOT}/{state.node}/LWT", b"offline", True)

    # ---- the poll ---------------------------------------------------------------------------

    @callback
    def _poll(self, _now=None) -> None:
        started = time.perf_counter()
        now = time.monotonic()
        try:
            scanners = _current_scanners(self.hass)
        except Exception as error:  # noqa: BLE001 - the bluetooth integration being reloaded
            self._once("scanners", "cannot list Home Assistant's Bluetooth scanners: %s", error)
            return
        present = set()
        budget = MAXIMUM_PER_POLL
        for scanner in scanners:
            present.add(scanner.source)
            state = self.scanners.get(scanner.source)
            if state is None:
                state = self._new_state(scanner)
            budget -= self._collect(scanner, state, now, budget)
            self._status(scanner, state, now)
        for source in [source for source in self.scanners if source not in present]:
            # Removed from Home Assistant (an ESPHome proxy deleted or its entry unloaded).
            state = self.scanners.pop(source)
            self._queue(state.node, "LWT", b"offline", True)
        self.figures.polls += 1
        self.figures.poll_seconds += time.perf_counter() - started
        if self._pending and (self._publisher is None or self._publisher.done()):
            self._publisher = self.hass.async_create_background_task(self._publish(), "aabridge relay publish")

    def _new_state(self, scanner) -> ScannerState:
        name = getattr(scanner, "adapter", None) or scanner.name
        if name == scanner.source:
            name = scanner.name
        node = frames.node_name(name, scanner.source)
        taken = {state.node for state in self.scanners.values()}
        if node in taken:
            node = frames.node_name(f"{name} {scanner.source}", scanner.source)
        state = ScannerState(node=node, name=name, area=self._area(scanner.source))
        self.scanners[scanner.source] = state
        return state

    def _area(self, source: str) -> str | None:
        """The Home Assistant area of the scanner's device (found by its Bluetooth or network
        address), for aabridge to suggest as the room."""
        devices = dr.async_get(self.hass)
        address = source.lower()
        device = devices.async_get_device(
            connections={(dr.CONNECTION_BLUETOOTH, source.upper()), (dr.CONNECTION_NETWORK_MAC, address)})
        if device is None or device.area_id is None:
            return None
        area = ar.async_get(self.hass).async_get_area(device.area_id)
        return area.name if area else None

    def _collect(self, scanner, state: ScannerState, now: float, budget: int) -> int:
        """Queues this scanner's new usable advertisements; returns how many."""
        last = state.last
        queued = 0
        timestamps = getattr(scanner, "discovered_device_timestamps", None)
        if timestamps is not None:
            # A remote scanner (ESPHome proxy, Shelly, the test's): a time per address.
            self.figures.addresses_walked += len(timestamps)
            for address, heard_at in timestamps.items():
                if last.get(address) == heard_at:
                    continue
                if queued >= budget:
                    self.figures.deferred += 1
                    continue
                last[address] = heard_at
                self.figures.advertisements_changed += 1
                if heard_at < self.started:
                    continue
                found = scanner.get_discovered_device_advertisement_data(address)
                if found is not None and self._queue_advertisement(state, address, found[1]):
                    queued += 1
            if len(last) > len(timestamps):
                for address in [address for address in last if address not in timestamps]:
                    del last[address]
            return queued
        # A local adapter: bleak's own table, no times; a new advertisement is a new object.
        table = scanner.discovered_devices_and_advertisement_data
        self.figures.addresses_walked += len(table)
        for address, (_device, advertisement) in table.items():
            if last.get(address) is advertisement:
                continue
            if queued >= budget:
                self.figures.deferred += 1
                continue
            first = address not in last
            last[address] = advertisement
            self.figures.advertisements_changed += 1
            if first and now - self.started < self.interval * 2:
                continue  # what the adapter knew before the relay started
            if self._queue_advertisement(state, address, advertisement):
                queued += 1
        if len(last) > len(table):
            for address in [address for address in last if address not in table]:
                del last[address]
        return queued

    def _queue_advertisement(self, state: ScannerState, address: str, advertisement) -> bool:
        manufacturer = advertisement.manufacturer_data
        service = advertisement.service_data
        if not frames.usable(manufacturer, service):
            return False
        message = frames.payload(
            address, advertisement.rssi, manufacturer, service, advertisement.local_name, advertisement.tx_power,
            state.name, state.area)
        self._queue(state.node, f"BTtoMQTT/{frames.topic_address(address)}", _json(message), False)
        self.figures.forwarded += 1
        return True

    def _status(self, scanner, state: ScannerState, now: float) -> None:
        """`online` once a heartbeat, `offline` when the scanner has heard nothing for a while."""
        try:
            quiet = scanner.time_since_last_detection()
        except Exception:  # noqa: BLE001 - a scanner of another kind
            quiet = 0.0
        online = quiet < STALE_SECONDS
        if online != state.online or now - state.heartbeat_at >= HEARTBEAT_SECONDS:
            # An area given to the scanner's device later is picked up with the heartbeat.
            state.area = self._area(scanner.source)
            state.online = online
            state.heartbeat_at = now
            self._queue(state.node, "LWT", b"online" if online else b"offline", True)

    def _queue(self, node: str, suffix: str, payload: bytes, retain: bool) -> None:
        # Keyed by topic: a newer advertisement of the same address replaces one not yet sent.
        self._pending[(node, suffix)] = (f"{TOPIC_ROOT}/{node}/{suffix}", payload, retain)

    # ---- publishing -------------------------------------------------------------------------

    async def _publish(self) -> None:
        while self._pending:
            batch = self._pending
            self._pending = {}
            for topic, payload, retain in batch.values():
                if not await self._publish_now(topic, payload, retain):
                    # MQTT is down: what waits is dropped (newer advertisements will follow),
                    # the heartbeats are said again once it is back.
                    for state in self.scanners.values():
                        state.heartbeat_at = 0.0
                    self._pending.clear()
                    return

    async def _publish_now(self, topic: str, payload: bytes, retain: bool) -> bool:
        try:
            await mqtt.async_publish(self.hass, topic, payload, qos=0, retain=retain)
        except (HomeAssistantError, OSError, ValueError, KeyError) as error:
            self.figures.publish_failures += 1
            self._once("mqtt", "cannot publish to MQTT (%s); the relay retries every poll", error)
            return False
        if self._logged:
            _LOGGER.info("publishing again")
            self._logged.clear()
        return True

    def _once(self, cause: str, message: str, *arguments) -> None:
        """A warning once per cause, until the relay works again."""
        if cause in self._logged:
            return
        self._logged.add(cause)
        _LOGGER.warning(message, *arguments)

    def diagnostics(self) -> dict:
        return {
            "interval": self.interval,
            "scanners": {
                source: {"node": s.node, "name": s.name, "area": s.area, "online": s.online, "addresses": len(s.last)}
                for source, s in self.scanners.items()
            },
            "figures": self.figures.__dict__,
        }


def _current_scanners(hass: HomeAssistant) -> list:
    """Every scanner Home Assistant has: its own `async_current_scanners` where the release has
    it (later than 2025.4), else habluetooth's manager's, which Home Assistant's is."""
    current = getattr(bluetooth, "async_current_scanners", None)
    if current is not None:
        return current(hass)
    return get_manager().async_current_scanners()


def _json(message: dict) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()
