"""The real-Home-Assistant suite: aabridge's discovery and controls as Home Assistant's own MQTT
integration sees them, driven only through Home Assistant's REST and websocket API.

    python ha/suite.py --bridge .build/release/aabridge [--mode open|acl|both] [--work DIR]

Runs once on an open broker and once behind the shipped docker/mosquitto.conf and
docker/mosquitto.acl with password users (`--mode both`, the default). Exit 0 when every check
passes. scripts/ha-test makes the venv and calls this with its Python.
"""

import argparse
import asyncio
import datetime
import json
import re
import shutil
import sys
import time
import traceback
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parent.parent)]

from hass import HomeAssistant, HomeAssistantError, check_config  # noqa: E402
import relay_checks  # noqa: E402
from stack import (ALICE, AVAILABILITY_S, BOB, GATEWAY, IN_CASE, IN_EAR, IPHONE, NEW, PHONE, PICKER_TIMEOUT_S,  # noqa: E402
                   ROOM, ROOT, Bridge, Broker, Client)

DOC = ROOT / "docs" / "home-assistant.md"
BLUEPRINTS = ROOT / "config" / "homeassistant" / "blueprints"

PLACEMENTS = {"inEar", "onHead", "overTheEar", "offHead"}


def number(low, high):
    def check(state):
        try:
            return low <= float(state["state"]) <= high
        except ValueError:
            return False
    check.__doc__ = f"a number {low}..{high}"
    return check


def equals(value, **attributes):
    """The state is `value` and each named attribute has its value."""
    def check(state):
        return state["state"] == value and all(state["attributes"].get(k) == v for k, v in attributes.items())
    check.__doc__ = repr(value) + (f" with {attributes}" if attributes else "")
    return check


def one_of(*values):
    def check(state):
        return state["state"] in values
    check.__doc__ = f"one of {values}"
    return check


def pressable(state):
    return state["state"] != "unavailable"


pressable.__doc__ = "available (a button's or event's state is the time of its last press or event, unknown before one)"

# Every entity docs/home-assistant.md documents, with the state it must have in the suite's
# stack: Alice's AirPods (migrated, registered by auto_register, heard by the gateway `kitchen`
# in the ear, batteries decoded) and the bridge. `doc` is the id as the doc writes it (for
# Alice's AirPods and the default base topic); `entity` the one checked here when it differs
# (an entity only another product has: Bob's Acme headphones ask for a confirmation).
#
# The doc's tables and this list must name the same entities: `documented_entities()` reads the
# tables and the suite fails on any difference, so a row added to the doc needs a line here and
# the other way round. To add the entities of another issue, add one line per entity id.
ENTITIES = [
    # ---- the accessory: sensors ---------------------------------------------------------------
    dict(doc="sensor.alice_s_airpods_placement", check=equals("inEar")),
    dict(doc="binary_sensor.alice_s_airpods_worn", check=equals("on")),
    dict(doc="sensor.alice_s_airpods_primary_source", check=equals("none")),
    dict(doc="sensor.alice_s_airpods_secondary_source", check=equals("none")),
    dict(doc="sensor.alice_s_airpods_routed_sources", check=equals("0", routes=[])),
    dict(doc="event.alice_s_airpods_decision", check=pressable),
    dict(doc="sensor.alice_s_airpods_registration", check=equals("active")),
    dict(doc="sensor.alice_s_airpods_battery_left", check=equals("50")),
    dict(doc="sensor.alice_s_airpods_battery_right", check=equals("80")),
    dict(doc="sensor.alice_s_airpods_battery_case", check=equals("60")),
    # Charging as the advertisement's flags say (issue 31); which way depends on the frame.
    dict(doc="binary_sensor.alice_s_airpods_battery_left_charging", check=one_of("on", "off")),
    dict(doc="binary_sensor.alice_s_airpods_battery_right_charging", check=one_of("on", "off")),
    dict(doc="binary_sensor.alice_s_airpods_battery_case_charging", check=one_of("on", "off")),
    dict(doc="sensor.alice_s_airpods_rssi", check=number(-100, 0)),
    dict(doc="sensor.alice_s_airpods_room", check=equals(ROOM)),
    dict(doc="device_tracker.alice_s_airpods",
         check=equals("home", source_type="bluetooth_le", room=ROOM, gateway=GATEWAY)),
    dict(doc="sensor.alice_s_airpods_address", check=equals(ALICE, identity="address", irk=False, encryption_key=False)),
    dict(doc="sensor.alice_s_airpods_identity", check=equals("address")),
    dict(doc="sensor.alice_s_airpods_last_error", check=equals("none")),
    # ---- the accessory: controls --------------------------------------------------------------
    dict(doc="text.alice_s_airpods_name", check=equals("Alice's AirPods")),
    dict(doc="button.alice_s_airpods_remove", check=pressable),
    # Migrated accessories are authorized: the button is there and unavailable.
    dict(doc="button.alice_s_airpods_authorize", entity="button.bob_s_headphones_authorize", check=equals("unavailable")),
    dict(doc="button.alice_s_airpods_register", check=pressable),
    dict(doc="button.alice_s_airpods_invalidate_registration", check=pressable),
    dict(doc="select.alice_s_airpods_home_source", check=equals("(none)")),
    dict(doc="text.alice_s_airpods_home_source_address", check=equals("")),
    dict(doc="text.alice_s_airpods_alias", check=equals("")),
    # Head tracking (issue 52): registered with headTracking by auto_register, the session inactive.
    dict(doc="switch.alice_s_airpods_head_tracking", check=equals("off")),
    dict(doc="text.alice_s_airpods_irk", check=equals("")),
    dict(doc="text.alice_s_airpods_encryption_key", check=equals("")),
    # Found again after a night (issue 30): its model is decoded, no look-alike is heard.
    dict(doc="select.alice_s_airpods_look_alike", check=equals("(none)", options=["(none)"])),
    dict(doc="button.alice_s_airpods_re_attach", check=pressable),
    # ---- the bridge ---------------------------------------------------------------------------
    dict(doc="binary_sensor.aabridge_connection", check=equals("on")),
    dict(doc="button.aabridge_show_picker", check=pressable),
    dict(doc="sensor.aabridge_picker", check=equals("idle")),
    dict(doc="sensor.aabridge_setup_session", check=equals("activated")),
    dict(doc="sensor.aabridge_accessories", check=equals("2")),
    dict(doc="button.aabridge_dismiss_picker", check=pressable),
    dict(doc="select.aabridge_candidate", check=equals("(none)", options=["(none)"])),
    dict(doc="text.aabridge_name_to_give", check=equals("")),
    dict(doc="button.aabridge_pair", check=pressable),
    dict(doc="text.aabridge_name_a_source", check=equals("")),
    dict(doc="sensor.aabridge_last_request", check=one_of("unknown", "ok")),
    # The gateway that hears Alice's AirPods (issue 32): it carries manufacturer data.
    dict(doc="sensor.aabridge_gateway_kitchen", check=equals("ok")),
]


def documented_entities(text):
    """The entity ids of docs/home-assistant.md's entity tables (`sensor.x` cells; a cell's
    `(_battery_left, ...)` variants are the first id with that ending instead of its last part)."""
    ids = []
    for line in text.splitlines():
        if not line.startswith("| `"):
            continue
        cell = line.split("|")[1]
        tokens = re.findall(r"`([^`]+)`", cell)
        first = None
        for token in tokens:
            if re.fullmatch(r"[a-z_]+\.[a-z0-9_]+", token):
                ids.append(token)
                first = first or token
            elif re.fullmatch(r"_[a-z0-9_]+", token) and first:
                domain, rest = first.split(".", 1)
                slug = "alice_s_airpods" if rest.startswith("alice_s_airpods") else "aabridge"
                ids.append(f"{domain}.{slug}{token}")
        if first and (first.endswith("_battery") or first.endswith("_battery_charging")) and first in ids:
            ids.remove(first)  # only the left/right/case forms exist for AirPods
    return ids


class Failure(Exception):
    pass


class Suite:
    def __init__(self, args, mode):
        self.args = args
        self.mode = mode
        self.acl = mode == "acl"
        self.work = Path(args.work) / mode
        self.passes = 0
        self.failures = []
        self.timings = {}

    def log(self, text):
        print(f"  [{self.mode}] {text}", flush=True)

    def ok(self, what):
        self.passes += 1
        print(f"ok [{self.mode}]: {what}", flush=True)

    def fail(self, what):
        self.failures.append(what)
        print(f"FAIL [{self.mode}]: {what}", flush=True)

    def expect(self, condition, what):
        if condition:
            self.ok(what)
        else:
            self.fail(what)
        return condition

    async def step(self, name, coroutine):
        """Runs one part of the suite; a failure there is recorded and the next part runs."""
        if self.args.only and not any(part in name for part in self.args.only):
            coroutine.close()
            return
        started = time.monotonic()
        try:
            await coroutine
        except (Failure, HomeAssistantError, AssertionError, asyncio.TimeoutError) as error:
            self.fail(f"{name}: {error}")
        except Exception:
            self.fail(f"{name}: {traceback.format_exc()}")
        self.timings[name] = round(time.monotonic() - started, 1)

    # ---- the stack -------------------------------------------------------------------------------

    async def run(self):
        if self.work.exists():
            shutil.rmtree(self.work)
        self.broker = Broker(self.work / "broker", self.acl, self.log)
        self.broker.start()
        # The test's own clients: a gateway (its telemetry), the bridge's user to watch everything
        # the bridge owns, and (behind the ACL) Home Assistant's user, to see what it may read.
        self.gateway = Client(self.broker, GATEWAY, "gateway")
        self.observer = Client(self.broker, "aabridge", "observer", ["aabridge/#", "homeassistant/#"])
        self.ha_reader = Client(self.broker, "homeassistant", "ha-reader", ["aabridge/#", "#"]) if self.acl else None
        self.bridge = Bridge(self.args.bridge, self.work / "bridge", self.broker, self.log)
        self.bridge.start()
        self.hass = HomeAssistant(self.args.python, self.work / "homeassistant", self.log)
        self.hass.write_configuration()
        self.copy_blueprints()
        relay_checks.install(self.work / "homeassistant")
        self.relay = None
        self.hearing = True
        heard = asyncio.create_task(self.hear())
        try:
            started = time.monotonic()
            await self.hass.start()
            await self.hass.onboard()
            user, password = self.broker.credentials("homeassistant")
            await self.hass.setup_mqtt(self.broker.port, user, password)
            self.timings["start and set up Home Assistant"] = round(time.monotonic() - started, 1)
            await self.step("entities", self.entities())
            await self.step("keys", self.keys())
            await self.step("home source", self.home_source())
            await self.step("pairing, rename, remove", self.pairing())
            self.relay = relay_checks.RelayChecks(self)
            await self.step("the relay: Home Assistant's scanners", self.relay.run())
            await self.step("the relay: faults", self.relay.faults())
            await self.step("the other controls", self.controls())
            await self.step("presence", self.presence())
            await self.step("automation blueprints", self.automation_blueprints())
            await self.step("script blueprints", self.script_blueprints())
            await self.step("Home Assistant restart", self.restart())
            await self.step("the relay after Home Assistant's restart", self.relay.after_restart())
            await self.step("ACL: what Home Assistant's user reads", self.reads())
            await self.step("check_config", self.check_config())
            await self.step("the mqtt logger", self.mqtt_log())
            await self.step("automation errors", self.automation_log())
            # Last: it takes Home Assistant's MQTT away for a while.
            await self.step("the relay: MQTT outage in Home Assistant", self.relay.mqtt_outage())
        finally:
            heard.cancel()
            if self.relay:
                self.relay.close()
            await self.hass.close()
            self.bridge.stop()
            for client in (self.gateway, self.observer, self.ha_reader):
                if client:
                    client.close()
            self.broker.stop()
        if self.failures:
            print(f"--- [{self.mode}] aabridge output (last 40 lines)")
            print("\n".join(self.bridge.output().splitlines()[-40:]))
        return not self.failures

    def copy_blueprints(self):
        """The shipped blueprints copied into Home Assistant's configuration, as the doc's manual
        import does (`<config>/blueprints/automation/aabridge/`)."""
        for kind in ("automation", "script"):
            source = BLUEPRINTS / kind / "aabridge"
            if source.exists():
                shutil.copytree(source, self.work / "homeassistant" / "blueprints" / kind / "aabridge")

    def advertise(self, address, data=IN_EAR):
        payload = json.dumps({"id": address, "mac_type": 1, "manufacturerdata": data, "rssi": -55})
        self.gateway.publish(f"home/{GATEWAY}/BTtoMQTT/{address.replace(':', '')}", payload)

    async def hear(self):
        """The gateway hears Alice's AirPods every second (while `hearing`)."""
        while True:
            if self.hearing:
                await asyncio.get_running_loop().run_in_executor(None, self.advertise, ALICE)
            await asyncio.sleep(1)

    def topic_id(self, address):
        return address.replace(":", "")

    async def last_request(self, after, request):
        """Waits for `sensor.aabridge_last_request` to show an outcome of `request` newer than `after`."""
        return await self.hass.wait_state(
            "sensor.aabridge_last_request",
            lambda s: s["attributes"].get("request") == request and s["attributes"].get("at", "") > after,
            what=f"an outcome of {request}")

    async def now_at(self):
        """The time of the last response, as the Last request sensor's `at` compares."""
        state = await self.hass.state("sensor.aabridge_last_request")
        return (state or {}).get("attributes", {}).get("at") or ""

    # ---- checks --------------------------------------------------------------------------------

    async def entities(self):
        documented = documented_entities(DOC.read_text())
        listed = [entry["doc"] for entry in ENTITIES]
        self.expect(sorted(set(documented) - set(listed)) == [],
                    f"every entity of docs/home-assistant.md is in ENTITIES (missing: {sorted(set(documented) - set(listed))})")
        self.expect(sorted(set(listed) - set(documented)) == [],
                    f"every entity of ENTITIES is in docs/home-assistant.md (missing there: {sorted(set(listed) - set(documented))})")
        await self.check_entities("after discovery")

    async def check_entities(self, when, timeout=60):
        deadline = time.monotonic() + timeout
        pending = list(ENTITIES)
        states = {}
        while pending and time.monotonic() < deadline:
            states = await self.hass.states()
            pending = [e for e in pending if not self.satisfied(e, states)]
            if pending:
                await asyncio.sleep(0.5)
        for entry in ENTITIES:
            entity = entry.get("entity", entry["doc"])
            state = states.get(entity)
            self.expect(entry not in pending,
                        f"{when}: {entity} is {entry['check'].__doc__}"
                        + ("" if entry not in pending else f" (is: {state and (state['state'], state['attributes'])})"))

    @staticmethod
    def satisfied(entry, states):
        state = states.get(entry.get("entity", entry["doc"]))
        try:
            return state is not None and entry["check"](state)
        except (KeyError, TypeError):
            return False

    async def keys(self):
        """An IRK typed into Home Assistant's text is set, and never becomes an HA state."""
        irk = "0123456789abcdef0123456789abcdef"
        key_topic = f"aabridge/accessory/{self.topic_id(ALICE)}"
        await self.hass.call("text", "set_value", {"entity_id": "text.alice_s_airpods_irk", "value": irk})
        await self.hass.wait_state("sensor.alice_s_airpods_address", lambda s: s["attributes"]["irk"] is True,
                                   what="irk: true")
        self.ok("an IRK typed into text.alice_s_airpods_irk is set (the Address sensor's irk attribute)")
        await asyncio.sleep(1)
        states = await self.hass.states()
        self.expect(states["text.alice_s_airpods_irk"]["state"] == "", "the IRK text's state stays empty")
        self.expect(irk not in json.dumps(states).lower(), "the IRK is in no Home Assistant state or attribute")
        self.expect(not any(irk in m[1].decode(errors="replace").lower() for m in self.observer.messages
                            if not m[0].startswith("aabridge/bridge/request/")),
                    "the IRK is on no topic but the request's")
        self.expect(self.observer.wait(lambda m: m[0] == key_topic and b'"irk":true' in m[1], 5) is not None,
                    "the accessory's state says irk: true")
        await self.hass.call("text", "set_value", {"entity_id": "text.alice_s_airpods_irk", "value": ""})
        await self.hass.wait_state("sensor.alice_s_airpods_address", lambda s: s["attributes"]["irk"] is False,
                                   what="irk: false")
        self.ok("an empty IRK text deletes the key")

    async def home_source(self):
        await self.hass.call("select", "select_option",
                             {"entity_id": "select.alice_s_airpods_home_source", "option": "Alice's iPhone"})
        await self.hass.wait_state("select.alice_s_airpods_home_source", lambda s: s["state"] == "Alice's iPhone",
                                   what="Alice's iPhone")
        await self.hass.wait_state("text.alice_s_airpods_home_source_address", lambda s: s["state"] == PHONE,
                                   what=PHONE)
        await self.hass.wait_state("sensor.alice_s_airpods_primary_source", lambda s: s["state"] == PHONE,
                                   what=f"{PHONE} (an available accessory with no connected source takes it)")
        self.ok("Home source select: Alice's iPhone becomes the home source and the primary source")
        await self.hass.call("select", "select_option",
                             {"entity_id": "select.alice_s_airpods_home_source", "option": "(none)"})
        await self.hass.wait_state("select.alice_s_airpods_home_source", lambda s: s["state"] == "(none)",
                                   what="(none)")
        await self.hass.wait_state("text.alice_s_airpods_home_source_address", lambda s: s["state"] == "", what="empty")
        self.ok("Home source select: (none) clears the home sources")

    async def pairing(self):
        before = await self.now_at()
        await self.hass.call("button", "press", {"entity_id": "button.aabridge_show_picker"})
        picker = await self.hass.wait_state("sensor.aabridge_picker", lambda s: s["state"] == "presented", what="presented")
        expires = datetime.datetime.fromisoformat(picker["attributes"]["expires_at"].replace("Z", "+00:00"))
        left = (expires - datetime.datetime.now(datetime.timezone.utc)).total_seconds()
        self.expect(PICKER_TIMEOUT_S - 15 <= left <= PICKER_TIMEOUT_S + 1,
                    f"Show picker presents it for homeassistant.picker_timeout_s ({PICKER_TIMEOUT_S} s; expires in {left:.0f} s)")
        await self.last_request(before, "picker/show")
        self.advertise(NEW)
        label = f"AirPods Pro ({NEW})"
        await self.hass.wait_state("select.aabridge_candidate", lambda s: label in s["attributes"]["options"],
                                   what=f"the option {label}")
        self.ok(f"the candidate is an option of select.aabridge_candidate ({label})")
        await self.hass.call("select", "select_option", {"entity_id": "select.aabridge_candidate", "option": label})
        await self.hass.wait_state("select.aabridge_candidate", lambda s: s["state"] == label, what=label)
        await self.hass.call("text", "set_value", {"entity_id": "text.aabridge_name_to_give", "value": "Kitchen AirPods"})
        await self.hass.wait_state("text.aabridge_name_to_give", lambda s: s["state"] == "Kitchen AirPods",
                                   what="Kitchen AirPods")
        self.ok("Candidate and Name to give fill in the pairing form (bridge/pairing/set)")
        before = await self.now_at()
        await self.hass.call("button", "press", {"entity_id": "button.aabridge_pair"})
        outcome = await self.last_request(before, "picker/select")
        self.expect(outcome["state"] == "ok", f"Pair: picker/select answered ok (is {outcome['state']})")
        await self.hass.wait_state("text.kitchen_airpods_name", lambda s: s["state"] == "Kitchen AirPods",
                                   what="the new accessory's Name text")
        await self.hass.wait_state("select.aabridge_candidate", lambda s: s["state"] == "(none)", what="(none)")
        await self.hass.wait_state("sensor.aabridge_accessories", lambda s: s["state"] == "3", what="3")
        self.ok("Pair pairs the candidate as Kitchen AirPods: its device, the form empty again, 3 accessories")
        device = await self.device_named("Kitchen AirPods")
        self.expect(device is not None, "Home Assistant has the device Kitchen AirPods")

        await self.hass.call("text", "set_value", {"entity_id": "text.kitchen_airpods_name", "value": "Den AirPods"})
        await self.hass.wait_state("text.kitchen_airpods_name", lambda s: s["state"] == "Den AirPods", what="Den AirPods")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and await self.device_named("Den AirPods") is None:
            await asyncio.sleep(0.5)
        self.expect(await self.device_named("Den AirPods") is not None, "rename: Home Assistant's device is Den AirPods")

        await self.hass.call("button", "press", {"entity_id": "button.kitchen_airpods_remove"})
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and await self.device_named("Den AirPods") is not None:
            await asyncio.sleep(0.5)
        self.expect(await self.device_named("Den AirPods") is None, "remove: the Home Assistant device disappears")
        states = await self.hass.states()
        self.expect(not [e for e in states if e.startswith(("text.kitchen_airpods", "sensor.kitchen_airpods"))],
                    "remove: its entities are gone")
        await self.hass.wait_state("sensor.aabridge_accessories", lambda s: s["state"] == "2", what="2")
        self.ok("remove: 2 accessories again")

    async def controls(self):
        """Every other control Home Assistant offers, each through its service call, each
        answered ok on the Last request sensor (behind the ACL: each one's topic is writable)."""
        async def press(entity, request):
            before = await self.now_at()
            await self.hass.call("button", "press", {"entity_id": entity})
            outcome = await self.last_request(before, request)
            self.expect(outcome["state"] == "ok", f"{entity}: {request} answered {outcome['state']}")

        async def type_into(entity, value, request):
            before = await self.now_at()
            await self.hass.call("text", "set_value", {"entity_id": entity, "value": value})
            outcome = await self.last_request(before, request)
            self.expect(outcome["state"] == "ok", f"{entity} = {value!r}: {request} answered {outcome['state']}")

        await press("button.aabridge_show_picker", "picker/show")
        await self.hass.wait_state("sensor.aabridge_picker", lambda s: s["state"] == "presented", what="presented")
        await press("button.aabridge_dismiss_picker", "picker/dismiss")
        await self.hass.wait_state("sensor.aabridge_picker", lambda s: s["state"] == "idle", what="idle")
        self.ok("Dismiss picker: the picker is idle again")

        await press("button.alice_s_airpods_invalidate_registration", "accessory/invalidate")
        # AirPods or Beats has auto_register: the bridge registers it again at once.
        await self.hass.wait_state("sensor.alice_s_airpods_registration", lambda s: s["state"] == "active", what="active")
        await press("button.alice_s_airpods_register", "accessory/register")
        await self.hass.wait_state("sensor.alice_s_airpods_registration", lambda s: s["state"] == "active", what="active")

        async def switch(entity, service, request):
            before = await self.now_at()
            await self.hass.call("switch", service, {"entity_id": entity})
            outcome = await self.last_request(before, request)
            self.expect(outcome["state"] == "ok", f"{entity}: {service} {request} answered {outcome['state']}")

        await switch("switch.alice_s_airpods_head_tracking", "turn_on", "accessory/head_tracking")
        await self.hass.wait_state("switch.alice_s_airpods_head_tracking", lambda s: s["state"] == "on", what="on")
        await switch("switch.alice_s_airpods_head_tracking", "turn_off", "accessory/head_tracking")
        await self.hass.wait_state("switch.alice_s_airpods_head_tracking", lambda s: s["state"] == "off", what="off")
        self.ok("Head tracking: the switch turns the session on and off, its state follows")

        alias = "A1:B2:C3:D4:E5:00"
        await type_into("text.alice_s_airpods_alias", alias, "accessory/alias")
        await self.hass.wait_state("text.alice_s_airpods_alias", lambda s: s["state"] == alias, what=alias)
        await type_into("text.alice_s_airpods_alias", "", "accessory/alias")
        await self.hass.wait_state("text.alice_s_airpods_alias", lambda s: s["state"] == "", what="empty")
        self.ok("Alias: set, shown, removed")

        await type_into("text.alice_s_airpods_home_source_address", PHONE, "accessory/home_sources")
        await self.hass.wait_state("select.alice_s_airpods_home_source", lambda s: s["state"] == "Alice's iPhone",
                                   what="Alice's iPhone")
        await type_into("text.alice_s_airpods_home_source_address", "", "accessory/home_sources")
        await self.hass.wait_state("select.alice_s_airpods_home_source", lambda s: s["state"] == "(none)", what="(none)")
        self.ok("Home source address: the select follows it")

        await type_into("text.aabridge_name_a_source", "66:55:44:33:22:11=Bob's TV", "source/name")
        await self.hass.wait_state("text.aabridge_name_a_source", lambda s: s["state"] == "", what="empty")
        await self.hass.wait_state("select.alice_s_airpods_home_source", lambda s: "Bob's TV" in s["attributes"]["options"],
                                   what="Bob's TV as an option")
        await type_into("text.aabridge_name_a_source", "66:55:44:33:22:11=", "source/name")
        self.ok("Name a source: the name becomes a Home source option; the text stays empty")

        key = "fedcba9876543210fedcba9876543210"
        await type_into("text.alice_s_airpods_encryption_key", key, "accessory/keys")
        await self.hass.wait_state("sensor.alice_s_airpods_address", lambda s: s["attributes"]["encryption_key"] is True,
                                   what="encryption_key: true")
        states = await self.hass.states()
        self.expect(key not in json.dumps(states).lower() and states["text.alice_s_airpods_encryption_key"]["state"] == "",
                    "the encryption key is set and in no Home Assistant state")
        await type_into("text.alice_s_airpods_encryption_key", "", "accessory/keys")
        await self.hass.wait_state("sensor.alice_s_airpods_address", lambda s: s["attributes"]["encryption_key"] is False,
                                   what="encryption_key: false")

    async def device_named(self, name):
        for device in await self.hass.devices():
            if (device.get("name_by_user") or device.get("name")) == name:
                return device
        return None

    async def presence(self):
        await self.hass.wait_state("device_tracker.alice_s_airpods", lambda s: s["state"] == "home", what="home")
        self.hearing = False
        try:
            started = time.monotonic()
            state = await self.hass.wait_state("device_tracker.alice_s_airpods", lambda s: s["state"] == "not_home",
                                               timeout=AVAILABILITY_S * 4, what="not_home")
            self.ok(f"presence: not_home {time.monotonic() - started:.0f} s after the last advertisement "
                    f"(switching.availability_timeout_s {AVAILABILITY_S})")
            self.expect(state["attributes"].get("room") is None, "presence: no room while away")
        finally:
            self.hearing = True
        state = await self.hass.wait_state("device_tracker.alice_s_airpods",
                                           lambda s: s["state"] == "home" and s["attributes"].get("room") == ROOM,
                                           what="home again, in the Kitchen")
        self.ok("presence: home again when heard, room Kitchen (rooms: kitchen: Kitchen), gateway kitchen")
        await self.hass.wait_state("sensor.alice_s_airpods_room", lambda s: s["state"] == ROOM, what=ROOM)

    # ---- blueprints ----------------------------------------------------------------------------

    async def service_calls(self):
        """Subscribes to call_service events on a websocket of its own; returns (list, task)."""
        ws = await self.hass.session.ws_connect(self.hass.url + "/api/websocket")
        await ws.receive_json()
        await ws.send_json({"type": "auth", "access_token": self.hass.token})
        await ws.receive_json()
        await ws.send_json({"id": 1, "type": "subscribe_events", "event_type": "call_service"})
        await ws.receive_json()
        calls = []

        async def read():
            async for message in ws:
                data = json.loads(message.data)
                if data.get("type") == "event":
                    calls.append(data["event"]["data"])
        return calls, asyncio.create_task(read()), ws

    async def wait_call(self, calls, domain, service, predicate=lambda data: True, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for call in calls:
                if call["domain"] == domain and call["service"] == service and predicate(call.get("service_data", {})):
                    return call
            await asyncio.sleep(0.2)
        raise Failure(f"no {domain}.{service} call; calls seen: {[(c['domain'], c['service']) for c in calls]}")

    async def automation(self, key, blueprint, inputs):
        """Creates an automation from a shipped blueprint through the config API, as the UI does."""
        await self.hass.rest("POST", f"/api/config/automation/config/{key}", {
            "alias": f"test {key}", "description": "",
            "use_blueprint": {"path": f"aabridge/{blueprint}", "input": inputs}})
        state = await self.hass.wait_state(f"automation.test_{key}", lambda s: s["state"] == "on", what="on")
        return state

    async def automation_blueprints(self):
        shipped = sorted(p.name for p in (BLUEPRINTS / "automation" / "aabridge").glob("*.yaml"))
        listed = await self.hass.command({"type": "blueprint/list", "domain": "automation"})
        for name in shipped:
            entry = listed.get(f"aabridge/{name}", {})
            self.expect("error" not in entry and entry.get("metadata", {}).get("domain") == "automation",
                        f"Home Assistant reads the blueprint {name} ({entry.get('error', 'ok')})")
        covered = {"pause_media_when_headphones_off.yaml", "route_media_player.yaml", "companion_app_sources.yaml",
                   "notify_accessory_errors.yaml"}
        self.expect(set(shipped) == covered, f"every shipped automation blueprint is exercised here ({shipped})")
        calls, reader, ws = await self.service_calls()
        try:
            await self.blueprint_pause(calls)
            await self.blueprint_companion()
            await self.blueprint_route(calls)
            await self.blueprint_notify(calls)
        finally:
            reader.cancel()
            await ws.close()

    async def blueprint_pause(self, calls):
        # A media player the test provides: a state, as an integration would set it.
        await self.hass.rest("POST", "/api/states/media_player.test_tv", {"state": "playing", "attributes": {}})
        await self.automation("pause", "pause_media_when_headphones_off.yaml", {
            "wear_entity": "binary_sensor.alice_s_airpods_worn", "media_players": ["media_player.test_tv"]})
        # Taken off: the AirPods advertise both buds in the case.
        self.hearing = False
        try:
            await asyncio.sleep(1.2)
            self.advertise(ALICE, IN_CASE)
            await self.hass.wait_state("binary_sensor.alice_s_airpods_worn", lambda s: s["state"] == "off", what="off")
            await self.wait_call(calls, "media_player", "media_pause",
                                 lambda d: "media_player.test_tv" in json.dumps(d))
            self.ok("pause_media_when_headphones_off: Worn turns off, media_player.media_pause on the playing player")
        finally:
            self.hearing = True
        await self.hass.wait_state("binary_sensor.alice_s_airpods_worn", lambda s: s["state"] == "on", what="on again")

    async def blueprint_companion(self):
        sensor = "sensor.test_phone_bluetooth_connection"
        await self.hass.rest("POST", f"/api/states/{sensor}", {"state": "0", "attributes": {"connected_paired_devices": []}})
        await self.automation("companion", "companion_app_sources.yaml", {
            "bluetooth_sensor": sensor, "phone": PHONE, "accessories": [ALICE]})
        count = len(self.observer.on(f"aabridge/accessory/{self.topic_id(ALICE)}/set"))
        await self.hass.rest("POST", f"/api/states/{sensor}", {
            "state": "1", "attributes": {"connected_paired_devices": [f"{ALICE} (Alice's AirPods)"]}})
        topic = f"aabridge/accessory/{self.topic_id(ALICE)}/set"
        message = self.observer.wait(lambda m: m[0] == topic and json.loads(m[1]) == {"source_connected": PHONE}, 20)
        self.expect(message is not None and len(self.observer.on(topic)) > count,
                    f"companion_app_sources: the phone's list gains the AirPods, HA publishes {{\"source_connected\":\"{PHONE}\"}} on {topic}")
        await self.hass.wait_state("sensor.alice_s_airpods_primary_source", lambda s: s["state"] == PHONE,
                                   what=f"primary source {PHONE}")
        self.ok("companion_app_sources: the bridge takes the phone as the AirPods' source")

    async def blueprint_route(self, calls):
        await self.hass.rest("POST", "/api/states/media_player.test_tv",
                             {"state": "playing", "attributes": {"source": "TV Speaker",
                                                                  "source_list": ["TV Speaker", "Alice's AirPods"]}})
        await self.automation("route", "route_media_player.yaml", {
            "source": PHONE, "media_player": "media_player.test_tv",
            "outputs": {ALICE: "Alice's AirPods"}, "fallback_output": "TV Speaker"})
        # The phone is connected and the AirPods are in the ear: the bridge routes the phone to
        # them (a retained route, so the automation also sees the route as it stands).
        await self.wait_call(calls, "media_player", "select_source", lambda d: d.get("source") == "Alice's AirPods", 30)
        self.ok("route_media_player: the bridge routes the phone to the AirPods, media_player.select_source Alice's AirPods")
        await self.hass.rest("POST", "/api/states/media_player.test_tv",
                             {"state": "playing", "attributes": {"source": "Alice's AirPods",
                                                                  "source_list": ["TV Speaker", "Alice's AirPods"]}})
        self.observer.publish(f"aabridge/accessory/{self.topic_id(ALICE)}/set", json.dumps({"source_disconnected": PHONE}))
        await self.wait_call(calls, "media_player", "select_source", lambda d: d.get("source") == "TV Speaker", 30)
        self.ok("route_media_player: the phone disconnects, fallback, media_player.select_source TV Speaker")

    async def blueprint_notify(self, calls):
        await self.automation("notify", "notify_accessory_errors.yaml", {
            "notify_action": "persistent_notification.create", "codes": ["invalidRequest", "accessoryNotCapable"],
            "registration_sensors": ["sensor.alice_s_airpods_registration"]})
        # Bob's headphones are not registered: an update for them is refused with an error.
        self.observer.publish(f"aabridge/accessory/{self.topic_id(BOB)}/set", json.dumps({"placement": "sideways"}))
        error = self.observer.wait(lambda m: m[0] == f"aabridge/accessory/{self.topic_id(BOB)}/error", 10)
        if error is None:
            raise Failure("the bridge published no error for Bob's headphones")
        code = json.loads(error[1]).get("code")
        call = await self.wait_call(calls, "persistent_notification", "create",
                                    lambda d: "Audio accessory error" in d.get("title", ""))
        self.ok(f"notify_accessory_errors: an {code} error on accessory/<ID>/error, notification "
                f"'{call['service_data']['title']}': {call['service_data']['message']}")

    async def script_blueprints(self):
        """The script blueprint of docs/sources.md, "An iPhone": created from the file through the
        config API, run with `script.turn_on` and its field as the companion app's Shortcuts
        action does, and over the REST API with a long-lived token as "Get Contents of URL" does;
        the message on the broker must be exactly the /set contract, and the bridge must act on it."""
        shipped = sorted(p.name for p in (BLUEPRINTS / "script" / "aabridge").glob("*.yaml"))
        self.expect(shipped == ["source_connected.yaml"], f"the shipped script blueprints ({shipped})")
        listed = await self.hass.command({"type": "blueprint/list", "domain": "script"})
        entry = listed.get("aabridge/source_connected.yaml", {})
        self.expect("error" not in entry and entry.get("metadata", {}).get("domain") == "script",
                    f"Home Assistant reads the script blueprint source_connected.yaml ({entry.get('error', 'ok')})")
        devices = await self.hass.devices()
        alice = next((d for d in devices if ["mqtt", f"aabridge_{self.topic_id(ALICE)}"] in d["identifiers"]), None)
        bridge = next((d for d in devices if ["mqtt", "aabridge_bridge_aabridge"] in d["identifiers"]), None)
        if alice is None or bridge is None:
            raise Failure(f"no device for Alice's AirPods or the bridge in {[d['identifiers'] for d in devices]}")
        iphone = await self.script("iphone", {"accessory": alice["id"], "phone": IPHONE})
        topic = f"aabridge/accessory/{self.topic_id(ALICE)}/set"
        sensors = ("sensor.alice_s_airpods_primary_source", "sensor.alice_s_airpods_secondary_source")

        async def lists_iphone():
            return [(await self.hass.state(s))["state"] for s in sensors].count(IPHONE) == 1

        # Connected, as the companion app's "Perform Action" (Call Service) sends it.
        count = len(self.observer.on(topic))
        await self.hass.call("script", "turn_on", {"entity_id": iphone, "variables": {"state": "connected"}})
        message = self.observer.wait(lambda m: m[0] == topic and len(self.observer.on(topic)) > count, 20)
        self.expect(message is not None and message[1] == f'{{"source_connected":"{IPHONE}"}}'.encode()
                    and message[2] is False and message[4] == 1,
                    f"source_connected.yaml, script.turn_on with state connected: exactly "
                    f"{{\"source_connected\":\"{IPHONE}\"}} on {topic}, QoS 1, not retained "
                    f"(got {message and (message[1], message[2], message[4])})")
        await self.wait_for(lists_iphone, f"the bridge lists {IPHONE} among Alice's sources")
        self.ok(f"source_connected.yaml: the bridge takes {IPHONE} as a source of Alice's AirPods")

        # Disconnected, over the REST API with a long-lived token ("Get Contents of URL").
        token = await self.hass.command({"type": "auth/long_lived_access_token", "client_name": "iPhone Shortcut",
                                         "lifespan": 30})
        count = len(self.observer.on(topic))
        async with self.hass.session.post(self.hass.url + "/api/services/script/turn_on",
                                          headers={"Authorization": f"Bearer {token}"},
                                          json={"entity_id": iphone, "variables": {"state": "disconnected"}}) as r:
            self.expect(r.status == 200, f"POST /api/services/script/turn_on with a long-lived token: {r.status}")
        message = self.observer.wait(lambda m: m[0] == topic and len(self.observer.on(topic)) > count, 20)
        self.expect(message is not None and message[1] == f'{{"source_disconnected":"{IPHONE}"}}'.encode()
                    and message[2] is False and message[4] == 1,
                    f"source_connected.yaml over REST with state disconnected: exactly "
                    f"{{\"source_disconnected\":\"{IPHONE}\"}} on {topic}, QoS 1, not retained "
                    f"(got {message and (message[1], message[2], message[4])})")

        async def drops_iphone():
            return [(await self.hass.state(s))["state"] for s in sensors].count(IPHONE) == 0

        await self.wait_for(drops_iphone, f"the bridge no longer lists {IPHONE}")
        self.ok(f"source_connected.yaml: the bridge drops {IPHONE} from Alice's sources")

        # Refused before anything is sent: a state that is neither, a phone that is no address, a
        # device that is not an accessory (the bridge's own). Each stops with an error, publishes nothing.
        bad_phone = await self.script("bad_phone", {"accessory": alice["id"], "phone": "66:55:44:33:22"})
        bridge_device = await self.script("bridge_device", {"accessory": bridge["id"], "phone": IPHONE})
        count = len([m for m in self.observer.messages if m[0].endswith("/set")])
        for script, state, said in ((iphone, "maybe", "state must be connected or disconnected"),
                                    (bad_phone, "connected", "is not an address"),
                                    (bridge_device, "connected", "is not one of aabridge's")):
            before = (await self.hass.state(script))["attributes"].get("last_triggered")
            await self.hass.call("script", "turn_on", {"entity_id": script, "variables": {"state": state}})

            async def ran(script=script, before=before):
                return (await self.hass.state(script))["attributes"].get("last_triggered") != before

            await self.wait_for(ran, f"{script} runs with state {state}")
            self.ok(f"source_connected.yaml: {script} with state {state} runs (to be refused: ...{said})")
        await asyncio.sleep(3)
        sent = [m for m in self.observer.messages if m[0].endswith("/set")][count:]
        self.expect(not sent, f"source_connected.yaml: a bad state, phone or device publishes nothing ({sent})")

    async def script(self, key, inputs):
        """Creates a script from the shipped script blueprint through the config API, as the UI does."""
        await self.hass.rest("POST", f"/api/config/script/config/{key}", {
            "alias": f"test {key}", "use_blueprint": {"path": "aabridge/source_connected.yaml", "input": inputs}})
        await self.hass.wait_state(f"script.{key}", lambda s: s["state"] == "off", what="off (ready)")
        return f"script.{key}"

    async def wait_for(self, condition, what, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            result = condition()
            if asyncio.iscoroutine(result):
                result = await result
            if result:
                return
            await asyncio.sleep(0.25)
        raise Failure(f"not within {timeout} s: {what}")

    # ---- restart, config, logs -------------------------------------------------------------------

    async def restart(self):
        births = len(self.observer.on("homeassistant/status"))
        configs = len([m for m in self.observer.messages if m[0].startswith("homeassistant/device/")])
        await self.hass.restart()
        birth = self.observer.wait(lambda m: m[0] == "homeassistant/status" and m[1] == b"online"
                                   and len(self.observer.on("homeassistant/status")) > births, 60)
        self.expect(birth is not None, "Home Assistant restarted: its birth message online on homeassistant/status")
        republished = self.observer.wait(
            lambda m: m[0].startswith("homeassistant/device/aabridge_") and birth is not None and m[3] > birth[3], 20)
        self.expect(republished is not None, "the bridge republishes its discovery after the birth message")
        await self.check_entities("after Home Assistant's restart")

    async def reads(self):
        if not self.acl:
            self.log("(open broker: no ACL to check)")
            return
        topics = sorted({m[0] for m in self.ha_reader.messages})
        requests = [t for t in topics if "/request/" in t or t.endswith("/pairing/set") or t.endswith("/set")]
        self.expect(not requests, f"Home Assistant's user, subscribed to #, received no request or /set topic ({requests})")
        self.expect(any(t == "aabridge/bridge/state" for t in topics), "Home Assistant's user reads bridge/state")
        self.expect(not [t for t in topics if t.startswith(("home/", "espresense/", "tele/", "aabridge/telemetry/"))],
                    "Home Assistant's user reads no gateway telemetry")
        for key in ("0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"):
            self.expect(not any(key in m[1].decode(errors="replace").lower() for m in self.ha_reader.messages),
                        f"Home Assistant's user never received the key it sent ({key[:6]}...)")

    async def check_config(self):
        clean, output = await asyncio.get_running_loop().run_in_executor(
            None, check_config, self.args.python, self.work / "homeassistant")
        self.expect(clean, "hass --script check_config is clean" + ("" if clean else f":\n{output}"))

    async def automation_log(self):
        # The script blueprint's refusals that script_blueprints provokes on purpose are errors.
        provoked = ("aabridge: state must be", "aabridge: the phone's Bluetooth address is not",
                    "aabridge: the accessory device is not")
        lines = [line for line in self.hass.log_text().splitlines()
                 if re.match(r"\S+ \S+ (ERROR|CRITICAL) \([^)]*\) \[homeassistant\.components\.(automation|script)", line)
                 and not any(text in line for text in provoked)]
        self.expect(not lines, "no automation or script made from the blueprints logged an error"
                    + ("" if not lines else ":\n" + "\n".join(lines[:20])))

    async def mqtt_log(self):
        lines = [line for line in self.hass.log_text().splitlines()
                 if re.match(r"\S+ \S+ (WARNING|ERROR|CRITICAL) \([^)]*\) \[homeassistant\.(components\.mqtt|helpers\.template)", line)]
        self.expect(not lines, "nothing at warning or above from Home Assistant's mqtt logger (nor its template helper)"
                    + ("" if not lines else ":\n" + "\n".join(lines[:20])))


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bridge", required=True)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--mode", choices=["open", "acl", "both"], default="both")
    parser.add_argument("--work", default="/tmp/aabridge-ha-suite")
    # While working on one part: the steps whose names contain one of these (repeatable).
    parser.add_argument("--only", action="append", default=[])
    args = parser.parse_args()
    modes = ["open", "acl"] if args.mode == "both" else [args.mode]
    results = []
    started = time.monotonic()
    for mode in modes:
        suite = Suite(args, mode)
        mode_started = time.monotonic()
        passed = await suite.run()
        results.append((mode, passed, suite.passes, len(suite.failures), round(time.monotonic() - mode_started, 1), suite.timings))
    for mode, passed, passes, failures, seconds, timings in results:
        print(f"== {mode}: {'PASS' if passed else 'FAIL'} ({passes} checks passed, {failures} failed, {seconds} s; {timings})")
    print(f"== real Home Assistant suite: {round(time.monotonic() - started, 1)} s")
    return 0 if all(r[1] for r in results) else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
