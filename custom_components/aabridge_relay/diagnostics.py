"""Diagnostics (Settings > Devices & services > aabridge relay > Download diagnostics): each
scanner's node and area and the relay's figures, for a support question or a measurement."""

from __future__ import annotations

from homeassistant.config_entries import ConfigEntry
from homeassistant.core import HomeAssistant


async def async_get_config_entry_diagnostics(hass: HomeAssistant, entry: ConfigEntry) -> dict:
    return entry.runtime_data.diagnostics()
