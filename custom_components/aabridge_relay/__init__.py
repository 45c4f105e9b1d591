"""aabridge relay: forwards what Home Assistant's Bluetooth scanners hear of AirPods, Beats and
Fast Pair headphones to aabridge over MQTT (README.md in this folder, docs/operations.md)."""

from __future__ import annotations

from homeassistant.components import mqtt
from homeassistant.config_entries import ConfigEntry
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ConfigEntryNotReady

from .const import CONF_INTERVAL, DEFAULT_INTERVAL
from .relay import Relay


async def async_setup_entry(hass: HomeAssistant, entry: ConfigEntry) -> bool:
    # Home Assistant retries the entry later (with its own backoff) while MQTT is not up yet.
    if not await mqtt.async_wait_for_mqtt_client(hass):
        raise ConfigEntryNotReady("Home Assistant's MQTT integration is not available")
    interval = float(entry.options.get(CONF_INTERVAL, entry.data.get(CONF_INTERVAL, DEFAULT_INTERVAL)))
    relay = Relay(hass, interval)
    entry.runtime_data = relay
    relay.start()
    entry.async_on_unload(entry.add_update_listener(_options_changed))
    return True


async def async_unload_entry(hass: HomeAssistant, entry: ConfigEntry) -> bool:
    await entry.runtime_data.stop()
    return True


async def _options_changed(hass: HomeAssistant, entry: ConfigEntry) -> None:
    await hass.config_entries.async_reload(entry.entry_id)
