"""The relay's configuration: one entry, no YAML; the poll interval is its one option."""

from __future__ import annotations

import voluptuous as vol

from homeassistant.config_entries import ConfigEntry, ConfigFlow, ConfigFlowResult, OptionsFlow
from homeassistant.core import callback

from .const import CONF_INTERVAL, DEFAULT_INTERVAL, DOMAIN, MAXIMUM_INTERVAL, MINIMUM_INTERVAL


def _schema(default: float) -> vol.Schema:
    return vol.Schema({
        vol.Required(CONF_INTERVAL, default=default): vol.All(
            vol.Coerce(float), vol.Range(min=MINIMUM_INTERVAL, max=MAXIMUM_INTERVAL)),
    })


class RelayConfigFlow(ConfigFlow, domain=DOMAIN):
    VERSION = 1

    async def async_step_user(self, user_input=None) -> ConfigFlowResult:
        if self._async_current_entries():
            return self.async_abort(reason="single_instance_allowed")
        if "mqtt" not in self.hass.config.components:
            return self.async_abort(reason="mqtt_required")
        if user_input is not None:
            return self.async_create_entry(title="aabridge relay", data={}, options=user_input)
        return self.async_show_form(step_id="user", data_schema=_schema(DEFAULT_INTERVAL))

    @staticmethod
    @callback
    def async_get_options_flow(config_entry: ConfigEntry) -> OptionsFlow:
        return RelayOptionsFlow()


class RelayOptionsFlow(OptionsFlow):
    async def async_step_init(self, user_input=None) -> ConfigFlowResult:
        if user_input is not None:
            return self.async_create_entry(data=user_input)
        current = self.config_entry.options.get(CONF_INTERVAL, DEFAULT_INTERVAL)
        return self.async_show_form(step_id="init", data_schema=_schema(current))
