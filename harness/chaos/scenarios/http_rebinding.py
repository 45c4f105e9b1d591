"""http-rebinding: a console without a token: foreign Host, missing Host, foreign Origin on the request
API, /events and /metrics: refused, the accessories unchanged"""
import json

from common import AIRPODS, BASE, HEADPHONES, check, wait_online
from support import http_bridge, http_request

NAME = "http-rebinding"
ORDER = 110


def scenario_http_rebinding(binary, root):
    print("== http-rebinding: a console without a token, a page on another name re-resolved to 127.0.0.1", flush=True)
    broker, client, bridge, port = http_bridge(binary, root, "http-rebinding")
    try:
        check("http-rebinding: the bridge came online", wait_online(client))
        evil = f"evil.example:{port}"
        remove = json.dumps({"id": AIRPODS}).encode()
        rename = json.dumps({"id": HEADPHONES, "name": "pwned"}).encode()
        statuses = {
            "remove, foreign Host and matching Origin": http_request(port, "POST", "/api/request/accessory/remove", evil,
                                                                      f"http://{evil}", remove)[0],
            "rename, foreign Host and matching Origin": http_request(port, "POST", "/api/request/accessory/rename", evil,
                                                                      f"http://{evil}", rename)[0],
            "remove, HTTP/1.0 without Host, foreign Origin": http_request(port, "POST", "/api/request/accessory/remove", None,
                                                                           "http://evil.example", remove, version="1.0")[0],
            "remove, own Host, foreign Origin": http_request(port, "POST", "/api/request/accessory/remove",
                                                             origin="http://evil.example", body=remove)[0],
            "/events, foreign Host": http_request(port, "GET", "/events", evil)[0],
            "/metrics, foreign Host": http_request(port, "GET", "/metrics", evil)[0],
        }
        for what, status in statuses.items():
            check(f"http-rebinding: {what} refused", status in (400, 403), f"status {status}")
        health = http_request(port, "POST", "/api/request/health", "localhost:%d" % port, f"http://localhost:{port}", b"{}")
        count = json.loads(health[1] or b"{}").get("data", {}).get("accessories")
        check("http-rebinding: both accessories still there (asked with Host localhost)", health[0] == 200 and count == 2,
              f"status {health[0]}, accessories {count}")
        listed = client.first(f"{BASE}/bridge/accessories", wait=3)
        check("http-rebinding: no accessory renamed", bool(listed) and "pwned" not in listed[0][1] and "Bob" in listed[0][1])
    finally:
        bridge.stop()
        broker.stop()


def run(ctx):
    scenario_http_rebinding(ctx.binary, ctx.root)
