"""Test only (ha/suite.py): Bluetooth scanners registered through Home Assistant's own API, as
ESPHome registers a Bluetooth proxy (`bluetooth.async_register_scanner` with a habluetooth
`BaseHaRemoteScanner`), and advertisements injected into them on demand, as a proxy's would
arrive. Nothing here touches the manager's filter: an injected advertisement goes the way a
proxy's goes, through the scanner's `_async_on_advertisement`.

Services (called over REST by the suite):
- add_scanner: source (a MAC-like id), name, area: the scanner, and a device of that name in
  that area with the source as its network address (how a proxy's device is found).
- inject: source, address, rssi, manufacturer_data (hex, company id little-endian first, as on
  air), service_data_fe2c (hex), repeat (copies, for the many-addresses fault).
- add_addresses: source, count: that many different addresses advertising something of no use.
- remove_scanner: source.
"""

from __future__ import annotations

import time

import voluptuous as vol
from habluetooth import BaseHaRemoteScanner

from homeassistant.components import bluetooth
from homeassistant.core import HomeAssistant, ServiceCall, callback
from homeassistant.helpers import area_registry as ar, device_registry as dr
import homeassistant.helpers.config_validation as cv

DOMAIN = "aabridge_test_scanners"
FAST_PAIR = "0000fe2c-0000-1000-8000-00805f9b34fb"
CONFIG_SCHEMA = cv.empty_config_schema(DOMAIN)


class TestScanner(BaseHaRemoteScanner):
    """A remote scanner whose advertisements the test hands it."""


async def async_setup(hass: HomeAssistant, config: dict) -> bool:
    scanners: dict[str, tuple[TestScanner, list]] = {}

    # On the event loop, as a proxy's advertisements arrive (a plain function would run in a thread).
    @callback
    def add_scanner(call: ServiceCall) -> None:
        source = call.data["source"].upper()
        if source in scanners:
            return
        scanner = TestScanner(source, call.data["name"], None, False)
        cancels = [bluetooth.async_register_scanner(hass, scanner), scanner.async_setup()]
        scanners[source] = (scanner, cancels)
        if area_name := call.data.get("area"):
            # The relay finds a scanner's area through its device (by network address), as it
            # finds an ESPHome proxy's. A device needs a config entry and this YAML integration
            # has none, so it is made under the relay's: only its connection and area count.
            area = ar.async_get(hass).async_get_or_create(area_name)
            entries = hass.config_entries.async_entries("aabridge_relay")
            if entries:
                devices = dr.async_get(hass)
                device = devices.async_get_or_create(
                    config_entry_id=entries[0].entry_id,
                    connections={(dr.CONNECTION_NETWORK_MAC, source.lower())},
                    name=call.data["name"])
                devices.async_update_device(device.id, area_id=area.id)

    @callback
    def inject(call: ServiceCall) -> None:
        scanner, _ = scanners[call.data["source"].upper()]
        manufacturer = {}
        if data := call.data.get("manufacturer_data"):
            raw = bytes.fromhex(data)
            manufacturer[int.from_bytes(raw[:2], "little")] = raw[2:]
        service = {}
        if data := call.data.get("service_data_fe2c"):
            service[FAST_PAIR] = bytes.fromhex(data)
        scanner._async_on_advertisement(
            call.data["address"].upper(), int(call.data.get("rssi", -60)), call.data.get("name"),
            list(service), service, manufacturer, None, {}, time.monotonic())

    @callback
    def add_addresses(call: ServiceCall) -> None:
        scanner, _ = scanners[call.data["source"].upper()]
        now = time.monotonic()
        for index in range(int(call.data["count"])):
            address = "C0:{:02X}:{:02X}:{:02X}:00:01".format(index >> 16 & 0xFF, index >> 8 & 0xFF, index & 0xFF)
            # A phone's or sensor's advertisement: nothing aabridge uses.
            scanner._async_on_advertisement(
                address, -80, None, [], {}, {0x0006: b"\x01\x09\x20\x02"}, None, {}, now)

    @callback
    def remove_scanner(call: ServiceCall) -> None:
        source = call.data["source"].upper()
        if source in scanners:
            _, cancels = scanners.pop(source)
            for cancel in cancels:
                cancel()

    hass.services.async_register(DOMAIN, "add_scanner", add_scanner, vol.Schema(
        {vol.Required("source"): str, vol.Required("name"): str, vol.Optional("area"): str}))
    hass.services.async_register(DOMAIN, "inject", inject, vol.Schema({
        vol.Required("source"): str, vol.Required("address"): str, vol.Optional("rssi"): int,
        vol.Optional("manufacturer_data"): str, vol.Optional("service_data_fe2c"): str, vol.Optional("name"): str}))
    hass.services.async_register(DOMAIN, "add_addresses", add_addresses, vol.Schema(
        {vol.Required("source"): str, vol.Required("count"): int}))
    hass.services.async_register(DOMAIN, "remove_scanner", remove_scanner, vol.Schema({vol.Required("source"): str}))
    return True
