"""http-idle-connections: 40 idle connections from 127.0.0.1: /healthz from 127.0.0.2 still answers at
once, and the idle ones are closed after the header timeout"""
import socket
import time

from common import check, figure, wait_online
from support import http_bridge, http_request

NAME = "http-idle-connections"
ORDER = 120


def scenario_http_idle_connections(binary, root):
    print("== http-idle-connections: 40 idle connections from one address", flush=True)
    broker, client, bridge, port = http_bridge(binary, root, "http-idle-connections", "  header_timeout_s: 3\n")
    held = []
    try:
        check("http-idle-connections: the bridge came online", wait_online(client))
        for _ in range(40):
            s = socket.socket()
            s.settimeout(15)
            s.bind(("127.0.0.1", 0))
            s.connect(("127.0.0.1", port))
            held.append(s)
        time.sleep(0.5)
        start = time.monotonic()
        status = http_request(port, "GET", "/healthz", source="127.0.0.2")[0]
        took = time.monotonic() - start
        figure(f"http-idle-connections: /healthz from 127.0.0.2 beside 40 idle connections: {took * 1000:.0f} ms")
        check("http-idle-connections: /healthz from another address answers 200 within 2 s", status == 200 and took < 2,
              f"status {status}, {took:.2f} s")

        def closed(s):
            try:
                return s.recv(1) == b""
            except (socket.timeout, ConnectionResetError):
                return True
        start = time.monotonic()
        ends = [closed(s) for s in held]
        took = time.monotonic() - start
        figure(f"http-idle-connections: all 40 idle connections closed by the bridge within {took:.1f} s (header timeout 3 s)")
        check("http-idle-connections: every idle connection closed by the bridge within 10 s", all(ends) and took < 10,
              f"{sum(ends)} of 40 closed, {took:.1f} s")
        again = http_request(port, "GET", "/healthz")[0]
        check("http-idle-connections: 127.0.0.1 served again afterwards", again == 200, f"status {again}")
    finally:
        for s in held:
            s.close()
        bridge.stop()
        broker.stop()


def run(ctx):
    scenario_http_idle_connections(ctx.binary, ctx.root)
