"""A real Home Assistant core for the tests: its process, onboarding, and a REST/websocket client.

Home Assistant is driven only through its HTTP API (REST and websocket), as a dashboard would:
the suite never reads its files or imports its code.
"""

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from common import free_port  # noqa: E402

# The integrations Home Assistant loads: what the issue names, nothing of default_config (no
# recorder, no frontend), so a start takes seconds.
CONFIGURATION = """\
homeassistant:
  name: aabridge test
  latitude: 52.37
  longitude: 4.89
  elevation: 0
  unit_system: metric
  time_zone: UTC
  country: NL
  currency: EUR
  internal_url: "http://127.0.0.1:{port}"
http:
  server_host: 127.0.0.1
  server_port: {port}
api:
config:
onboarding:
automation: !include automations.yaml
script: !include scripts.yaml
blueprint:
# Home Assistant's Bluetooth without an adapter, and the test's remote scanners registered
# through its API (ha/custom_components/aabridge_test_scanners), which the relay reads.
bluetooth:
aabridge_test_scanners:
# The media player actions the pause and route blueprints call (media_player.media_pause,
# select_source), on a player whose state the test sets.
media_player:
logger:
  default: warning
  logs:
    homeassistant.components.mqtt: debug
"""

CLIENT_ID_PATH = "/"


class HomeAssistantError(Exception):
    pass


class HomeAssistant:
    """One Home Assistant process on a free loopback port, with its own configuration directory."""

    def __init__(self, python, config_dir, log):
        # Absolute: Home Assistant runs from its configuration directory (start).
        self.python = str(Path(python).absolute())
        self.config_dir = Path(config_dir)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.client_id = self.url + CLIENT_ID_PATH
        self.process = None
        self.log = log
        self.token = None
        self.session = None
        self.ws = None
        self.ws_id = 0
        self.ws_lock = asyncio.Lock()
        self.log_path = self.config_dir / "home-assistant.out"
        self.log_offset = 0

    # ---- the process ------------------------------------------------------------------

    def write_configuration(self):
        self.config_dir.mkdir(parents=True, exist_ok=True)
        (self.config_dir / "configuration.yaml").write_text(CONFIGURATION.format(port=self.port))
        for name in ("automations.yaml", "scripts.yaml"):
            path = self.config_dir / name
            if not path.exists():
                path.write_text("[]\n" if name == "automations.yaml" else "{}\n")

    async def start(self):
        """Starts Home Assistant and waits until its API answers (running state)."""
        self.log(f"hass -c {self.config_dir} (http://127.0.0.1:{self.port})")
        out = open(self.log_path, "a")
        self.process = subprocess.Popen(
            [self.python, "-m", "homeassistant", "-c", str(self.config_dir), "--skip-pip", "--log-no-color"],
            # Run from the configuration directory: `python -m` puts its working directory first on
            # sys.path, and the repository's custom_components/ would shadow the configuration's.
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True, cwd=self.config_dir)
        if self.session is None:
            self.session = aiohttp.ClientSession()
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise HomeAssistantError(f"Home Assistant exited ({self.process.returncode}):\n{self.tail()}")
            try:
                async with self.session.get(self.url + "/api/onboarding", timeout=aiohttp.ClientTimeout(total=2)) as r:
                    if r.status in (200, 401, 404):
                        if self.token is None:
                            return
                        # Onboarded: wait until the core runs (the API answers with auth).
                        async with self.session.get(self.url + "/api/config", headers=self.headers) as c:
                            if c.status == 200 and (await c.json()).get("state") == "RUNNING":
                                return
            except (aiohttp.ClientError, asyncio.TimeoutError):
                pass
            await asyncio.sleep(0.5)
        raise HomeAssistantError(f"Home Assistant did not start within 180 s:\n{self.tail()}")

    async def stop(self):
        """Stops Home Assistant (SIGTERM, as a service manager does) and waits for it."""
        if self.ws is not None:
            await self.ws.close()
            self.ws = None
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                await asyncio.get_running_loop().run_in_executor(None, lambda: self.process.wait(60))
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.process = None

    async def close(self):
        await self.stop()
        if self.session is not None:
            await self.session.close()
            self.session = None

    async def restart(self):
        """Stops and starts the same Home Assistant (same port, same configuration directory)."""
        await self.stop()
        await self.start()
        await self.connect_websocket()

    def tail(self, lines=60):
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def log_text(self):
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    # ---- onboarding and setup -----------------------------------------------------------

    @property
    def headers(self):
        return {"Authorization": f"Bearer {self.token}"}

    async def onboard(self, username="aabridge-test", password="aabridge-test-password"):
        """Onboards a user through the onboarding API, as the first browser session would."""
        async with self.session.post(self.url + "/api/onboarding/users", json={
                "client_id": self.client_id, "name": "aabridge test", "username": username,
                "password": password, "language": "en"}) as r:
            if r.status != 200:
                raise HomeAssistantError(f"onboarding/users: {r.status} {await r.text()}")
            code = (await r.json())["auth_code"]
        async with self.session.post(self.url + "/auth/token", data={
                "grant_type": "authorization_code", "code": code, "client_id": self.client_id}) as r:
            if r.status != 200:
                raise HomeAssistantError(f"auth/token: {r.status} {await r.text()}")
            tokens = await r.json()
        self.token = tokens["access_token"]
        self.refresh_token = tokens["refresh_token"]
        # Not the core_config step: it sets up the weather, radio and text-to-speech integrations
        # a fresh install gets, which need packages and the network and log errors here.
        for step, body in (("analytics", {}),
                           ("integration", {"client_id": self.client_id, "redirect_uri": self.client_id})):
            async with self.session.post(self.url + f"/api/onboarding/{step}", json=body, headers=self.headers) as r:
                if r.status != 200:
                    raise HomeAssistantError(f"onboarding/{step}: {r.status} {await r.text()}")
        await self.connect_websocket()

    async def refresh(self):
        """A fresh access token (they last 30 minutes)."""
        async with self.session.post(self.url + "/auth/token", data={
                "grant_type": "refresh_token", "refresh_token": self.refresh_token, "client_id": self.client_id}) as r:
            if r.status != 200:
                raise HomeAssistantError(f"auth/token refresh: {r.status} {await r.text()}")
            self.token = (await r.json())["access_token"]

    async def setup_mqtt(self, port, username=None, password=None):
        """Sets up the MQTT integration through its config flow, as Settings → Add integration does."""
        flow = await self.rest("POST", "/api/config/config_entries/flow", {"handler": "mqtt", "show_advanced_options": False})
        for _ in range(5):
            if flow["type"] == "create_entry":
                return flow
            if flow["type"] == "abort":
                raise HomeAssistantError(f"MQTT config flow aborted: {flow}")
            if flow["type"] == "menu":
                flow = await self.rest("POST", f"/api/config/config_entries/flow/{flow['flow_id']}",
                                       {"next_step_id": "broker" if "broker" in flow["menu_options"] else flow["menu_options"][0]})
                continue
            if flow.get("errors"):
                raise HomeAssistantError(f"MQTT config flow step {flow['step_id']}: {flow['errors']}")
            data = {"broker": "127.0.0.1", "port": port}
            if username is not None:
                data.update(username=username, password=password)
            flow = await self.rest("POST", f"/api/config/config_entries/flow/{flow['flow_id']}", data)
        raise HomeAssistantError(f"MQTT config flow did not finish: {flow}")

    # ---- REST ---------------------------------------------------------------------------

    async def rest(self, method, path, body=None, expect=(200, 201)):
        async with self.session.request(method, self.url + path, json=body, headers=self.headers) as r:
            text = await r.text()
            if r.status == 401:
                await self.refresh()
                return await self.rest(method, path, body, expect)
            if r.status not in expect:
                raise HomeAssistantError(f"{method} {path}: {r.status} {text}")
            return json.loads(text) if text else None

    async def states(self):
        return {s["entity_id"]: s for s in await self.rest("GET", "/api/states")}

    async def state(self, entity_id):
        async with self.session.get(self.url + f"/api/states/{entity_id}", headers=self.headers) as r:
            if r.status == 404:
                return None
            if r.status != 200:
                raise HomeAssistantError(f"state {entity_id}: {r.status} {await r.text()}")
            return await r.json()

    async def call(self, domain, service, data):
        """A service call, as a dashboard's button, select or text makes it."""
        return await self.rest("POST", f"/api/services/{domain}/{service}", data)

    async def wait_state(self, entity_id, predicate, timeout=30, what=""):
        """Waits until the entity's state object satisfies `predicate`; returns it."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            last = await self.state(entity_id)
            try:
                if predicate(last):
                    return last
            except (KeyError, TypeError, AttributeError):
                pass
            await asyncio.sleep(0.25)
        raise HomeAssistantError(f"{entity_id}: {what or 'condition'} not met within {timeout} s; last: {last}")

    # ---- websocket ----------------------------------------------------------------------

    async def connect_websocket(self):
        self.ws = await self.session.ws_connect(self.url + "/api/websocket")
        hello = await self.ws.receive_json()
        assert hello["type"] == "auth_required", hello
        await self.ws.send_json({"type": "auth", "access_token": self.token})
        answer = await self.ws.receive_json()
        if answer["type"] != "auth_ok":
            raise HomeAssistantError(f"websocket auth: {answer}")

    async def command(self, message):
        """One websocket command and its result."""
        async with self.ws_lock:
            # Home Assistant closes a websocket that does not answer its heartbeat pings, and a
            # client answers them only while it reads: between commands nobody reads this one.
            if self.ws is None or self.ws.closed:
                await self.connect_websocket()
            self.ws_id += 1
            try:
                await self.ws.send_json({"id": self.ws_id, **message})
            except aiohttp.ClientConnectionResetError:
                await self.connect_websocket()
                await self.ws.send_json({"id": self.ws_id, **message})
            while True:
                answer = await self.ws.receive_json(timeout=60)
                if answer.get("id") == self.ws_id and answer.get("type") == "result":
                    if not answer["success"]:
                        raise HomeAssistantError(f"websocket {message['type']}: {answer['error']}")
                    return answer["result"]

    async def devices(self):
        return await self.command({"type": "config/device_registry/list"})

    async def entities(self):
        return await self.command({"type": "config/entity_registry/list"})


def check_config(python, config_dir):
    """`hass --script check_config`: its output and whether it found nothing wrong."""
    result = subprocess.run([str(Path(python).absolute()), "-m", "homeassistant", "--script", "check_config", "-c", str(config_dir)],
                            capture_output=True, text=True, timeout=300, cwd=config_dir)
    output = result.stdout + result.stderr
    return result.returncode == 0 and "Invalid config" not in output and "Failed config" not in output, output
