"""The Home Assistant add-on's run script for real, on loopback: a stand-in Supervisor, a real
mosquitto with a password user (as the Mosquitto add-on's `addons` user), the aabridge binary,
and a stand-in ingress proxy in front of its console, driven by headless Chromium.

Usage: ha-addon/tests/test_addon.py [--bridge .build/debug/aabridge] [--artefacts DIR] [--container NAME]

With --container (scripts/verify-addon-image), the same checks run the add-on image's own run
script and aabridge inside a buildah container of the image (chroot isolation: the host's
loopback network), with the data and runtime directories mounted at /data and /run/aabridge.

1. Good options: the run script asks the stand-in Supervisor for services/mqtt with the
   bearer token, writes the configuration, starts aabridge, and the bridge comes online
   (retained aabridge/bridge/state) on the broker the Supervisor named, with its database in
   the add-on's data directory; SIGTERM to the script reaches the bridge.
2. The console through the stand-in ingress proxy: the page under /api/hassio_ingress/<token>/
   loads in Chromium, its script's requests (events, metrics, api/request) all go through the
   prefix, and Show picker works. Then the page's own headers through the prefix, a forged
   X-Ingress-Path that is never reflected, and twelve event streams at once from the proxy.
3. The broker later: 400 "Service not enabled" four times, then the service (one waiting line,
   capped retries); the service gone and back unchanged (no restart); back with another broker
   and password (the bridge restarted onto it); a stop while waiting; the waiting line's pace;
   a token the Supervisor refuses.
4. Bad options (a wrong type, an unknown product): one clear line per option with its path,
   the script exits non-zero once, nothing is started, nothing is stored, nothing is asked.
5. The add-on's files agree with the project: config.yaml's version is BridgeModule's, the
   Dockerfile's package lists are docker/Dockerfile's, every option has a translation
   (ha-addon/tests/test_supervisor_rules.py checks the files against the Supervisor's rules).

Not the Supervisor itself nor its ingress (their behaviour is taken from their documentation
and code, ha-addon/aabridge/DOCS.md), and not the image: scripts/verify-addon-image builds it.
"""
import argparse
import http.client
import http.server
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "harness"))
from common import check as record, free_port, listening, summary, wait_for  # noqa: E402


def check(name, ok, detail=""):
    """The harness's PASS/FAIL line, with the detail only when it failed (it is long)."""
    return record(name, ok, "" if ok else detail)

TOKEN = "test-supervisor-token"
MQTT_USER = "addons"
MQTT_PASSWORD = "pw-" + os.urandom(6).hex()
INGRESS = "/api/hassio_ingress/Xy9_-ingressTOKEN0123456789abcdefghijklmnopq"
GOOD_OPTIONS = {
    "products": ["AirPods or Beats", "Fast Pair headphones"],
    "gateways": [{"name": "omg", "format": "openmqttgateway"}, {"name": "native", "format": "native"}],
    "rooms": [{"node": "esp32-3f2a", "room": "Kitchen"}],
    "identity": {"follow": True, "reattach": "auto"},
    "log_level": "info",
}


class Supervisor:
    """GET /services/mqtt as the Supervisor answers it (supervisor/api/services.py, v1
    get_service: the data of supervisor/services/modules/mqtt.py with its `addon` key), only
    with `Authorization: Bearer TOKEN`; every request is recorded with its time.

    `not_enabled` first answers, and every answer while `enabled` is false, are the
    Supervisor's `400 {"result": "error", "message": "Service not enabled"}` (api_process's
    APIError), as before the Mosquitto add-on has published the service or while it restarts."""

    def __init__(self, broker_port, password=None, not_enabled=0):
        self.port = free_port()
        self.requests = []
        self.times = []
        self.enabled = True
        self.not_enabled = not_enabled
        self.serve(broker_port, password or MQTT_PASSWORD)
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                outer.requests.append((self.path, self.headers.get("Authorization")))
                outer.times.append(time.monotonic())
                if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                    self.reply(401, {"result": "error", "message": "Unauthorized"})
                elif self.path == "/services/mqtt" and (outer.not_enabled > 0 or not outer.enabled):
                    outer.not_enabled -= 1
                    self.reply(400, {"result": "error", "message": "Service not enabled"})
                elif self.path == "/services/mqtt":
                    self.reply(200, outer.answer)
                else:
                    self.reply(404, {"result": "error", "message": "not found"})

            def reply(self, status, body):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def serve(self, broker_port, password):
        """The service as the Mosquitto add-on publishes it (a reinstall: another password)."""
        self.answer = {"result": "ok", "data": {"addon": "core_mosquitto", "host": "127.0.0.1", "port": broker_port, "ssl": False,
                                                "protocol": "3.1.1", "username": MQTT_USER, "password": password}}

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class IngressProxy:
    """What Home Assistant's ingress does to a request, on loopback: only paths under INGRESS
    are served; the prefix is stripped, `X-Ingress-Path: INGRESS` added, the browser's other
    headers (Host, Origin, Cookie) forwarded as they came; the answer streamed back (the
    console's /events is a server-sent event stream). Every path asked for is recorded."""

    def __init__(self, target_port):
        self.port = free_port()
        self.paths = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            # HTTP/1.0 to the browser: the answer ends when the connection closes, so a stream
            # is forwarded as it arrives, without re-chunking it.
            protocol_version = "HTTP/1.0"

            def forward(self):
                outer.paths.append(self.path)
                if not (self.path == INGRESS or self.path.startswith(INGRESS + "/")):
                    self.send_error(404, "outside the ingress prefix")
                    return
                path = self.path[len(INGRESS):] or "/"
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {name: value for name, value in self.headers.items() if name.lower() not in ("content-length", "connection")}
                headers["X-Ingress-Path"] = INGRESS
                connection = http.client.HTTPConnection("127.0.0.1", target_port, timeout=60)
                connection.putrequest(self.command, path, skip_host=True, skip_accept_encoding=True)
                for name, value in headers.items():
                    connection.putheader(name, value)
                if body is not None:
                    connection.putheader("Content-Length", str(len(body)))
                connection.endheaders(body)
                response = connection.getresponse()
                self.send_response(response.status)
                for name, value in response.getheaders():
                    if name.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(name, value)
                self.end_headers()
                try:
                    while True:
                        chunk = response.read1(65536)
                        if not chunk:
                            break
                        self.wfile.write(chunk)
                        self.wfile.flush()
                except (OSError, http.client.HTTPException):
                    # The browser went away, or the bridge stopped in the middle of /events
                    # (its chunked stream ends unfinished): the stream simply ends here too.
                    pass
                finally:
                    connection.close()

            do_GET = forward
            do_POST = forward
            do_HEAD = forward

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class PasswordBroker:
    """mosquitto on a free loopback port that lets in only MQTT_USER with its password."""

    def __init__(self, workdir, password=MQTT_PASSWORD):
        self.port = free_port()
        self.password = password
        os.makedirs(workdir, exist_ok=True)
        passwd = os.path.join(workdir, "passwd")
        subprocess.run(["mosquitto_passwd", "-c", "-b", passwd, MQTT_USER, password], check=True)
        conf = os.path.join(workdir, "mosquitto.conf")
        with open(conf, "w") as f:
            f.write(f"listener {self.port} 127.0.0.1\nallow_anonymous false\npassword_file {passwd}\npersistence false\n"
                    f"user root\nlog_dest file {workdir}/mosquitto.log\n")
        self.proc = subprocess.Popen(["mosquitto", "-c", conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not listening(self.port, 10):
            raise RuntimeError("mosquitto did not start")

    def retained(self, topic, wait_s=2):
        r = subprocess.run(["mosquitto_sub", "-h", "127.0.0.1", "-p", str(self.port), "-u", MQTT_USER, "-P", self.password,
                            "-t", topic, "-C", "1", "-W", str(wait_s)], capture_output=True, text=True)
        return r.stdout.strip()

    def clear(self, topic):
        subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(self.port), "-u", MQTT_USER, "-P", self.password,
                        "-t", topic, "-r", "-n"], check=True)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)


CONTAINER = None   # a buildah container of the add-on image (--container)


def start_addon(bridge, workdir, options, supervisor, listen_port, extra_env=None):
    data = os.path.join(workdir, "data")
    runtime = os.path.join(workdir, "run")
    os.makedirs(data, exist_ok=True)
    os.makedirs(runtime, exist_ok=True)
    with open(os.path.join(data, "options.json"), "w") as f:
        json.dump(options, f)
    env = {key: value for key, value in os.environ.items() if not key.startswith("AABRIDGE_")}
    env.update({
        "SUPERVISOR_TOKEN": TOKEN, "AABRIDGE_ADDON_SUPERVISOR": f"http://127.0.0.1:{supervisor.port}",
        "AABRIDGE_ADDON_DATA": data, "AABRIDGE_ADDON_RUNTIME": runtime,
        "AABRIDGE_ADDON_TEMPLATE": os.path.join(ROOT, "config", "aabridge.yaml"),
        "AABRIDGE_ADDON_LISTEN": f"127.0.0.1:{listen_port}", "AABRIDGE_BIN": bridge,
    })
    env.update(extra_env or {})
    command = [os.path.join(ROOT, "ha-addon", "aabridge", "run")]
    if CONTAINER:
        # The image's own paths: only the Supervisor's address, the token and the listen port
        # (and the test's allowed Host) are given.
        inside = {key: env[key] for key in ("SUPERVISOR_TOKEN", "AABRIDGE_ADDON_SUPERVISOR", "AABRIDGE_ADDON_LISTEN") + tuple(extra_env or {})}
        command = ["buildah", "run", "--isolation", "chroot", "--volume", f"{data}:/data", "--volume", f"{runtime}:/run/aabridge"]
        command += [argument for key, value in inside.items() for argument in ("--env", f"{key}={value}")]
        command += [CONTAINER, "--", "/usr/local/bin/aabridge-addon"]
    log = open(os.path.join(workdir, "addon.log"), "w")
    proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
    log.close()
    return proc, data, runtime, os.path.join(workdir, "addon.log")


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def fetch(port, path, headers):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", path, headers=headers)
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response.status, dict((k.lower(), v) for k, v in response.getheaders()), body.decode(errors="replace")


def browse(url, artefacts):
    """The page through the proxy in headless Chromium: online (events), Show picker (api/request)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1400,900"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    seen = {}
    try:
        driver.get(url)
        wait = WebDriverWait(driver, 20, poll_frequency=0.1)
        wait.until(lambda d: d.find_element(By.ID, "bridge-state").text == "online")
        seen["online"] = True
        driver.find_element(By.ID, "picker-show").click()
        wait.until(lambda d: "presented" in d.find_element(By.ID, "picker-state").text)
        seen["picker"] = driver.find_element(By.ID, "picker-state").text
        wait.until(lambda d: "picker/show: ok" in d.find_element(By.ID, "log").text)
        seen["log"] = driver.find_element(By.ID, "log").text
        os.makedirs(artefacts, exist_ok=True)
        driver.save_screenshot(os.path.join(artefacts, "ingress-console.png"))
    except Exception as error:  # noqa: BLE001 - the failure is reported as a check
        seen["error"] = f"{type(error).__name__}: {error}"
        try:
            seen["page"] = driver.find_element(By.TAG_NAME, "body").text[:500]
        except Exception:  # noqa: BLE001
            pass
    finally:
        driver.quit()
    return seen


def descendants(pid):
    # Every thread's children: buildah is a Go program, and whichever of its threads forks
    # holds the child (the main thread's list alone missed aabridge in half the runs).
    children = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                children += [int(child) for child in f.read().split()]
        except OSError:
            pass
    return children + [grandchild for child in children for grandchild in descendants(child)]


def stop(proc, timeout=20):
    if proc.poll() is None:
        # buildah run does not forward SIGTERM (it kills its child): the signal goes to aabridge
        # itself, as the container's stop would send it to its PID 1.
        targets = [pid for pid in descendants(proc.pid) if read(f"/proc/{pid}/comm").strip() == "aabridge"] if CONTAINER else []
        for pid in targets or [proc.pid]:
            os.kill(pid, signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


def good_options(bridge, workdir, broker, artefacts, browser):
    print("== good options: the run script, the stand-in Supervisor, a real broker")
    supervisor = Supervisor(broker.port)
    listen = free_port()
    proxy = IngressProxy(listen)
    # The stand-in proxy reaches the console from loopback, which the Host rule always holds
    # to it (a browser on this machine connects from there too); the Supervisor's 172.30.32.2
    # is exempt instead (http.allowed_clients). So here the proxy's own name is allowed.
    proc, data, runtime, log = start_addon(bridge, workdir, GOOD_OPTIONS, supervisor, listen,
                                           {"AABRIDGE_HTTP_ALLOWED_HOSTS": f"127.0.0.1:{proxy.port}"})
    try:
        online = wait_for(lambda: broker.retained("aabridge/bridge/state", 1) == '{"state":"online"}' or proc.poll() is not None, 30)
        state = broker.retained("aabridge/bridge/state")
        check("the bridge is online on the broker the Supervisor named", online and state == '{"state":"online"}',
              f"bridge/state {state!r}; log: {read(log)[-1500:]}")
        check("the Supervisor was asked for services/mqtt with the bearer token",
              ("/services/mqtt", f"Bearer {TOKEN}") in supervisor.requests, f"{supervisor.requests}")
        config = read(os.path.join(runtime, "aabridge.yaml"))
        mode = oct(os.stat(os.path.join(runtime, "aabridge.yaml")).st_mode & 0o777) if config else "missing"
        check("the configuration is written 0600 outside the data directory, with the ingress proxy as the one allowed client",
              mode == "0o600" and '"172.30.32.2"' in config and f'"mqtt://127.0.0.1:{broker.port}"' in config,
              f"mode {mode}; {config[:300]!r}")
        check("the service answer (with the password) is not left behind", not os.path.exists(os.path.join(runtime, "mqtt.json")))
        check("the database is in the add-on's data directory", wait_for(lambda: os.path.exists(os.path.join(data, "aabridge.sqlite3")), 5),
              f"{os.listdir(data)}")
        check("bridge/info is published (discovery and topics as ever)", '"version"' in broker.retained("aabridge/bridge/info"))

        print("== the console through the stand-in ingress proxy")
        page_url = f"http://127.0.0.1:{proxy.port}{INGRESS}/"
        origin = f"http://127.0.0.1:{proxy.port}"
        status, headers, body = fetch(proxy.port, INGRESS + "/", {"Host": f"127.0.0.1:{proxy.port}"})
        check("the page answers through the prefix, naming it for its script",
              status == 200 and f'data-base="{INGRESS}"' in body, f"{status} {body[:200]!r}")
        # From loopback the proxy is not the Supervisor: the page may still not be framed.
        check("through a proxy that is not the listed client, the page still refuses frames",
              headers.get("x-frame-options") == "DENY" and "frame-ancestors 'none'" in headers.get("content-security-policy", ""),
              f"{headers}")
        status, _, body = fetch(listen, "/", {"Host": f"127.0.0.1:{listen}", "X-Ingress-Path": '/api/hassio_ingress/x"><script>'})
        check("a malformed X-Ingress-Path is ignored, never reflected",
              status == 200 and '<html lang="en">' in body and 'data-base="' not in body and 'x"><script>' not in body, body[:200])
        status, _, body = fetch(proxy.port, INGRESS + "/metrics", {"Host": f"127.0.0.1:{proxy.port}", "Origin": origin})
        check("/metrics through the prefix", status == 200 and "aabridge_" in body, f"{status} {body[:120]!r}")
        if browser:
            seen = browse(page_url, artefacts)
            check("Chromium: the console through ingress is online (its events stream through the prefix)", seen.get("online"),
                  f"{seen}")
            check("Chromium: Show picker through the prefix (api/request)", "presented" in seen.get("picker", ""), f"{seen}")
            # The browser's own favicon request of a top-level page goes to the origin's root
            # (inside Home Assistant's iframe it is Home Assistant's); the page asks for nothing else.
            outside = [path for path in proxy.paths if not path.startswith(INGRESS) and path != "/favicon.ico"]
            check("every request the page made was under the ingress prefix", not outside, f"outside: {outside}")
            for path in ("/events", "/metrics", "/api/request/picker/show"):
                check(f"the page asked for {INGRESS[:20]}…{path}", INGRESS + path in proxy.paths, f"{proxy.paths}")
            check("the picker was shown on MQTT", '"presented"' in broker.retained("aabridge/bridge/picker"))
        streams_at_once(proxy.port)
        code = stop(proc)
        check("SIGTERM: passed on by the run script, aabridge exits 0 and says offline", code == 0
              and broker.retained("aabridge/bridge/state") == '{"state":"offline"}', f"exit {code}; log: {read(log)[-1500:]}")
    finally:
        stop(proc)
        proxy.stop()
        supervisor.stop()


def streams_at_once(proxy_port, streams=12):
    """Several console tabs under ingress: every one holds /events open, all from the proxy's one
    address (here 127.0.0.1, as 172.30.32.2 on the box). Twelve streams are more than the
    default http.connections_per_client (8); then /metrics must still answer."""
    import socket
    opened, answered = [], 0
    try:
        for _ in range(streams):
            connection = socket.create_connection(("127.0.0.1", proxy_port), timeout=5)
            opened.append(connection)
            connection.sendall(f"GET {INGRESS}/events HTTP/1.1\r\nHost: 127.0.0.1:{proxy_port}\r\n\r\n".encode())
        for connection in opened:
            try:
                head = connection.recv(64)
            except OSError:
                head = b""
            answered += head.startswith(b"HTTP/1.0 200") or head.startswith(b"HTTP/1.1 200")
        try:
            status, _, body = fetch(proxy_port, INGRESS + "/metrics", {"Host": f"127.0.0.1:{proxy_port}"})
        except (OSError, http.client.HTTPException) as error:
            status, body = None, f"{type(error).__name__}: {error}"
    finally:
        for connection in opened:
            connection.close()
    check(f"{streams} event streams through the proxy at once (several tabs) are all served, and /metrics still answers",
          answered == streams and status == 200, f"{answered} of {streams} streams; /metrics {status} {body[:120]!r}")


def broker_later(bridge, workdir, broker):
    """The broker comes after the add-on, goes away and comes back, and comes back changed."""
    print("== the MQTT service later: 400 Service not enabled, then there; gone and back; changed")
    broker.clear("aabridge/bridge/state")
    supervisor = Supervisor(broker.port, not_enabled=4)
    listen = free_port()
    # Bounded waits: retries from 1 s doubling to 2 s, the service asked for again every second.
    fast = {"AABRIDGE_ADDON_RETRY_FIRST_S": "1", "AABRIDGE_ADDON_RETRY_MAX_S": "2", "AABRIDGE_ADDON_RECHECK_S": "1"}
    proc, data, runtime, log = start_addon(bridge, workdir, GOOD_OPTIONS, supervisor, listen, fast)
    other = None
    try:
        online = wait_for(lambda: broker.retained("aabridge/bridge/state", 1) == '{"state":"online"}' or proc.poll() is not None, 40)
        text = read(log)
        check("after four answers of 400 Service not enabled the bridge comes online, the script still there",
              online and proc.poll() is None and len(supervisor.requests) >= 5, f"{len(supervisor.requests)} requests; {text[-1500:]}")
        waiting = [line for line in text.splitlines() if "waiting for the MQTT service" in line]
        check("one clear line for the wait (one a minute, not one a try), with the Supervisor's answer",
              len(waiting) == 1 and 'the Supervisor answered 400 "Service not enabled"' in waiting[0]
              and "Mosquitto broker add-on" in waiting[0], f"{waiting}")
        gaps = [round(b - a, 1) for a, b in zip(supervisor.times, supervisor.times[1:5])]
        check("the retries grow and are capped (1 s, then 2 s)", len(gaps) == 4 and 0.7 <= gaps[0] <= 1.7
              and all(1.7 <= gap <= 3.5 for gap in gaps[1:]), f"gaps {gaps}")

        supervisor.enabled = False
        gone = wait_for(lambda: "the MQTT service is gone" in read(log), 10)
        time.sleep(1.5)
        check("the service gone while the bridge runs: one line, the bridge keeps running",
              gone and proc.poll() is None and read(log).count("the MQTT service is gone") == 1
              and read(log).count("add-on: starting aabridge") == 1, read(log)[-1500:])
        supervisor.enabled = True
        back = wait_for(lambda: "the MQTT service is back, unchanged" in read(log), 10)
        check("the service back unchanged: the bridge is not restarted, still online",
              back and read(log).count("add-on: starting aabridge") == 1 and broker.retained("aabridge/bridge/state") == '{"state":"online"}',
              read(log)[-1500:])

        # The Mosquitto add-on reinstalled: another broker, another password for the add-ons user.
        other = PasswordBroker(os.path.join(workdir, "other-broker"), password="pw-" + os.urandom(6).hex())
        supervisor.enabled = False
        time.sleep(1.5)
        supervisor.serve(other.port, other.password)
        supervisor.enabled = True
        moved = wait_for(lambda: other.retained("aabridge/bridge/state", 1) == '{"state":"online"}' or proc.poll() is not None, 40)
        text = read(log)
        check("the service back changed (another broker and password): the bridge is restarted with it, online there",
              moved and proc.poll() is None and "restarting aabridge with it" in text and text.count("add-on: starting aabridge") == 2,
              text[-2000:])
        config = read(os.path.join(runtime, "aabridge.yaml"))
        check("the configuration names the new broker", f'"mqtt://127.0.0.1:{other.port}"' in config, config[:300])
        code = stop(proc)
        check("SIGTERM after the restart: exit 0, offline on the new broker",
              code == 0 and other.retained("aabridge/bridge/state") == '{"state":"offline"}', f"exit {code}; {read(log)[-1500:]}")
    finally:
        stop(proc)
        supervisor.stop()
        if other:
            other.stop()


def stopped_while_waiting(bridge, workdir, broker):
    print("== stopped while waiting for the service")
    supervisor = Supervisor(broker.port, not_enabled=1000)
    proc, _, runtime, log = start_addon(bridge, workdir, GOOD_OPTIONS, supervisor, free_port(), {"AABRIDGE_ADDON_RETRY_FIRST_S": "30"})
    try:
        wait_for(lambda: "waiting for the MQTT service" in read(log), 15)
        started = time.monotonic()
        code = stop(proc) if not CONTAINER else None
        if CONTAINER:
            # buildah run does not pass SIGTERM on; the script is PID 1 of no container here.
            proc.kill()
            proc.wait()
        else:
            check("SIGTERM during the 30 s pause ends the script at once, exit 0, nothing started",
                  code == 0 and time.monotonic() - started < 3 and not os.path.exists(os.path.join(runtime, "aabridge.yaml")),
                  f"exit {code} after {time.monotonic() - started:.1f} s; {read(log)[-800:]}")
    finally:
        stop(proc)
        supervisor.stop()


def waiting_pace(bridge, workdir, broker):
    """While it waits: one line per report period (shortened here to 3 s), not one per try; a
    token the Supervisor refuses stops the script, since waiting would not change it."""
    print("== while waiting: the line's pace; a refused token")
    supervisor = Supervisor(broker.port, not_enabled=1000)
    pace = {"AABRIDGE_ADDON_RETRY_FIRST_S": "1", "AABRIDGE_ADDON_RETRY_MAX_S": "1", "AABRIDGE_ADDON_REPORT_S": "3"}
    proc, _, _, log = start_addon(bridge, os.path.join(workdir, "pace"), GOOD_OPTIONS, supervisor, free_port(), pace)
    try:
        wait_for(lambda: len(supervisor.requests) >= 8 or proc.poll() is not None, 20)
        lines = read(log).count("waiting for the MQTT service")
        # Whole seconds in the script (bash's SECONDS): a period may end early by up to one.
        check("eight tries a second apart, a line every 3 s: two to four lines, the script still waiting",
              len(supervisor.requests) >= 8 and 2 <= lines <= 4 and proc.poll() is None,
              f"{len(supervisor.requests)} tries, {lines} lines; {read(log)[-800:]}")
    finally:
        stop(proc)
        supervisor.stop()
    supervisor = Supervisor(broker.port)
    proc, _, runtime, log = start_addon(bridge, os.path.join(workdir, "token"), GOOD_OPTIONS, supervisor, free_port(),
                                        {"SUPERVISOR_TOKEN": "not-the-token"})
    try:
        code = proc.wait(20)
    except subprocess.TimeoutExpired:
        code = None
    finally:
        stop(proc)
        supervisor.stop()
    check("a token the Supervisor refuses (401): the script stops at once, saying so, nothing started",
          code == 1 and 'the Supervisor answered 401 "Unauthorized"' in read(log) and len(supervisor.requests) == 1
          and not os.path.exists(os.path.join(runtime, "aabridge.yaml")), f"exit {code}; {read(log)[-800:]}")


def bad_options(bridge, workdir, broker):
    print("== bad options: a wrong type, an unknown product")
    # The first part's bridge left its retained offline state: nothing may say anything now.
    broker.clear("aabridge/bridge/state")
    supervisor = Supervisor(broker.port)
    options = dict(GOOD_OPTIONS, products=["AirPods or Beats", "Sony WH-1000XM5"], identity={"follow": "yes", "reattach": "auto"})
    listen = free_port()
    started = time.monotonic()
    proc, data, runtime, log = start_addon(bridge, workdir, options, supervisor, listen)
    try:
        code = proc.wait(20)
    except subprocess.TimeoutExpired:
        code = None
    text = read(log)
    check("the run script exits non-zero by itself, once", code not in (None, 0), f"exit {code}; {text[-800:]}")
    check("a clear line names the unknown product's option", "options.products[1]: unknown product 'Sony WH-1000XM5'" in text, text)
    check("a clear line names the wrongly typed option", "options.identity.follow: expected true or false" in text, text)
    check("nothing was started: no configuration, no database, no console, nothing on the broker",
          not os.path.exists(os.path.join(runtime, "aabridge.yaml")) and not os.path.exists(os.path.join(data, "aabridge.sqlite3"))
          and not listening(listen, 0.5) and broker.retained("aabridge/bridge/state", 1) == "", f"{os.listdir(data)}")
    check("the options are checked before the broker is waited for: the Supervisor was not asked",
          not supervisor.requests, f"{supervisor.requests}")
    print(f"  figure: bad options stopped in {time.monotonic() - started:.1f} s")
    supervisor.stop()


def files_agree():
    print("== the add-on's files agree with the project")
    config = read(os.path.join(ROOT, "ha-addon", "aabridge", "config.yaml"))
    version = re.search(r'^version: "([^"]+)"', config, re.M)
    module = re.search(r'static let version = "([^"]+)"', read(os.path.join(ROOT, "Sources", "Bridge", "Bridge.swift")))
    check("config.yaml's version is the bridge's", version and module and version.group(1) == module.group(1),
          f"{version and version.group(1)} vs {module and module.group(1)}")

    def packages(text):
        return [sorted(match.split()) for match in re.findall(r"--no-install-recommends \\\n((?:\s+[\w.+-]+(?: [\w.+-]+)*(?: \\)?\n)+)",
                                                               text)]
    project = packages(read(os.path.join(ROOT, "docker", "Dockerfile")))
    addon = packages(read(os.path.join(ROOT, "ha-addon", "aabridge", "Dockerfile")))
    flat = lambda lists: [sorted(p for p in words if p != "\\") for words in lists]  # noqa: E731
    project, addon = flat(project), flat(addon)
    check("the add-on builds with docker/Dockerfile's packages (both stages add only curl, the build its CA certificates)",
          len(project) == 2 and len(addon) == 2 and sorted(project[0] + ["curl", "ca-certificates"]) == addon[0]
          and sorted(project[1] + ["curl"]) == addon[1],
          f"{project} vs {addon}")
    translations = read(os.path.join(ROOT, "ha-addon", "aabridge", "translations", "en.yaml"))
    schema = config.split("\nschema:\n", 1)[1]
    options = re.findall(r"^  (\w+):", schema, re.M)
    check("every option has a name and description in translations/en.yaml",
          options and all(f"\n  {name}:\n    name:" in translations for name in options), f"{options}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bridge", default=os.path.join(ROOT, ".build", "debug", "aabridge"))
    parser.add_argument("--artefacts", default=os.path.join(ROOT, ".build", "artefacts", "addon"))
    parser.add_argument("--container")
    arguments = parser.parse_args()
    global CONTAINER
    CONTAINER = arguments.container
    bridge = os.path.abspath(arguments.bridge)
    started = time.monotonic()
    browser = shutil.which("chromedriver") is not None and subprocess.run(
        ["/usr/bin/python3", "-c", "import selenium.webdriver"], capture_output=True).returncode == 0
    if not browser and os.environ.get("CI") == "true":
        check("Chromium and selenium are installed (CI)", False, "scripts/install-deps --test installs them")
    skipped = [] if browser else [("Chromium", "chromium-driver or python3-selenium missing")]
    workdir = tempfile.mkdtemp(prefix="aabridge-addon-")
    broker = PasswordBroker(workdir)
    try:
        for part in ("good", "later", "stopped", "pace", "bad"):
            os.makedirs(os.path.join(workdir, part))
        good_options(bridge, os.path.join(workdir, "good"), broker, arguments.artefacts, browser)
        broker_later(bridge, os.path.join(workdir, "later"), broker)
        stopped_while_waiting(bridge, os.path.join(workdir, "stopped"), broker)
        waiting_pace(bridge, os.path.join(workdir, "pace"), broker)
        bad_options(bridge, os.path.join(workdir, "bad"), broker)
        files_agree()
    finally:
        broker.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    return summary(started, skipped)


if __name__ == "__main__":
    sys.exit(main())
