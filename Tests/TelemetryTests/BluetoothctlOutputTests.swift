import AccessoryKit
import Testing

@testable import Telemetry

/// bluetoothctl's answers as BlueZ 5.6x/5.7x prints them in its non-interactive mode.
@Suite struct BluetoothctlOutputTests {
    static func address(_ text: String) -> BluetoothAddress { BluetoothAddress(text)! }

    /// `bluetoothctl show` of a desktop's adapter (BlueZ 5.72).
    static let show = """
        Controller 00:1A:7D:DA:71:13 (public)
        \tManufacturer: 0x000a (10)
        \tVersion: 0x09 (9)
        \tName: desktop
        \tAlias: desktop
        \tClass: 0x007c010c (8126732)
        \tPowered: yes
        \tPowerState: on
        \tDiscoverable: no
        \tDiscoverableTimeout: 0x000000b4 (180)
        \tPairable: yes
        \tUUID: Audio Source              (0000110a-0000-1000-8000-00805f9b34fb)
        \tModalias: usb:v1D6Bp0246d0548
        \tDiscovering: no
        Advertising Features:
        \tActiveInstances: 0x00 (0)
        \tSupportedInstances: 0x05 (5)

        """

    @Test func showNamesTheController() {
        #expect(BluetoothctlOutput.controllers(Self.show) == [Self.address("00:1A:7D:DA:71:13")])
    }

    @Test("list names every controller once, with its name and [default] after the address")
    func listNamesEveryController() {
        let list = "Controller 00:1A:7D:DA:71:13 desktop [default]\nController 5C:F3:70:00:00:01 dongle\n"
        #expect(BluetoothctlOutput.controllers(list) == [Self.address("00:1A:7D:DA:71:13"), Self.address("5C:F3:70:00:00:01")])
        #expect(BluetoothctlOutput.controllers(list + list).count == 2)
    }

    @Test("no controller: bluetoothctl's error, or nothing")
    func noController() {
        #expect(BluetoothctlOutput.controllers("No default controller available\n").isEmpty)
        #expect(BluetoothctlOutput.controllers("").isEmpty)
    }

    @Test func devicesConnected() {
        let output = """
            Device F0:99:B6:12:34:56 Alice’s AirPods Pro
            Device 00:11:22:33:44:55 MX Keys
            Device 5A:1B:2C:3D:4E:5F 5A-1B-2C-3D-4E-5F

            """
        let devices = BluetoothctlOutput.devices(output)
        #expect(
            devices == [
                .init(address: Self.address("F0:99:B6:12:34:56"), name: "Alice’s AirPods Pro"),
                .init(address: Self.address("00:11:22:33:44:55"), name: "MX Keys"),
                // A device without a name: BlueZ's alias is then its address with dashes.
                .init(address: Self.address("5A:1B:2C:3D:4E:5F"), name: "5A-1B-2C-3D-4E-5F"),
            ])
    }

    @Test("nothing connected: no lines, or only blank ones")
    func nothingConnected() {
        #expect(BluetoothctlOutput.devices("").isEmpty)
        #expect(BluetoothctlOutput.devices("\n\n").isEmpty)
    }

    @Test("a device without a name, lower-case hex, CRLF line ends")
    func tolerantOfTheLineItself() {
        let devices = BluetoothctlOutput.devices("Device f0:99:b6:12:34:56\r\nDevice 00:11:22:33:44:55\tTab Name\r\n")
        #expect(devices.map(\.address) == [Self.address("F0:99:B6:12:34:56"), Self.address("00:11:22:33:44:55")])
        #expect(devices.map(\.name) == [nil, "Tab Name"])
    }

    @Test("event lines, colour codes, prompts and errors are no devices")
    func onlyAnswersCount() {
        let output = """
            \u{1B}[0;93m[CHG]\u{1B}[0m Device 11:11:11:11:11:11 RSSI: -60
            [NEW] Device 22:22:22:22:22:22 Somebody's phone
            [DEL] Device 33:33:33:33:33:33 Gone
            \u{01}\u{1B}[0;94m\u{02}[bluetooth]\u{01}\u{1B}[0m\u{02}# Device 44:44:44:44:44:44 prompt
            Agent registered
            Waiting to connect to bluetoothd...
              Device 55:55:55:55:55:55 indented
            Device 66:55:44:33:22 too short
            Device 66:55:44:33:22:11:00 too long
            Device GG:55:44:33:22:11 not hex
            Devices 77:77:77:77:77:77 another word
            \u{1B}[0;92mDevice 88:88:88:88:88:88 coloured answer\u{1B}[0m

            """
        let devices = BluetoothctlOutput.devices(output)
        #expect(devices == [.init(address: Self.address("88:88:88:88:88:88"), name: "coloured answer")])
    }

    @Test func aDeviceListedTwiceCountsOnce() {
        let devices = BluetoothctlOutput.devices("Device 00:11:22:33:44:55 A\nDevice 00:11:22:33:44:55 A\n")
        #expect(devices.count == 1)
    }

    @Test("info: Connected yes or no, and no answer when it names no device")
    func info() {
        let info = """
            Device F0:99:B6:12:34:56 (public)
            \tName: Alice’s AirPods Pro
            \tAlias: Alice’s AirPods Pro
            \tClass: 0x00240418 (2360344)
            \tIcon: audio-headphones
            \tPaired: yes
            \tBonded: yes
            \tTrusted: yes
            \tBlocked: no
            \tConnected: yes
            \tLegacyPairing: no

            """
        #expect(BluetoothctlOutput.isConnected(info: info) == true)
        #expect(BluetoothctlOutput.isConnected(info: info.replacingOccurrences(of: "Connected: yes", with: "Connected: no")) == false)
        #expect(BluetoothctlOutput.isConnected(info: "Device F0:99:B6:12:34:56 not available\n") == nil)
        #expect(BluetoothctlOutput.saysUnknownDevice("Device F0:99:B6:12:34:56 not available\n"))
        #expect(!BluetoothctlOutput.saysUnknownDevice(info))
    }

    @Test("BlueZ before 5.65 refuses the argument of devices Connected")
    func oldBlueZRefusesTheFilter() {
        #expect(BluetoothctlOutput.refusesDeviceFilter("\u{1B}[1;39mToo many arguments\u{1B}[0m\n"))
        #expect(BluetoothctlOutput.refusesDeviceFilter("Too many arguments: 1 > 0\n"))
        #expect(!BluetoothctlOutput.refusesDeviceFilter("Device 00:11:22:33:44:55 A\n"))
        #expect(!BluetoothctlOutput.refusesDeviceFilter("No default controller available\n"))
    }
}
