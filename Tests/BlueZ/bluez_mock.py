#!/usr/bin/env python3
"""BlueZ on a private bus for the bluez gateway's tests, driven line by line on stdin.

Starts its own dbus-daemon (--session: a private bus whose address the bridge takes as its
system bus, DBUS_SYSTEM_BUS_ADDRESS) and python-dbusmock's bluez5 template on it, prints
`ready <address>`, then answers each command with one line, `ok [value]` or `error <text>`:

  adapter <hci> [nomonitor]       the template's AddAdapter (powered; nomonitor: without
                                  AdvertisementMonitorManager1)
  remove-adapter <hci>            the template's RemoveAdapter (InterfacesRemoved)
  device <hci> <address> <public|random> <rssi>
                                  a Device1 object and its InterfacesAdded, with the address type
                                  asked for (the template's AddDevice always says public)
  manufacturer <hci> <address> <company> <hex> <rssi>
                                  PropertiesChanged {ManufacturerData, RSSI} on the device,
                                  emitted directly (the template has no helper for it)
  service <hci> <address> <uuid> <hex> <rssi>
                                  PropertiesChanged {ServiceData, RSSI}
  extras <hci> <address> <interface> <company> <hex> <rssi>
                                  PropertiesChanged on <interface> (org.bluez.Device1, or another
                                  the client must not read) of the device: {ManufacturerData,
                                  RSSI} among properties the client does not know (UUIDs,
                                  TxPower, an a{sv}, a struct, a Name of the wrong type)
  filter <hci>                    the discovery filter the client set, as JSON
  monitors <hci>                  the paths RegisterMonitor was called with, as JSON (the
                                  template records a registration and never calls it back)
  discovering <hci>               whether discovery runs
  exported                        what BlueZ would read of the client's monitors: GetManagedObjects
                                  on /org/aabridge/bluez of every other peer, as JSON
  deny <hci> <method>             the adapter's method answers org.freedesktop.DBus.Error.AccessDenied
  allow <hci> SetDiscoveryFilter  the method works again
  power <hci> on|off              the adapter's Powered, with its PropertiesChanged (as bluetoothctl power)
  stop-bluez / start-bluez        the mock leaves the bus (no org.bluez) / comes back, empty
  quit

With --no-monitor the adapters have no AdvertisementMonitorManager1 (a BlueZ without
--experimental).

Reads nothing from the bridge; never copies BlueZ's behaviour beyond what the tests need.
"""

import ctypes
import json
import os
import signal
import subprocess
import sys
import tempfile

import dbus
import dbusmock

MOCK = "org.freedesktop.DBus.Mock"
ADAPTER = "org.bluez.Adapter1"
DEVICE = "org.bluez.Device1"
PROPERTIES = "org.freedesktop.DBus.Properties"


def device_path(hci, address):
    return f"/org/bluez/{hci}/dev_" + address.upper().replace(":", "_")


class Mock:
    def __init__(self, monitor=True):
        self.monitor = monitor
        self.directory = tempfile.mkdtemp(prefix="aabridge-bluez-")
        self.address = f"unix:path={self.directory}/bus"
        # The bus dies with this process, however it ends (PR_SET_PDEATHSIG, SIGKILL): a test
        # that is killed leaves no dbus-daemon behind.
        self.daemon = subprocess.Popen(
            preexec_fn=lambda: ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL),
            args=["dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1", f"--address={self.address}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        # The daemon prints its address once it listens.
        self.address = self.daemon.stdout.readline().decode().strip()
        os.environ["DBUS_SYSTEM_BUS_ADDRESS"] = self.address
        self.bus = dbus.bus.BusConnection(self.address)
        self.server = None
        self.start_bluez()

    def start_bluez(self):
        self.server, _ = dbusmock.DBusTestCase.spawn_server_template(
            "bluez5", {"enable_monitor_api": self.monitor}, stdout=subprocess.DEVNULL, system_bus=True
        )
        self.main = self.bus.get_object("org.bluez", "/")

    def stop_bluez(self):
        if self.server:
            # As bluetoothd crashing or stopped: gone from the bus at once.
            self.server.kill()
            self.server.wait(5)
            self.server = None

    def object(self, path):
        return self.bus.get_object("org.bluez", path)

    def run(self, words):
        command = words[0]
        if command == "adapter":
            return self.main.AddAdapter(words[1], "aabridge-test", dbus_interface="org.bluez.Mock")
        if command == "remove-adapter":
            return self.main.RemoveAdapter(words[1], dbus_interface="org.bluez.Mock")
        if command == "device":
            hci, address, kind, rssi = words[1], words[2], words[3], int(words[4])
            path = device_path(hci, address)
            properties = {
                "Address": dbus.String(address),
                "AddressType": dbus.String(kind),
                "Adapter": dbus.ObjectPath(f"/org/bluez/{hci}"),
                "Paired": dbus.Boolean(False),
                "Connected": dbus.Boolean(False),
                "RSSI": dbus.Int16(rssi),
                "ManufacturerData": dbus.Dictionary({}, signature="qv"),
                "ServiceData": dbus.Dictionary({}, signature="sv"),
            }
            self.main.AddObject(path, DEVICE, properties, [], dbus_interface=MOCK)
            self.main.EmitSignal(
                "org.freedesktop.DBus.ObjectManager",
                "InterfacesAdded",
                "oa{sa{sv}}",
                [dbus.ObjectPath(path), dbus.Dictionary({DEVICE: dbus.Dictionary(properties, signature="sv")}, signature="sa{sv}")],
                dbus_interface=MOCK,
            )
            return path
        if command in ("manufacturer", "service"):
            hci, address, key, data, rssi = words[1], words[2], words[3], words[4], int(words[5])
            value = dbus.Array(bytes.fromhex(data), signature="y")
            if command == "manufacturer":
                changed = {"ManufacturerData": dbus.Dictionary({dbus.UInt16(int(key, 0)): value}, signature="qv")}
            else:
                changed = {"ServiceData": dbus.Dictionary({dbus.String(key): value}, signature="sv")}
            changed["RSSI"] = dbus.Int16(rssi)
            self.object(device_path(hci, address)).EmitSignal(
                PROPERTIES, "PropertiesChanged", "sa{sv}as", [DEVICE, dbus.Dictionary(changed, signature="sv"), dbus.Array([], signature="s")], dbus_interface=MOCK
            )
            return ""
        if command == "extras":
            hci, address, interface, key, data, rssi = words[1], words[2], words[3], words[4], words[5], int(words[6])
            changed = {
                "UUIDs": dbus.Array(["0000fe2c-0000-1000-8000-00805f9b34fb"], signature="s"),
                "TxPower": dbus.Int16(4),
                "ManufacturerData": dbus.Dictionary(
                    {dbus.UInt16(int(key, 0)): dbus.Array(bytes.fromhex(data), signature="y")}, signature="qv"
                ),
                "Unknown": dbus.Dictionary({"Nested": dbus.Array([dbus.Byte(1), dbus.Byte(2)], signature="y")}, signature="sv"),
                "RSSI": dbus.Int16(rssi),
                "Pair": dbus.Struct((dbus.Int32(1), dbus.String("two")), signature="is"),
                "Name": dbus.UInt32(7),
            }
            self.object(device_path(hci, address)).EmitSignal(
                PROPERTIES, "PropertiesChanged", "sa{sv}as", [interface, dbus.Dictionary(changed, signature="sv"), dbus.Array([], signature="s")], dbus_interface=MOCK
            )
            return ""
        if command == "filter":
            try:
                value = self.object(f"/org/bluez/{words[1]}").Get(ADAPTER, "DiscoveryFilter", dbus_interface=PROPERTIES)
            except dbus.exceptions.DBusException:
                value = {}  # none set yet
            return json.dumps({str(k): (bool(v) if isinstance(v, dbus.Boolean) else str(v)) for k, v in (value or {}).items()}, sort_keys=True)
        if command == "monitors":
            calls = self.object(f"/org/bluez/{words[1]}").GetMethodCalls("RegisterMonitor", dbus_interface=MOCK)
            return json.dumps([str(args[0]) for _, args in calls])
        if command == "exported":
            bluez = self.bus.get_name_owner("org.bluez")
            for peer in self.bus.list_names():
                if not peer.startswith(":") or peer in (bluez, self.bus.get_unique_name()):
                    continue
                try:
                    objects = self.bus.get_object(peer, "/org/aabridge/bluez").GetManagedObjects(
                        dbus_interface="org.freedesktop.DBus.ObjectManager", timeout=2
                    )
                except dbus.exceptions.DBusException:
                    continue
                return json.dumps(
                    {
                        str(path): {
                            "Type": str(interfaces["org.bluez.AdvertisementMonitor1"]["Type"]),
                            "Patterns": [[int(a), int(b), bytes(c).hex()] for a, b, c in interfaces["org.bluez.AdvertisementMonitor1"]["Patterns"]],
                        }
                        for path, interfaces in objects.items()
                    },
                    sort_keys=True,
                )
            return "{}"
        if command == "discovering":
            return str(bool(self.object(f"/org/bluez/{words[1]}").Get(ADAPTER, "Discovering", dbus_interface=PROPERTIES))).lower()
        if command == "deny":
            self.object(f"/org/bluez/{words[1]}").AddMethod(
                ADAPTER,
                words[2],
                "a{sv}" if words[2] == "SetDiscoveryFilter" else "",
                "",
                "raise dbus.exceptions.DBusException('Rejected send message', name='org.freedesktop.DBus.Error.AccessDenied')",
                dbus_interface=MOCK,
            )
            return ""
        if command == "allow":
            self.object(f"/org/bluez/{words[1]}").AddMethod(
                ADAPTER, "SetDiscoveryFilter", "a{sv}", "", "self.props['org.bluez.Adapter1']['DiscoveryFilter'] = args[0]", dbus_interface=MOCK
            )
            return ""
        if command == "power":
            self.object(f"/org/bluez/{words[1]}").UpdateProperties(
                ADAPTER, {"Powered": dbus.Boolean(words[2] == "on")}, dbus_interface=MOCK
            )
            return ""
        if command == "stop-bluez":
            self.stop_bluez()
            return ""
        if command == "start-bluez":
            self.start_bluez()
            return ""
        raise ValueError(f"unknown command {command}")

    def close(self):
        try:
            self.stop_bluez()
        finally:
            # SIGKILL: a test runner that ignores SIGTERM (the bridge's signal handling) passes
            # that on to its children, and a bus that outlives its test is a leak.
            self.daemon.kill()
            self.daemon.wait(5)


def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    mock = Mock(monitor="--no-monitor" not in sys.argv[1:])
    try:
        print(f"ready {mock.address}", flush=True)
        for line in sys.stdin:
            words = line.split()
            if not words:
                continue
            if words[0] == "quit":
                break
            try:
                print(f"ok {mock.run(words)}".rstrip(), flush=True)
            except Exception as error:  # pylint: disable=broad-except
                print(f"error {str(error).splitlines()[0] if str(error) else type(error).__name__}", flush=True)
    finally:
        mock.close()


if __name__ == "__main__":
    main()
