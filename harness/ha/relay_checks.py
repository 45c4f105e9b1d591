"""The relay's checks in the real-Home-Assistant suite (issue 54): custom_components/aabridge_relay
installed as a user installs it (copied into the configuration's custom_components, set up
through its config flow over REST), Home Assistant's own Bluetooth with remote scanners the
test-only integration registers through Home Assistant's API (ha/custom_components/
aabridge_test_scanners), the real broker and the real bridge. The AirPods here are heard only
through Home Assistant's scanners, until the MQTT gateway hears them too.
"""

import asyncio
import json
import re
import shutil
import time

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from stack import GATEWAY, IN_CASE, IN_EAR, ROOT, Client

RELAY = ROOT / "custom_components" / "aabridge_relay"
TEST_SCANNERS = ROOT / "harness" / "ha" / "custom_components" / "aabridge_test_scanners"
LIVING = ("AA:00:00:00:00:01", "Living room proxy", "Living room", "living_room_proxy")
BEDROOM = ("AA:00:00:00:00:02", "Bedroom proxy", "Bedroom", "bedroom_proxy")
IRK = "ec0234a357c8ad05341010a60a397d9b"
NAME = "Relay AirPods"
SLUG = "relay_airpods"


def resolvable_address(irk, prand):
    """A resolvable private address of `irk` (Core Vol 3 Part H 2.2.2: prand with 0b01 on top,
    then ah(irk, prand), both most significant octet first)."""
    prand = (prand & 0x3FFFFF) | 0x400000
    encryptor = Cipher(algorithms.AES(bytes.fromhex(irk)), modes.ECB()).encryptor()
    block = encryptor.update(bytes(13) + prand.to_bytes(3, "big")) + encryptor.finalize()
    raw = prand.to_bytes(3, "big") + block[-3:]
    return ":".join(f"{b:02X}" for b in raw)


FIRST = resolvable_address(IRK, 0x1A2B3C)
CONTROL = "D0:00:00:00:00:01"
ROTATED = resolvable_address(IRK, 0x2C3D4E)


def install(config_dir):
    """Copies the relay and the test's scanners into the configuration, as a user copies a
    custom integration (HACS does the same copy)."""
    for source in (RELAY, TEST_SCANNERS):
        target = config_dir / "custom_components" / source.name
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "tests"))


class RelayChecks:
    def __init__(self, suite):
        self.suite = suite
        self.hass = suite.hass
        self.entry_id = None
        self.hearing = None  # (source, address, rssi, data) heard every second while set
        self.task = None
        self.relayed = Client(suite.broker, "aabridge", "relay-reader", ["aabridge_relay/#"])

    async def wait(self, client, predicate, timeout):
        """A test client's wait, off the event loop: the injecting task goes on meanwhile."""
        return await asyncio.get_running_loop().run_in_executor(None, client.wait, predicate, timeout)

    def close(self):
        if self.task:
            self.task.cancel()
        self.relayed.close()

    async def inject(self, source, address, rssi, data=IN_EAR):
        await self.hass.call("aabridge_test_scanners", "inject",
                             {"source": source, "address": address, "rssi": rssi, "manufacturer_data": data})

    async def hear(self):
        while True:
            for source, address, rssi, data in list(self.hearing or []):
                try:
                    await self.inject(source, address, rssi, data)
                except Exception as error:  # noqa: BLE001 - Home Assistant restarting
                    self.suite.log(f"(inject: {error})")
            await asyncio.sleep(1)

    async def add_scanners(self):
        for source, name, area, _ in (LIVING, BEDROOM):
            await self.hass.call("aabridge_test_scanners", "add_scanner", {"source": source, "name": name, "area": area})

    async def set_up(self):
        """The relay through its config flow, as Settings > Add integration does."""
        flow = await self.hass.rest("POST", "/api/config/config_entries/flow", {"handler": "aabridge_relay"})
        assert flow["type"] == "form", flow
        flow = await self.hass.rest("POST", f"/api/config/config_entries/flow/{flow['flow_id']}", {"interval": 1.0})
        self.suite.expect(flow["type"] == "create_entry", f"the relay's config flow creates its entry ({flow['type']})")
        self.entry_id = flow["result"]["entry_id"]
        again = await self.hass.rest("POST", "/api/config/config_entries/flow", {"handler": "aabridge_relay"})
        self.suite.expect(again["type"] == "abort", "a second relay is refused (one entry)")
        await self.add_scanners()

    async def diagnostics(self):
        return await self.hass.rest("GET", f"/api/diagnostics/config_entry/{self.entry_id}")

    async def run(self):
        s = self.suite
        await self.set_up()
        # What Home Assistant's own subscribers see: its websocket stream of advertisements.
        ws = await self.hass.session.ws_connect(self.hass.url + "/api/websocket")
        await ws.receive_json()
        await ws.send_json({"type": "auth", "access_token": self.hass.token})
        await ws.receive_json()
        await ws.send_json({"id": 1, "type": "bluetooth/subscribe_advertisements"})
        streamed = []

        async def read():
            async for message in ws:
                streamed.append(message.data)
        reader = asyncio.create_task(read())

        self.hearing = [(LIVING[0], FIRST, -50, IN_EAR), (BEDROOM[0], FIRST, -75, IN_EAR)]
        self.task = asyncio.create_task(self.hear())
        relayed = await self.wait(self.relayed, lambda m: m[0] == f"aabridge_relay/living_room_proxy/BTtoMQTT/{FIRST.replace(':', '')}", 20)
        s.expect(relayed is not None, "the relay publishes the AirPods' advertisement on aabridge_relay/living_room_proxy/BTtoMQTT/<address>")
        if relayed:
            payload = json.loads(relayed[1])
            s.expect(payload.get("scanner") == "Living room proxy" and payload.get("area", "").casefold() == "living room"
                     and payload.get("manufacturerdata") == IN_EAR and payload.get("rssi") == -50,
                     f"its payload: OpenMQTTGateway's shape with the scanner's name and area ({payload})")
        lwt = await self.wait(self.relayed, lambda m: m[0] == "aabridge_relay/bedroom_proxy/LWT" and m[1] == b"online", 10)
        s.expect(lwt is not None, "each scanner's status: online on aabridge_relay/<node>/LWT")

        # Pair them, heard only through Home Assistant's scanners (the bridge's controls are
        # there when the suite's earlier steps did not run, with --only).
        await self.hass.wait_state("button.aabridge_show_picker", lambda st: st["state"] != "unavailable",
                                   what="the bridge's controls")
        await self.hass.call("button", "press", {"entity_id": "button.aabridge_show_picker"})
        label = f"AirPods Pro ({FIRST})"
        await self.hass.wait_state("select.aabridge_candidate", lambda st: label in st["attributes"]["options"],
                                   what=f"the option {label}")
        await self.hass.call("select", "select_option", {"entity_id": "select.aabridge_candidate", "option": label})
        await self.hass.wait_state("select.aabridge_candidate", lambda st: st["state"] == label, what=label)
        await self.hass.call("text", "set_value", {"entity_id": "text.aabridge_name_to_give", "value": NAME})
        await self.hass.wait_state("text.aabridge_name_to_give", lambda st: st["state"] == NAME, what=NAME)
        await self.hass.call("button", "press", {"entity_id": "button.aabridge_pair"})
        await self.hass.wait_state(f"text.{SLUG}_name", lambda st: st["state"] == NAME, what="the new accessory")
        s.ok(f"AirPods heard only through Home Assistant's scanners are a candidate and pair as {NAME}")
        await self.hass.wait_state(f"sensor.{SLUG}_placement", lambda st: st["state"] == "inEar", what="inEar")
        await self.hass.wait_state(f"sensor.{SLUG}_battery_left", lambda st: st["state"] == "50", what="50")
        await self.hass.wait_state(f"sensor.{SLUG}_battery_right", lambda st: st["state"] == "80", what="80")
        s.ok("placement inEar and batteries (left 50, right 80) through the relay")
        await self.hass.wait_state(f"sensor.{SLUG}_room", lambda st: st["state"] == "Living room", what="Living room")
        s.ok("room: Living room, the scanner with the stronger RSSI (-50 against -75)")

        self.hearing = [(LIVING[0], FIRST, -80, IN_CASE), (BEDROOM[0], FIRST, -45, IN_CASE)]
        await self.hass.wait_state(f"sensor.{SLUG}_room", lambda st: st["state"] == "Bedroom", what="Bedroom", timeout=40)
        await self.hass.wait_state(f"sensor.{SLUG}_placement", lambda st: st["state"] == "offHead", what="offHead")
        s.ok("the room follows the stronger scanner (Bedroom at -45 against -80), placement offHead")

        # A rotation, followed by the IRK.
        await self.hass.call("text", "set_value", {"entity_id": f"text.{SLUG}_irk", "value": IRK})
        await self.hass.wait_state(f"sensor.{SLUG}_address", lambda st: st["attributes"]["irk"] is True, what="irk: true")
        self.hearing = [(LIVING[0], ROTATED, -50, IN_EAR), (BEDROOM[0], ROTATED, -70, IN_EAR)]
        await self.hass.wait_state(f"sensor.{SLUG}_address", lambda st: st["state"] == ROTATED, what=ROTATED, timeout=40)
        await self.hass.wait_state(f"sensor.{SLUG}_identity", lambda st: st["state"] == "irk", what="irk")
        await self.hass.wait_state(f"sensor.{SLUG}_placement", lambda st: st["state"] == "inEar", what="inEar")
        s.ok(f"a rotation to {ROTATED} is followed by the IRK (identity irk, placement inEar)")

        # The MQTT gateway hears the same AirPods too: they count once.
        before = (await self.hass.state("sensor.aabridge_accessories"))["state"]
        for _ in range(5):
            s.gateway.publish(f"home/{GATEWAY}/BTtoMQTT/{ROTATED.replace(':', '')}",
                              json.dumps({"id": ROTATED, "mac_type": 1, "manufacturerdata": IN_EAR, "rssi": -90}))
            await asyncio.sleep(1)
        after = (await self.hass.state("sensor.aabridge_accessories"))["state"]
        candidates = (await self.hass.state("select.aabridge_candidate"))["attributes"]["options"]
        s.expect(before == after and not any(ROTATED in c for c in candidates),
                 f"heard by the MQTT gateway too, they count once ({before} -> {after} accessories, no candidate)")

        await self.hass.wait_state("sensor.aabridge_gateway_living_room_proxy",
                                   lambda st: st["state"] == "ok" and st["attributes"]["area"].casefold() == "living room"
                                   and st["attributes"]["entry"] == "relay", what="ok, area Living Room")
        s.ok("Home Assistant has a Gateway sensor per scanner (sensor.aabridge_gateway_living_room_proxy: ok, its area)")

        # Home Assistant's own stream never carried these frames: the manager dropped them. A
        # control advertisement (Microsoft's company id) injected the same way shows the
        # subscription works.
        await self.hass.call("aabridge_test_scanners", "inject",
                             {"source": LIVING[0], "address": CONTROL, "rssi": -60, "manufacturer_data": "060001092002"})
        await asyncio.sleep(2)
        reader.cancel()
        await ws.close()
        events = [m for m in streamed if isinstance(m, str) and '"event"' in m]
        s.expect(any(CONTROL in m for m in events),
                 "bluetooth/subscribe_advertisements sees the control advertisement injected the same way")
        s.expect(not any(a in m for m in events for a in (FIRST, ROTATED)),
                 f"bluetooth/subscribe_advertisements never sees the AirPods' ({len(events)} events, none of them)")

    async def faults(self):
        s = self.suite
        # Thousands of addresses in a scanner's history, none of use: nothing more goes out.
        before = len(self.relayed.messages)
        await self.hass.call("aabridge_test_scanners", "add_addresses", {"source": LIVING[0], "count": 5000})
        await asyncio.sleep(4)
        useless = [m for m in self.relayed.messages[before:] if m[0].startswith("aabridge_relay/") and "/C0" in m[0]]
        s.expect(not useless, "5000 addresses of no use to aabridge: none forwarded")
        first = (await self.diagnostics())["data"]["figures"]
        await asyncio.sleep(10)
        second = (await self.diagnostics())["data"]["figures"]
        polls = second["polls"] - first["polls"]
        per_poll = (second["poll_seconds"] - first["poll_seconds"]) / max(polls, 1)
        s.log(f"relay cost with 2 scanners and 5000 addresses: {per_poll * 1000:.2f} ms per poll over {polls} polls; "
              f"figures {second}")
        s.expect(polls >= 8 and per_poll < 0.05, f"the poll stays cheap ({per_poll * 1000:.2f} ms per poll, {polls} polls)")
        s.relay_cost = (per_poll, second)

        # A scanner removed (an ESPHome proxy unplugged): said offline, a problem on bridge/gateways.
        self.hearing = [(LIVING[0], ROTATED, -50, IN_EAR)]
        await self.hass.call("aabridge_test_scanners", "remove_scanner", {"source": BEDROOM[0]})
        offline = await self.wait(self.relayed, lambda m: m[0] == "aabridge_relay/bedroom_proxy/LWT" and m[1] == b"offline", 10)
        s.expect(offline is not None, "a scanner removed from Home Assistant: offline on aabridge_relay/bedroom_proxy/LWT")
        problem = await self.wait(s.observer, lambda m: m[0] == "aabridge/bridge/gateways" and b"scanner_offline" in m[1], 20)
        s.expect(problem is not None, "bridge/gateways shows the scanner_offline problem with its remedy")
        # That publication carries each node's figures of the last minute.
        entry = next((e for e in json.loads(problem[1]) if e["format"] == "ha_relay"), None) if problem else None
        heard = {h["name"]: h for h in (entry or {}).get("heard", [])}
        s.expect(entry is not None and heard.get("living_room_proxy", {}).get("attributed", 0) > 0
                 and heard.get("bedroom_proxy", {}).get("problems", [{}])[0].get("code") == "scanner_offline"
                 and heard.get("living_room_proxy", {}).get("area", "").casefold() == "living room",
                 f"bridge/gateways: the relay's entry, a node per scanner with its Home Assistant area, advertisements attributed ({entry})")
        await self.hass.call("aabridge_test_scanners", "add_scanner",
                             {"source": BEDROOM[0], "name": BEDROOM[1], "area": BEDROOM[2]})
        self.hearing = [(LIVING[0], ROTATED, -50, IN_EAR), (BEDROOM[0], ROTATED, -60, IN_EAR)]
        back = await self.wait(self.relayed, lambda m: m[0] == "aabridge_relay/bedroom_proxy/LWT" and m[1] == b"online"
                                 and m[3] > offline[3], 20) if offline else None
        s.expect(back is not None, "the scanner added again: online again")

        self.check_log("after the scanner faults")
        # The other steps count two accessories: the relay's leave again.
        self.hearing = None
        await asyncio.sleep(1.5)
        await self.hass.call("button", "press", {"entity_id": f"button.{SLUG}_remove"})
        await self.hass.wait_state("sensor.aabridge_accessories", lambda st: st["state"] == "2", what="2")

    async def mqtt_outage(self):
        """MQTT gone from under the relay in Home Assistant (its entry disabled, as a user or a
        failed broker login leaves it), then back: one warning, then it forwards again. Run
        last: it takes every MQTT entity away for a while."""
        s = self.suite
        entries = await self.hass.rest("GET", "/api/config/config_entries/entry?domain=mqtt")
        mqtt_entry = entries[0]["entry_id"]
        self.hearing = [(LIVING[0], ROTATED, -50, IN_EAR)]
        await self.hass.command({"type": "config_entries/disable", "entry_id": mqtt_entry, "disabled_by": "user"})
        await asyncio.sleep(4)
        warnings = [line for line in self.hass.log_text().splitlines()
                    if "aabridge_relay" in line and "cannot publish to MQTT" in line]
        s.expect(len(warnings) == 1, f"MQTT disabled in Home Assistant: the relay says so once ({len(warnings)} lines)")
        await self.hass.command({"type": "config_entries/disable", "entry_id": mqtt_entry, "disabled_by": None})
        mark = time.monotonic()
        again = await self.wait(self.relayed, lambda m: m[0].startswith("aabridge_relay/living_room_proxy/BTtoMQTT/")
                                and m[3] > mark, 60)
        s.expect(again is not None, "MQTT enabled again: the relay forwards again by itself")
        heartbeat = await self.wait(self.relayed, lambda m: m[0] == "aabridge_relay/living_room_proxy/LWT"
                                    and m[3] > mark, 10)
        s.expect(heartbeat is not None, "and says its scanners' status again at once")
        self.hearing = None
        self.check_log("after MQTT's outage")

    async def after_restart(self):
        """After Home Assistant's restart: the relay's entry is set up again by itself."""
        s = self.suite
        await self.add_scanners()
        self.hearing = [(LIVING[0], ROTATED, -50, IN_EAR)]
        mark = time.monotonic()
        again = await self.wait(self.relayed, lambda m: m[0] == f"aabridge_relay/living_room_proxy/BTtoMQTT/{ROTATED.replace(':', '')}"
                                  and m[3] > mark, 30)
        s.expect(again is not None, "after Home Assistant's restart the relay forwards again")
        self.check_log("after Home Assistant's restart")

    def check_log(self, when):
        # Home Assistant's own warning for every custom integration at every start is not the relay's.
        lines = [line for line in self.hass.log_text().splitlines()
                 if re.match(r"\S+ \S+ (WARNING|ERROR|CRITICAL) ", line) and "aabridge_relay" in line
                 and "has not been tested by Home Assistant" not in line]
        messages = [re.sub(r"^\S+ \S+ ", "", line) for line in lines]
        repeated = {m for m in messages if messages.count(m) > 1}
        s = self.suite
        s.expect(not repeated, f"{when}: the relay said no warning twice ({sorted(repeated)[:3]})")
        blocking = [line for line in self.hass.log_text().splitlines()
                    if "aabridge_relay" in line and ("blocking call" in line.lower() or "Traceback" in line)]
        s.expect(not blocking, f"{when}: no blocking call or traceback from the relay ({blocking[:3]})")
