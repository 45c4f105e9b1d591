import AccessoryKit
import Foundation
import Testing

@testable import Telemetry

private typealias Pairing = BlueZPairingStoreTests

/// BlueZ's pairing storage, written the way bluetoothd writes it into a temporary directory.
@Suite struct BlueZPairingStoreTests {
    /// Bluetooth Core Specification, Vol 3 Part H, Appendix D.7: IRK ec0234a357c8ad05341010a60a397d9b
    /// (most significant byte first) resolves 70:81:94:0D:FB:AA. bluetoothd writes the same key
    /// least significant byte first, in upper case (src/adapter.c store_irk, "%2.2X" per byte).
    static let specKeyMSBFirst = "ec0234a357c8ad05341010a60a397d9b"
    static let specKeyAsBlueZWritesIt = "9B7D390AA610103405ADC857A33402EC"
    static let adapter = "00:1A:7D:DA:71:13"

    /// An `info` file as bluetoothd 5.6x writes it for LE-paired earbuds.
    static func info(name: String = "Alice’s AirPods Pro", key: String? = specKeyAsBlueZWritesIt) -> String {
        var text = """
            [General]
            Name=\(name)
            Class=0x240418
            SupportedTechnologies=BR/EDR;LE;
            Trusted=true
            Blocked=false
            WakeAllowed=true
            Services=0000110b-0000-1000-8000-00805f9b34fb;0000110e-0000-1000-8000-00805f9b34fb;

            [LinkKey]
            Key=00112233445566778899AABBCCDDEEFF
            Type=4
            PINLength=0

            [LongTermKey]
            Key=FFEEDDCCBBAA99887766554433221100
            Authenticated=0
            EncSize=16
            EDiv=0
            Rand=0

            """
        if let key { text += "[IdentityResolvingKey]\nKey=\(key)\n" }
        return text
    }

    /// A temporary BlueZ storage directory, removed when the test ends.
    final class Directory {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("bluez-\(UUID().uuidString)")
        var path: String { url.path }

        init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(at: url) }

        func write(_ relative: String, _ text: String) throws {
            let file = url.appendingPathComponent(relative)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: file, atomically: true, encoding: .utf8)
        }

        func makeDirectory(_ relative: String) throws {
            try FileManager.default.createDirectory(at: url.appendingPathComponent(relative), withIntermediateDirectories: true)
        }
    }

    @Test("the key BlueZ writes least significant byte first is reversed: the Core Specification's sample IRK resolves its sample address")
    func byteOrder() throws {
        let (name, _, result) = BlueZPairings.parseInfo(Array(Self.info().utf8))
        #expect(name == "Alice’s AirPods Pro")
        let key = try result.get()
        #expect(key.hexDigits == Self.specKeyMSBFirst)
        let irk = try #require(IdentityResolvingKey(bytes: key.bytes))
        #expect(irk.resolves(try #require(BluetoothAddress("70:81:94:0D:FB:AA"))))
        // Taken as written (not reversed), the same text resolves nothing: the order matters.
        let unreversed = try #require(IdentityResolvingKey(hex: Self.specKeyAsBlueZWritesIt))
        #expect(!unreversed.resolves(try #require(BluetoothAddress("70:81:94:0D:FB:AA"))))
    }

    @Test("GLib key-file syntax: comments, CRLF, spaces around '=', escapes, localised keys, repeated groups")
    func keyFileSyntax() throws {
        let text =
            "# written by hand\r\n\r\n[General]\r\n  Name = \\sBob’s\\tBeats \r\nName[de]=Bobs Kopfhörer\r\nAlias=Gym\\\\Beats\r\n"
            + "; not a GLib comment, and not a key either\r\n[IdentityResolvingKey]\r\n# Key=00000000000000000000000000000000\r\n"
            + "Key = 0x\(Self.specKeyAsBlueZWritesIt.lowercased()) \r\n[General]\r\nTrusted=true\r\n"
        let (name, alias, result) = BlueZPairings.parseInfo(Array(text.utf8))
        #expect(name == " Bob’s\tBeats")
        #expect(alias == "Gym\\Beats")
        #expect(try result.get().hexDigits == Self.specKeyMSBFirst)
    }

    @Test(
        "a device without a usable IRK is a per-device problem",
        arguments: [
            (Pairing.info(key: nil), BlueZPairings.Problem.noKey),
            ("[General]\nName=Speaker\n[LinkKey]\nKey=\(Pairing.specKeyAsBlueZWritesIt)\n", .noKey),
            ("[IdentityResolvingKey]\n", .noKey),
            ("", .noKey),
            ("\u{0}\u{1}binary\u{FF}", .noKey),
            (Pairing.info(key: String(Pairing.specKeyAsBlueZWritesIt.dropLast())), .malformedKey),
            (Pairing.info(key: Pairing.specKeyAsBlueZWritesIt + "00"), .malformedKey),
            (Pairing.info(key: "ZZ" + Pairing.specKeyAsBlueZWritesIt.dropFirst(2)), .malformedKey),
            (Pairing.info(key: ""), .malformedKey),
            (Pairing.info(key: "9B:7D:39:0A:A6:10:10:34:05:AD:C8:57:A3:34:02:EC"), .malformedKey),
            (Pairing.info(key: String(repeating: "0", count: 32)), .zeroKey),
        ])
    func problems(text: String, problem: BlueZPairings.Problem) {
        let (_, _, result) = BlueZPairings.parseInfo(Array(text.utf8))
        #expect(result == .failure(problem))
    }

    @Test("adapters and devices are enumerated; settings, cache and other names are passed over")
    func enumeration() throws {
        let directory = try Directory()
        let second = "5C:F3:70:00:00:01"
        try directory.write("\(Self.adapter)/settings", "[General]\nDiscoverableTimeout=0\n")
        try directory.write("\(Self.adapter)/cache/F0:99:B6:12:34:56", "[General]\nName=cached\n")
        try directory.write("\(Self.adapter)/F0:99:B6:12:34:56/info", Self.info())
        try directory.write("\(Self.adapter)/F0:99:B6:12:34:56/attributes", "[1]\nUUID=00002800-0000-1000-8000-00805f9b34fb\n")
        try directory.write("\(Self.adapter)/A4:C1:38:00:00:02/info", Self.info(name: "Thermometer", key: nil))
        try directory.makeDirectory("\(Self.adapter)/C0:00:00:00:00:03") // no info: attributes only
        try directory.write("\(Self.adapter)/F0:99:B6:12:34:57", "a file named like a device")
        try directory.makeDirectory("\(Self.adapter)/F099B6123458") // not BlueZ's form
        try directory.write("\(second)/F0:99:B6:12:34:56/info", Self.info())
        try directory.makeDirectory("mesh")
        try directory.write("README", "not an adapter")

        let store = try BlueZPairings.read(directory: directory.path)
        #expect(store.adapters.map(\.description) == [second, Self.adapter].sorted())
        let listed = store.devices.map { "\($0.adapter) \($0.address)" }
        #expect(
            listed
                == [
                    "\(Self.adapter) A4:C1:38:00:00:02", "\(Self.adapter) C0:00:00:00:00:03", "\(Self.adapter) F0:99:B6:12:34:56",
                    "\(second) F0:99:B6:12:34:56",
                ].sorted())
        let airPods = try #require(store.devices.first { $0.address.description == "F0:99:B6:12:34:56" })
        #expect(airPods.key?.hexDigits == Self.specKeyMSBFirst)
        #expect(airPods.infoPath.hasSuffix("/F0:99:B6:12:34:56/info"))
        let thermometer = try #require(store.devices.first { $0.address.description == "A4:C1:38:00:00:02" })
        #expect(thermometer.name == "Thermometer")
        #expect(thermometer.identityResolvingKey == .failure(.noKey))
        #expect(store.devices.first { $0.address.description == "C0:00:00:00:00:03" }?.identityResolvingKey == .failure(.noInfoFile))

        let one = try BlueZPairings.read(directory: directory.path, adapter: BluetoothAddress(second))
        #expect(one.adapters.map(\.description) == [second])
        #expect(one.devices.count == 1)
    }

    @Test("an adapter that is not there is an error listing the adapters")
    func unknownAdapter() throws {
        let directory = try Directory()
        try directory.write("\(Self.adapter)/F0:99:B6:12:34:56/info", Self.info())
        #expect {
            try BlueZPairings.read(directory: directory.path, adapter: BluetoothAddress("11:22:33:44:55:66"))
        } throws: { error in
            let description = "\(error)"
            return description.contains(directory.path) && description.contains("no adapter 11:22:33:44:55:66")
                && description.contains(Self.adapter)
        }
    }

    @Test("a directory or info file that cannot be read is an error naming its path")
    func unreadable() throws {
        let directory = try Directory()
        let missing = directory.url.appendingPathComponent("nothing-here").path
        #expect {
            try BlueZPairings.read(directory: missing)
        } throws: { error in
            "\(error)".contains("'\(missing)'") && "\(error)".contains("No such file or directory")
        }
        try directory.write("a-file", "x")
        let file = directory.url.appendingPathComponent("a-file").path
        #expect {
            try BlueZPairings.read(directory: file)
        } throws: { error in
            "\(error)".contains("'\(file)'") && "\(error)".contains("Not a directory")
        }
        // An info "file" that is a directory cannot be read even by root (the tests may run as root,
        // for whom permissions are no obstacle).
        try directory.makeDirectory("\(Self.adapter)/F0:99:B6:12:34:56/info")
        let info = directory.url.appendingPathComponent("\(Self.adapter)/F0:99:B6:12:34:56/info").path
        #expect {
            try BlueZPairings.read(directory: directory.path)
        } throws: { error in
            "\(error)".contains("'\(info)'") && "\(error)".contains("it is a directory, not a regular file")
        }
    }

    @Test("an info that is a FIFO is refused by its type, never opened to wait for a writer")
    func fifoInfo() throws {
        let directory = try Directory()
        try directory.makeDirectory("\(Self.adapter)/F0:99:B6:12:34:56")
        let info = directory.url.appendingPathComponent("\(Self.adapter)/F0:99:B6:12:34:56/info").path
        #expect(mkfifo(info, 0o600) == 0)
        #expect {
            try BlueZPairings.read(directory: directory.path)
        } throws: { error in
            "\(error)" == "cannot read '\(info)': it is a FIFO, not a regular file"
        }
    }

    @Test("an info file larger than any BlueZ writes is a per-device problem")
    func tooLarge() throws {
        let directory = try Directory()
        try directory.write(
            "\(Self.adapter)/F0:99:B6:12:34:56/info",
            Self.info() + String(repeating: "# padding\n", count: BlueZPairings.maximumInfoSize / 10 + 1))
        let store = try BlueZPairings.read(directory: directory.path)
        #expect(store.devices.first?.identityResolvingKey == .failure(.tooLarge))
    }

    @Test("a device's description never shows its key, in either byte order")
    func redacted() throws {
        let directory = try Directory()
        try directory.write("\(Self.adapter)/F0:99:B6:12:34:56/info", Self.info())
        let store = try BlueZPairings.read(directory: directory.path)
        let device = try #require(store.devices.first)
        var dumped = ""
        dump(device, to: &dumped)
        for text in ["\(device)", String(reflecting: device), dumped, "\(store.devices)"] {
            #expect(text.contains("F0:99:B6:12:34:56"))
            for key in [Self.specKeyMSBFirst, Self.specKeyAsBlueZWritesIt] {
                #expect(!text.lowercased().contains(key.lowercased()), "\(text)")
                #expect(!text.lowercased().contains(key.lowercased().prefix(8)), "\(text)")
            }
        }
    }
}
