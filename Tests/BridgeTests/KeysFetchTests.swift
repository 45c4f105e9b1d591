import Foundation
import JSON
import LocalProcess
import MQTT
import TestSupport
import Testing

/// `aabridge keys fetch-airpods` and `keys import-macos`, the real executable against a real
/// broker and the real bridge. This machine has no Bluetooth adapter: fetch-airpods is pointed
/// (AABRIDGE_AAP_PEER_SOCKET) at a Unix SOCK_SEQPACKET socket where a scripted peer plays the
/// AirPods' side of LibrePods' documented exchange; everything after the channel (the exchange,
/// the matching, `accessory/keys`, the store) is the real one.
@Suite("aabridge keys fetch-airpods and import-macos")
struct KeysFetchTests {
    static let irk: [UInt8] = [0xEC, 0x02, 0x34, 0xA3, 0x57, 0xC8, 0xAD, 0x05, 0x34, 0x10, 0x10, 0xA6, 0x0A, 0x39, 0x7D, 0x9B]
    static let encryptionKey: [UInt8] = Array(0x10...0x1F)
    static let encryptionKeyHex = "101112131415161718191a1b1c1d1e1f"
    static var bothKeys: [UInt8] {
        [0x04, 0x00, 0x04, 0x00, 0x31, 0x00, 0x02, 0x01, 0x00, 0x10, 0x00] + irk + [0x04, 0x00, 0x10, 0x00] + encryptionKey
    }

    static func expectNoKey(in text: String, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        KeysImportTests.expectNoKey(in: text, what, sourceLocation: sourceLocation)
        for secret in [encryptionKeyHex, String(encryptionKeyHex.prefix(10)), "10 11 12 13 14"] where text.lowercased().contains(secret) {
            Issue.record("\(what) shows the encryption key:\n\(text)", sourceLocation: sourceLocation)
        }
    }

    /// The AirPods' side: listens on a Unix socket, reads the four requests of one connection,
    /// sends `reply`, then closes.
    final class ScriptedAirPods: @unchecked Sendable {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("aap-\(UUID().uuidString.prefix(8)).sock").path
        let listener: Int32
        private let lock = NSLock()
        private var requests: [[UInt8]] = []
        private let finished = DispatchSemaphore(value: 0)

        init(reply: [UInt8]) throws {
            listener = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { buffer in
                for (index, byte) in path.utf8.enumerated() { buffer[index] = byte }
            }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard bound == 0, listen(listener, 1) == 0 else { throw POSIXError(.EADDRINUSE) }
            let descriptor = listener
            Thread.detachNewThread { [self] in
                defer { finished.signal() }
                let connection = accept(descriptor, nil, nil)
                guard connection >= 0 else { return }
                defer { close(connection) }
                for _ in 0..<4 {
                    var buffer = [UInt8](repeating: 0, count: 256)
                    let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
                    guard count > 0 else { return }
                    lock.withLock { requests.append(Array(buffer.prefix(count))) }
                }
                _ = reply.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
        }

        var received: [[UInt8]] {
            _ = finished.wait(timeout: .now() + 5)
            return lock.withLock { requests }
        }

        deinit {
            close(listener)
            unlink(path)
        }
    }

    /// Runs the executable with the peer socket in its environment (through env(1): the test
    /// process's own environment is shared by the tests running beside it).
    static func run(_ arguments: [String], peer: String?) throws -> (status: Int32, output: String) {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: output) }
        let environment = peer.map { ["AABRIDGE_AAP_PEER_SOCKET=\($0)"] } ?? []
        let child = try ChildProcess(
            path: "/usr/bin/env", arguments: environment + [try ExecutableTests.executable] + arguments, output: output.path)
        let status = child.wait(timeout: 30) ?? -2
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        expectNoKey(in: text, "the output of \(arguments.prefix(2).joined(separator: " "))")
        return (status, text)
    }

    static func keys(of id: String, _ observer: Observer) async -> JSONValue? {
        _ = try? await observer.request("health")
        return observer.messages(on: "aabridge/bridge/accessories").last.flatMap { try? JSONParser.parse($0.payload) }
            .flatMap { KeysImportTests.accessory(id, in: $0)?["keys"] }
    }

    @Test("fetch-airpods reads both keys from the AirPods and the bridge stores them; no key is shown")
    func fetchStoresBothKeys() async throws {
        let log = try await KeysImportTests.withRunningBridge(logLevel: "debug") { _, config, observer in
            let airPods = try ScriptedAirPods(reply: Self.bothKeys)
            let result = try Self.run(["keys", "fetch-airpods", "--device", Fixture.airPods, "--config", config], peer: airPods.path)
            #expect(result.status == 0, "\(result.output)")
            #expect(
                result.output.contains(
                    "\(Fixture.airPods): set the IRK and encryption key of \(Fixture.airPods) \"Alice's AirPods\"; the bridge reports: IRK set, encryption key set"
                ), "\(result.output)")
            #expect(airPods.received.last == [0x04, 0x00, 0x04, 0x00, 0x30, 0x00, 0x05, 0x00])
            await observer.waitFor("aabridge/bridge/accessories") {
                KeysImportTests.accessory(Fixture.airPods, in: $0)?["keys"]?["encryption_key"] == true
            }
            let keys = await Self.keys(of: Fixture.airPods, observer)
            #expect(keys?["irk"] == true)
            #expect(keys?["encryption_key"] == true)
            for message in observer.messages.elements where message.topic != "aabridge/bridge/request/accessory/keys" {
                Self.expectNoKey(in: message.payloadString, "\(message.topic)")
            }
        }
        Self.expectNoKey(in: log, "the bridge's log")
    }

    @Test("a truncated reply, a reply without keys or AirPods that are not there: exit 1, the cause named, nothing stored or sent")
    func fetchFailuresStoreNothing() async throws {
        _ = try await KeysImportTests.withRunningBridge { _, config, observer in
            let base = ["keys", "fetch-airpods", "--device", Fixture.airPods, "--config", config]
            let truncated = try ScriptedAirPods(reply: Array(Self.bothKeys.prefix(20)))
            var result = try Self.run(base, peer: truncated.path)
            #expect(result.status == 1)
            #expect(result.output.contains("\(Fixture.airPods): the AirPods' keys reply is truncated"), "\(result.output)")

            let none = try ScriptedAirPods(reply: [0x04, 0x00, 0x04, 0x00, 0x31, 0x00, 0x00])
            result = try Self.run(base, peer: none.path)
            #expect(result.status == 1)
            #expect(result.output.contains("has no IRK (no keys at all)"), "\(result.output)")

            let nowhere = FileManager.default.temporaryDirectory.appendingPathComponent("no-airpods-\(UUID().uuidString.prefix(6))").path
            result = try Self.run(base, peer: nowhere)
            #expect(result.status == 1)
            #expect(result.output.contains("the AirPods are not connected to this box"), "\(result.output)")

            #expect(observer.messages(on: "aabridge/bridge/request/accessory/keys").isEmpty)
            let keys = await Self.keys(of: Fixture.airPods, observer)
            #expect(keys?["irk"] == false)
            #expect(keys?["encryption_key"] == false)
        }
    }

    @Test("the real kernel here: Bluetooth sockets are missing or the AirPods are not connected; exit 1 either way, before any broker")
    func fetchOnThisMachine() throws {
        let workspace = try KeysImportTests.Workspace()
        let config = try workspace.configuration(server: "mqtt://127.0.0.1:\(try FreePort.find())")
        let result = try Self.run(["keys", "fetch-airpods", "--device", "F0:99:B6:12:34:56", "--config", config], peer: nil)
        #expect(result.status == 1)
        let causes = ["no Bluetooth socket support", "not connected to this box", "no Bluetooth adapter", "permission denied"]
        #expect(causes.contains { result.output.contains($0) }, "\(result.output)")
        #expect(!result.output.contains("broker"), "the AirPods are read before the broker is reached: \(result.output)")
    }

    @Test("--dry-run reads the keys and names the accessory by --id (name); sends nothing; an unknown name is exit 2")
    func fetchDryRunAndMatching() async throws {
        _ = try await KeysImportTests.withRunningBridge { _, config, observer in
            let airPods = try ScriptedAirPods(reply: Self.bothKeys)
            var result = try Self.run(
                ["keys", "fetch-airpods", "--device", "F0:99:B6:12:34:56", "--id", "bob's headphones", "--config", config, "--dry-run"],
                peer: airPods.path)
            #expect(result.status == 0, "\(result.output)")
            #expect(
                result.output.contains("would set the IRK and encryption key of \(Fixture.headphones) \"Bob's Headphones\""),
                "\(result.output)")

            let again = try ScriptedAirPods(reply: Self.bothKeys)
            result = try Self.run(
                ["keys", "fetch-airpods", "--device", "F0:99:B6:12:34:56", "--config", config], peer: again.path)
            #expect(result.status == 2)
            #expect(result.output.contains("no accessory has the id or alias F0:99:B6:12:34:56: name it with --id ID"), "\(result.output)")

            let third = try ScriptedAirPods(reply: Self.bothKeys)
            result = try Self.run(
                ["keys", "fetch-airpods", "--device", "F0:99:B6:12:34:56", "--id", "Carol", "--config", config], peer: third.path)
            #expect(result.status == 2)
            #expect(result.output.contains("--id: no accessory is named \"Carol\""), "\(result.output)")

            _ = try await observer.request("health")
            #expect(observer.messages(on: "aabridge/bridge/request/accessory/keys").isEmpty)
        }
    }

    @Test("import-macos sets both keys from the sample export (matched by the item's address); a file without MagicAccIRK is exit 2")
    func importMacOS() async throws {
        _ = try await KeysImportTests.withRunningBridge { workspace, config, observer in
            let sample = Repository.file("Tests/Fixtures/keychain/mobilebluetooth-security-g.txt")
            let empty = workspace.url.appendingPathComponent("empty.txt").path
            try "password: \"<dict></dict>\"\n".write(toFile: empty, atomically: true, encoding: .utf8)
            var result = try Self.run(["keys", "import-macos", empty, "--config", config], peer: nil)
            #expect(result.status == 2)
            #expect(result.output.contains("\(empty): no MagicAccIRK in it"), "\(result.output)")
            #expect(observer.messages(on: "aabridge/bridge/request/accessory/keys").isEmpty)

            result = try Self.run(["keys", "import-macos", sample, "--config", config], peer: nil)
            #expect(result.status == 0, "\(result.output)")
            #expect(
                result.output.contains(
                    "set the IRK and encryption key of \(Fixture.airPods) \"Alice's AirPods\"; the bridge reports: IRK set, encryption key set"
                ),
                "\(result.output)")
            await observer.waitFor("aabridge/bridge/accessories") {
                KeysImportTests.accessory(Fixture.airPods, in: $0)?["keys"]?["encryption_key"] == true
            }
        }
    }
}
