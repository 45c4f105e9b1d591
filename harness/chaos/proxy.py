"""A TCP proxy between the bridge and mosquitto for chaos/chaos.py (stdlib only: threads and
sockets, 127.0.0.1 only).

It forwards both directions and reads the bridge -> broker direction as MQTT packets, so a
scenario can see what the bridge published even when nothing of it reaches the broker. Three
faults, each switched on and off by the scenario:
  withhold()  bridge -> broker bytes are kept (and parsed), not forwarded; broker -> bridge
              still flows, so the bridge keeps receiving and believes it is connected
  cut()       both TCP connections of every link are closed; what was withheld is dropped
              (the broker never sees it, the bridge's MQTT library still holds it in flight)
  refuse()    new connections are accepted and closed at once (the bridge's reconnects
              fail) until release()
"""
import socket
import threading
import time

PUBLISH = 3
CONNECT = 1


class Publish:
    def __init__(self, topic, payload, qos, retain, dup, withheld, at):
        self.topic, self.payload, self.qos, self.retain, self.dup = topic, payload, qos, retain, dup
        self.withheld = withheld   # kept by withhold(), never forwarded
        self.at = at               # time.monotonic() when the proxy read its last byte

    def __repr__(self):
        return f"Publish({self.topic!r}, {len(self.payload)} bytes, qos={self.qos}, withheld={self.withheld})"


class PacketReader:
    """Splits one direction of an MQTT connection into packets (MQTT 3.1.1 and 5)."""

    def __init__(self):
        self.buffer = bytearray()
        self.version = 4

    def feed(self, data):
        """The complete packets now in the buffer: [(type, flags, body)]."""
        self.buffer += data
        packets = []
        while len(self.buffer) >= 2:
            length, multiplier, index = 0, 1, 1
            while True:
                if index >= len(self.buffer):
                    return packets          # the length is not complete yet
                byte = self.buffer[index]
                length += (byte & 0x7F) * multiplier
                multiplier *= 128
                index += 1
                if not byte & 0x80:
                    break
                if index > 4:
                    raise ValueError("malformed remaining length")
            if len(self.buffer) < index + length:
                return packets
            first = self.buffer[0]
            body = bytes(self.buffer[index:index + length])
            del self.buffer[:index + length]
            if first >> 4 == CONNECT and len(body) >= 7:
                name_length = int.from_bytes(body[0:2], "big")
                self.version = body[2 + name_length]   # 4 = 3.1.1, 5 = MQTT 5
            packets.append((first >> 4, first & 0x0F, body))
        return packets

    def publish(self, flags, body):
        """(topic, payload, qos, retain, dup) of a PUBLISH body."""
        qos = (flags >> 1) & 3
        topic_length = int.from_bytes(body[0:2], "big")
        topic = body[2:2 + topic_length].decode("utf-8", "replace")
        at = 2 + topic_length + (2 if qos else 0)
        if self.version == 5:
            length, multiplier = 0, 1
            while True:
                byte = body[at]
                at += 1
                length += (byte & 0x7F) * multiplier
                multiplier *= 128
                if not byte & 0x80:
                    break
            at += length
        return topic, body[at:], qos, bool(flags & 1), bool(flags & 8)


class Link:
    """One bridge connection and its connection to the broker."""

    def __init__(self, proxy, client, upstream):
        self.proxy, self.client, self.upstream = proxy, client, upstream
        self.reader = PacketReader()
        self.withheld_bytes = 0
        self.closed = False

    def start(self):
        threading.Thread(target=self.pump, args=(self.client, self.upstream, True), daemon=True).start()
        threading.Thread(target=self.pump, args=(self.upstream, self.client, False), daemon=True).start()

    def pump(self, source, destination, from_bridge):
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                if from_bridge:
                    withhold = self.proxy.withholding
                    if withhold:
                        self.withheld_bytes += len(data)
                    now = time.monotonic()
                    for kind, flags, body in self.reader.feed(data):
                        if kind == PUBLISH:
                            self.proxy.record(Publish(*self.reader.publish(flags, body), withheld=withhold, at=now))
                    if withhold:
                        continue
                destination.sendall(data)
        except (OSError, ValueError, IndexError):
            pass
        finally:
            self.close()

    def close(self):
        if self.closed:
            return
        self.closed = True
        for s in (self.client, self.upstream):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()


class Proxy:
    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.listener.settimeout(0.2)
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.withholding = False
        self.refusing = False
        self.stopped = False
        self.links = []
        self.publishes = []      # every PUBLISH the bridge sent through the proxy, in order
        self.accepted = 0
        self.refused = 0
        threading.Thread(target=self.accept_loop, daemon=True).start()

    def record(self, publish):
        with self.lock:
            self.publishes.append(publish)

    def accept_loop(self):
        while not self.stopped:
            try:
                client, _ = self.listener.accept()
            except socket.timeout:
                continue
            except OSError:
                break
            with self.lock:
                refuse = self.refusing
                if refuse:
                    self.refused += 1
            if refuse:
                client.close()
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=5)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            for s in (client, upstream):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            link = Link(self, client, upstream)
            with self.lock:
                self.links.append(link)
                self.accepted += 1
            link.start()

    def withhold(self):
        self.withholding = True

    def cut(self):
        """Closes every link; returns the bytes withheld (and now dropped)."""
        with self.lock:
            links, self.links = self.links, []
        for link in links:
            link.close()
        self.withholding = False
        return sum(link.withheld_bytes for link in links)

    def refuse(self):
        with self.lock:
            self.refusing = True

    def release(self):
        with self.lock:
            self.refusing = False

    def find(self, predicate):
        with self.lock:
            return [p for p in self.publishes if predicate(p)]

    def stop(self):
        self.stopped = True
        self.cut()
        self.listener.close()
