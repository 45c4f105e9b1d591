import Foundation
import JSON
import LocalProcess
import MQTT
import TestSupport
import Testing

/// `aabridge keys import-bluez`, the real executable against a BlueZ storage directory written
/// as bluetoothd writes it, a real broker and the real bridge (`aabridge run`).
@Suite("aabridge keys import-bluez")
struct KeysImportTests {
    static let adapter = "00:1A:7D:DA:71:13"
    /// The Bluetooth Core Specification's sample IRK (Vol 3 Part H, Appendix D.7), most
    /// significant byte first; it resolves the sample address 70:81:94:0D:FB:AA.
    static let key = "ec0234a357c8ad05341010a60a397d9b"
    /// The same key as bluetoothd writes it into `info`: least significant byte first, upper case.
    static let keyAsBlueZWritesIt = "9B7D390AA610103405ADC857A33402EC"
    static let otherKeyAsBlueZWritesIt = "00112233445566778899AABBCCDDEEFF"
    static let thirdKeyAsBlueZWritesIt = "0F1E2D3C4B5A69788796A5B4C3D2E1F0"
    static let usageHeader = "usage: aabridge keys import-bluez"

    /// Every key a test writes, in both byte orders and cases, and a fragment of each: none of
    /// them may appear in any output, log line or published payload.
    static var secrets: [String] {
        [key, keyAsBlueZWritesIt, otherKeyAsBlueZWritesIt, thirdKeyAsBlueZWritesIt].flatMap { text -> [String] in
            let bytes = stride(from: 0, to: text.count, by: 2).map { text.dropFirst($0).prefix(2) }
            let reversed = bytes.reversed().joined()
            return [
                text.lowercased(), reversed.lowercased(), String(text.lowercased().prefix(10)), String(reversed.lowercased().prefix(10)),
            ]
        }
    }

    static func expectNoKey(in text: String, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        for secret in secrets where text.lowercased().contains(secret) {
            Issue.record("\(what) shows a key (\(secret.prefix(4))…):\n\(text)", sourceLocation: sourceLocation)
        }
    }

    /// A temporary directory with a BlueZ storage directory in it (`bluetooth/`) and the files a
    /// run needs; removed when the test ends.
    final class Workspace {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("aabridge-keys-\(UUID().uuidString)")
        var bluetooth: String { url.appendingPathComponent("bluetooth").path }

        init() throws {
            try FileManager.default.createDirectory(at: url.appendingPathComponent("bluetooth"), withIntermediateDirectories: true)
        }

        deinit { try? FileManager.default.removeItem(at: url) }

        /// Writes `<bluetooth>/<adapter>/<address>/info` as bluetoothd does for an LE pairing.
        func pair(_ address: String, name: String, key: String?, adapter: String = KeysImportTests.adapter) throws {
            let directory = url.appendingPathComponent("bluetooth/\(adapter)/\(address)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            var info = """
                [General]
                Name=\(name)
                AddressType=public
                SupportedTechnologies=BR/EDR;LE;
                Trusted=true
                Blocked=false

                [LongTermKey]
                Key=FFEEDDCCBBAA99887766554433221100
                Authenticated=0
                EncSize=16
                EDiv=0
                Rand=0

                """
            if let key { info += "[IdentityResolvingKey]\nKey=\(key)\n\n" }
            try info.write(to: directory.appendingPathComponent("info"), atomically: true, encoding: .utf8)
            try "[General]\nDiscoverable=false\n".write(
                to: url.appendingPathComponent("bluetooth/\(adapter)/settings"), atomically: true, encoding: .utf8)
        }

        /// The test bridge's configuration (BridgeHarness's accessories) for `server`.
        func configuration(server: String, logLevel: String = "error") throws -> String {
            let file = url.appendingPathComponent("aabridge-\(UUID().uuidString.prefix(6)).yaml")
            try BridgeHarness.yaml(server: server, database: url.appendingPathComponent("aabridge.sqlite3").path)
                .replacingOccurrences(of: "level: error", with: "level: \(logLevel)")
                .write(to: file, atomically: true, encoding: .utf8)
            return file.path
        }
    }

    /// Runs the executable and returns its exit status and combined output; one still running
    /// after 30 s is killed and reported as -2.
    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: output) }
        let child = try ChildProcess(path: try ExecutableTests.executable, arguments: arguments, output: output.path)
        let status = child.wait(timeout: 30) ?? -2
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        expectNoKey(in: text, "the output of \(arguments.prefix(2).joined(separator: " "))")
        return (status, text)
    }

    /// A real `aabridge run` on a fresh broker, with an observer; stopped when `body` returns.
    static func withRunningBridge(
        logLevel: String = "error", _ body: (Workspace, String, Observer) async throws -> Void
    ) async throws -> String {
        let broker = try MosquittoBroker()
        let workspace = try Workspace()
        let config = try workspace.configuration(server: broker.url, logLevel: logLevel)
        let observer = try await Observer(broker: broker, subscribe: ["aabridge/#", "homeassistant/#"])
        let log = workspace.url.appendingPathComponent("bridge.log").path
        let bridge = try ChildProcess(path: try ExecutableTests.executable, arguments: ["run", "--config", config], output: log)
        await observer.waitFor("aabridge/bridge/state", timeout: .seconds(10)) { $0["state"] == "online" }
        await observer.waitFor("aabridge/bridge/accessories", timeout: .seconds(10)) { ($0.arrayValue?.count ?? 0) == 3 }
        do {
            try await body(workspace, config, observer)
        } catch {
            bridge.stop(signal: SIGTERM)
            await observer.disconnect()
            throw error
        }
        bridge.stop(signal: SIGTERM)
        #expect(bridge.wait() == 0)
        await observer.disconnect()
        return (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    }

    static func accessory(_ id: String, in accessories: JSONValue) -> JSONValue? {
        accessories.arrayValue?.first { $0["id"]?.stringValue == id }
    }

    // MARK: - Command line

    @Test("--help lists keys import-bluez; its own help lists every option, and docs/operations.md documents each")
    func help() throws {
        let (status, output) = try Self.run(["--help"])
        #expect(status == 0)
        #expect(output.contains("\n  keys import-bluez "), "\(output)")
        let (ownStatus, own) = try Self.run(["keys", "import-bluez", "--help"])
        #expect(ownStatus == 0)
        #expect(own.contains(Self.usageHeader), "\(own)")
        let operations = try String(contentsOfFile: Repository.file("docs/operations.md"), encoding: .utf8)
        #expect(operations.contains("## Importing keys from BlueZ"))
        for option in ["--config", "--bluetooth-dir", "--adapter", "--device", "--id", "--dry-run"] {
            #expect(own.contains("  \(option) "), "the help explains \(option):\n\(own)")
            #expect(operations.contains("`\(option)"), "docs/operations.md explains \(option)")
        }
    }

    @Test(
        "usage errors exit 2 before anything is read or sent",
        arguments: [
            (["keys"], "name a subcommand (import-bluez, fetch-airpods, import-macos)"),
            (["keys", "export"], "unknown subcommand 'export'"),
            (["keys", "import-bluez", "--dry-run", "--dry-run"], "--dry-run is given twice"),
            (["keys", "import-bluez", "--adapter"], "--adapter needs a value"),
            (["keys", "import-bluez", "--id", "--dry-run"], "--id needs a value"),
            (["keys", "import-bluez", "--devices", "F0:99:B6:12:34:56"], "unknown option '--devices'"),
            (["keys", "import-bluez", "--dry-run", "now"], "unexpected argument 'now'"),
        ])
    func usageErrors(arguments: [String], message: String) throws {
        let (status, output) = try Self.run(arguments)
        #expect(status == 2, "\(arguments): \(output)")
        #expect(output.contains(message), "\(output)")
        #expect(output.contains(Self.usageHeader), "the usage follows: \(output)")
    }

    @Test("input errors exit 2 and say what to fix, without a broker (one that is not there would be exit 1)")
    func inputErrors() throws {
        let workspace = try Workspace()
        let config = try workspace.configuration(server: "mqtt://127.0.0.1:\(try FreePort.find())")
        let base = ["keys", "import-bluez", "--config", config, "--bluetooth-dir", workspace.bluetooth]
        let missing = workspace.url.appendingPathComponent("no-bluetooth").path
        var result = try Self.run(["keys", "import-bluez", "--config", config, "--bluetooth-dir", missing])
        #expect(result.status == 2)
        #expect(result.output.contains("cannot read '\(missing)': No such file or directory"), "\(result.output)")

        result = try Self.run(base + ["--id", "Alice's AirPods"])
        #expect(result.status == 2)
        #expect(result.output.contains("--id 'Alice's AirPods' is not a Bluetooth address"), "\(result.output)")

        result = try Self.run(base)
        #expect(result.status == 2)
        #expect(result.output.contains("nothing to import: no paired devices under \(workspace.bluetooth)"), "\(result.output)")

        try workspace.pair("D0:00:00:00:00:01", name: "Keyboard", key: nil)
        try workspace.pair("E0:00:00:00:00:02", name: "Broken", key: String(Self.keyAsBlueZWritesIt.dropLast(2)))
        result = try Self.run(base)
        #expect(result.status == 2, "\(result.output)")
        #expect(result.output.contains("D0:00:00:00:00:01 (\"Keyboard\", adapter \(Self.adapter)): skipped: no [IdentityResolvingKey]"))
        #expect(
            result.output.contains(
                "E0:00:00:00:00:02 (\"Broken\", adapter \(Self.adapter)): skipped: [IdentityResolvingKey] Key is not 32 hex digits"))
        #expect(result.output.contains("nothing to import: no BlueZ device under \(workspace.bluetooth) has an IRK"))

        result = try Self.run(base + ["--adapter", "11:22:33:44:55:66"])
        #expect(result.status == 2)
        #expect(result.output.contains("no adapter 11:22:33:44:55:66 here (adapters: \(Self.adapter))"), "\(result.output)")

        result = try Self.run(base + ["--device", "F0:99:B6:12:34:56"])
        #expect(result.status == 2)
        #expect(
            result.output.contains(
                "no BlueZ device F0:99:B6:12:34:56 under \(workspace.bluetooth) (devices: D0:00:00:00:00:01, E0:00:00:00:00:02)"),
            "\(result.output)")

        // An info file that cannot be read is named (root reads anything; a directory it cannot).
        let unreadable = "\(workspace.bluetooth)/\(Self.adapter)/C0:00:00:00:00:03/info"
        try FileManager.default.createDirectory(atPath: unreadable, withIntermediateDirectories: true)
        result = try Self.run(base)
        #expect(result.status == 2)
        #expect(result.output.contains("cannot read '\(unreadable)'"), "\(result.output)")
    }

    @Test("a broker that is not there, or one the bridge never ran against, is exit 1")
    func noBridge() throws {
        let workspace = try Workspace()
        try workspace.pair(Fixture.airPods, name: "Alice’s AirPods", key: Self.keyAsBlueZWritesIt)
        let dead = try workspace.configuration(server: "mqtt://127.0.0.1:\(try FreePort.find())")
        var result = try Self.run(["keys", "import-bluez", "--config", dead, "--bluetooth-dir", workspace.bluetooth, "--dry-run"])
        #expect(result.status == 1)
        #expect(result.output.contains("broker not reachable"), "\(result.output)")

        let broker = try MosquittoBroker()
        let empty = try workspace.configuration(server: broker.url)
        result = try Self.run(["keys", "import-bluez", "--config", empty, "--bluetooth-dir", workspace.bluetooth])
        #expect(result.status == 1)
        #expect(
            result.output.contains("no retained aabridge/bridge/accessories: the bridge never ran against this broker"), "\(result.output)")
    }

    // MARK: - Against the running bridge

    @Test("--dry-run: one line per device, what matched or why not; nothing is sent")
    func dryRun() async throws {
        _ = try await Self.withRunningBridge { workspace, config, observer in
            try workspace.pair(Fixture.airPods, name: "Alice’s AirPods", key: Self.keyAsBlueZWritesIt)
            try workspace.pair(Fixture.phone, name: "Alice’s iPhone", key: Self.otherKeyAsBlueZWritesIt)
            try workspace.pair("D0:00:00:00:00:01", name: "Keyboard", key: nil)
            try workspace.pair("E0:00:00:00:00:02", name: "Broken", key: "not a key")
            let (status, output) = try Self.run([
                "keys", "import-bluez", "--config", config, "--bluetooth-dir", workspace.bluetooth, "--dry-run",
            ])
            #expect(status == 0, "\(output)")
            let lines = output.split(separator: "\n").map(String.init)
            #expect(
                lines == [
                    "11:22:33:44:55:66 (\"Alice’s iPhone\", adapter \(Self.adapter)): not imported: no accessory has this id (to import it into an accessory by name, run again with --id <accessory id>)",
                    "\(Fixture.airPods) (\"Alice’s AirPods\", adapter \(Self.adapter)): would import its IRK into \(Fixture.airPods) \"Alice's AirPods\" (its id is this device's identity address)",
                    "D0:00:00:00:00:01 (\"Keyboard\", adapter \(Self.adapter)): skipped: no [IdentityResolvingKey] in its info file (it gave BlueZ no IRK when it paired)",
                    "E0:00:00:00:00:02 (\"Broken\", adapter \(Self.adapter)): skipped: [IdentityResolvingKey] Key is not 32 hex digits",
                ], "\(output)")
            // Give a request that was sent by mistake the time to arrive, then check there was none.
            _ = try await observer.request("health")
            #expect(observer.messages(on: "aabridge/bridge/request/accessory/keys").isEmpty)
            #expect(observer.messages(on: "aabridge/bridge/response/accessory/keys").isEmpty)
        }
    }

    @Test("a BlueZ device at an accessory's alias (its public address) imports into that accessory")
    func byAlias() async throws {
        _ = try await Self.withRunningBridge { workspace, config, observer in
            let alias = "F0:F1:F2:F3:F4:F5"
            #expect(try await observer.request("accessory/alias", #""id":"\#(Fixture.airPods)","address":"\#(alias)""#)["status"] == "ok")
            await observer.waitFor("aabridge/bridge/accessories") { $0.arrayValue?.contains { $0["alias"] == .string(alias) } == true }
            try workspace.pair(alias, name: "AirPods Pro", key: Self.keyAsBlueZWritesIt)
            let (status, output) = try Self.run(["keys", "import-bluez", "--config", config, "--bluetooth-dir", workspace.bluetooth])
            #expect(status == 0, "\(output)")
            #expect(
                output.contains("into \(Fixture.airPods) \"Alice's AirPods\" (its alias is this device's identity address)"), "\(output)")
            await observer.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)") { $0["keys"]?["irk"] == true }
            Self.expectNoKey(in: output, "the output")
        }
    }

    @Test("by name only with --id: refused when no device or more than one fits, or when the device is another accessory")
    func byName() async throws {
        _ = try await Self.withRunningBridge { workspace, config, _ in
            try workspace.pair(Fixture.airPods, name: "Alice’s AirPods", key: Self.keyAsBlueZWritesIt)
            try workspace.pair("F0:99:B6:12:34:56", name: "Bob’s Headphones", key: Self.otherKeyAsBlueZWritesIt)
            let base = ["keys", "import-bluez", "--config", config, "--bluetooth-dir", workspace.bluetooth, "--dry-run"]
            let bob = "\(Fixture.headphones) \"Bob's Headphones\""
            let bobsDevice = "F0:99:B6:12:34:56 (\"Bob’s Headphones\", adapter \(Self.adapter))"

            var result = try Self.run(base)
            #expect(result.status == 0)
            #expect(result.output.contains("\(bobsDevice): not imported: no accessory has this id"), "\(result.output)")

            // The BlueZ name has Apple's apostrophe, the accessory's a typed one: the same name.
            result = try Self.run(base + ["--id", Fixture.headphones])
            #expect(result.status == 0, "\(result.output)")
            #expect(
                result.output.contains("\(bobsDevice): would import its IRK into \(bob) (its name is the accessory's, chosen with --id)"),
                "\(result.output)")
            #expect(result.output.contains("\(Fixture.airPods) (\"Alice’s AirPods\", adapter \(Self.adapter)): not imported: --id"))

            // A second device of the same name, under a second adapter: which one is not guessed.
            try workspace.pair(
                "F0:99:B6:12:34:57", name: "Bob's Headphones", key: Self.thirdKeyAsBlueZWritesIt, adapter: "5C:F3:70:00:00:01")
            result = try Self.run(base + ["--id", Fixture.headphones])
            #expect(result.status == 2)
            #expect(
                result.output.contains(
                    "2 BlueZ devices with an IRK are named \"Bob's Headphones\" (F0:99:B6:12:34:56, F0:99:B6:12:34:57): name the right one with --device ADDR"
                ), "\(result.output)")
            result = try Self.run(base + ["--id", Fixture.headphones, "--device", "F0:99:B6:12:34:57"])
            #expect(result.status == 0, "\(result.output)")
            #expect(
                result.output.contains(
                    "F0:99:B6:12:34:57 (\"Bob's Headphones\", adapter 5C:F3:70:00:00:01): would import its IRK into \(bob) (chosen with --device and --id)"
                ), "\(result.output)")
            result = try Self.run(base + ["--id", Fixture.headphones, "--adapter", "5C:F3:70:00:00:01"])
            #expect(result.status == 0, "--adapter leaves one device of that name: \(result.output)")

            result = try Self.run(base + ["--id", Fixture.speaker])
            #expect(result.status == 2)
            #expect(result.output.contains("no BlueZ device with an IRK is named \"Kitchen Speaker\""), "\(result.output)")
            #expect(result.output.contains("name the device with --device ADDR"))

            result = try Self.run(base + ["--id", "99:99:99:99:99:99"])
            #expect(result.status == 2)
            #expect(
                result.output.contains(
                    "--id: the bridge has no accessory 99:99:99:99:99:99 (accessories: \(Fixture.airPods) \"Alice's AirPods\""))

            result = try Self.run(base + ["--id", Fixture.headphones, "--device", Fixture.airPods])
            #expect(result.status == 2)
            #expect(
                result.output.contains("BlueZ device \(Fixture.airPods) is accessory \(Fixture.airPods) \"Alice's AirPods\" itself"),
                "\(result.output)")
        }
    }

    @Test("the same device paired with two adapters under different IRKs is refused until --adapter picks one")
    func conflictingAdapters() async throws {
        _ = try await Self.withRunningBridge { workspace, config, _ in
            try workspace.pair(Fixture.airPods, name: "Alice’s AirPods", key: Self.keyAsBlueZWritesIt)
            try workspace.pair(Fixture.airPods, name: "Alice’s AirPods", key: Self.otherKeyAsBlueZWritesIt, adapter: "5C:F3:70:00:00:01")
            let base = ["keys", "import-bluez", "--config", config, "--bluetooth-dir", workspace.bluetooth, "--dry-run"]
            var result = try Self.run(base)
            #expect(result.status == 2)
            #expect(
                result.output.contains(
                    "\(Fixture.airPods) (\"Alice’s AirPods\", adapters \(Self.adapter), 5C:F3:70:00:00:01): skipped: its adapters hold different IRKs for it; choose one with --adapter ADDR"
                ), "\(result.output)")
            result = try Self.run(base + ["--adapter", Self.adapter])
            #expect(result.status == 0, "\(result.output)")
            #expect(result.output.contains("would import its IRK into \(Fixture.airPods)"))
        }
    }

    @Test(
        "the IRK is set through the running bridge: reversed from BlueZ's order, it resolves the accessory's rotating address; no key is ever shown"
    )
    func importSetsTheKey() async throws {
        let bridgeLog = try await Self.withRunningBridge(logLevel: "debug") { workspace, config, observer in
            try workspace.pair(Fixture.airPods, name: "Alice’s AirPods", key: Self.keyAsBlueZWritesIt)
            try workspace.pair("F0:99:B6:12:34:56", name: "Bob’s Headphones", key: Self.otherKeyAsBlueZWritesIt)
            let base = ["keys", "import-bluez", "--config", config, "--bluetooth-dir", workspace.bluetooth]

            var result = try Self.run(base)
            #expect(result.status == 0, "\(result.output)")
            #expect(
                result.output.contains(
                    "\(Fixture.airPods) (\"Alice’s AirPods\", adapter \(Self.adapter)): imported its IRK into \(Fixture.airPods) \"Alice's AirPods\" (its id is this device's identity address); the bridge reports: IRK set, encryption key not set"
                ), "\(result.output)")
            #expect(
                result.output.contains(
                    "F0:99:B6:12:34:56 (\"Bob’s Headphones\", adapter \(Self.adapter)): not imported: no accessory has this id"))
            let afterFirst = await observer.waitFor("aabridge/bridge/accessories") {
                Self.accessory(Fixture.airPods, in: $0)?["keys"]?["irk"] == true
            }
            #expect(afterFirst.flatMap { Self.accessory(Fixture.headphones, in: $0)?["keys"]?["irk"] } == false)

            result = try Self.run(base + ["--id", Fixture.headphones])
            #expect(result.status == 0, "\(result.output)")
            #expect(
                result.output.contains(
                    "imported its IRK into \(Fixture.headphones) \"Bob's Headphones\" (its name is the accessory's, chosen with --id)"))
            await observer.waitFor("aabridge/bridge/accessories") { Self.accessory(Fixture.headphones, in: $0)?["keys"]?["irk"] == true }

            // The byte order, end to end: the specification's sample address, a resolvable
            // private address of the sample key, now counts for Alice's AirPods.
            try await observer.publish("home/hall/BTtoMQTT/7081940DFBAA", #"{"id":"70:81:94:0D:FB:AA","rssi":-47}"#)
            _ = try await observer.request("accessory/rename", #""id":"\#(Fixture.airPods)","name":"Alice again""#)
            let state = await observer.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)") { $0["name"] == "Alice again" }
            #expect(state?["gateway"] == "hall", "the rotating address resolved with the imported key: \(String(describing: state))")
            #expect(state?["identity"] == "irk")

            // The request carried the key (it must); nothing else did.
            #expect(observer.messages(on: "aabridge/bridge/request/accessory/keys").count == 2)
            for message in observer.messages.elements where message.topic != "aabridge/bridge/request/accessory/keys" {
                Self.expectNoKey(in: message.payloadString, "\(message.topic)")
            }
        }
        #expect(!bridgeLog.isEmpty, "the debug log was captured")
        Self.expectNoKey(in: bridgeLog, "the bridge's log")
    }
}
