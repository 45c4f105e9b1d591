import Foundation
import JSON
import LocalProcess
import Storage
import TestSupport
import Testing

@testable import Bridge

/// Upgrading from a config/aabridge.yaml that migrated "Alice's AirPods" (`A1:B2:C3:D4:E5:F6`)
/// into every database: the next start with the shipped file removes that accessory once, with
/// a log line, and only while it is exactly what the old file planted. Every run is the real
/// executable on a real broker and SQLite file; the old file is the demo configuration, which
/// still carries those lines.
@Suite("The shipped example accessory is removed at upgrade, and nothing else")
struct ShippedPhantomTests {
    static let phantom = "A1:B2:C3:D4:E5:F6"
    static let phantomTopic = "A1B2C3D4E5F6"
    /// A second accessory the old file migrated: not the phantom, so it stays.
    static let bob = "F1:E2:D3:C4:B5:A7"

    /// A copy of a repository configuration pointed at `broker` and `database`, with `extra`
    /// lines appended to its `accessories:` section.
    static func configuration(_ file: String, broker: MosquittoBroker, database: String, accessories extra: String = "") throws -> String {
        var text = try String(contentsOfFile: Repository.file(file), encoding: .utf8)
            .replacingOccurrences(of: "mqtt://localhost:1883", with: broker.url)
            .replacingOccurrences(of: "path: data/aabridge.sqlite3", with: "path: \(database)")
        if !extra.isEmpty {
            text = text.replacingOccurrences(
                of: "accessories:                        # migrated (pre-authorized) on first start\n", with: "accessories:\n" + extra)
        }
        return text
    }

    /// Runs the executable on `yaml` until it is online, then `body`, then SIGTERM (exit 0).
    /// - Returns: the bridge's log.
    @discardableResult
    static func run(
        _ yaml: String, broker: MosquittoBroker, in directory: URL, _ body: (Observer) async throws -> Void = { _ in }
    ) async throws -> String {
        let run = UUID().uuidString.prefix(8)
        let config = directory.appendingPathComponent("aabridge-\(run).yaml")
        try yaml.write(to: config, atomically: true, encoding: .utf8)
        let log = directory.appendingPathComponent("bridge-\(run).log").path
        let observer = try await Observer(broker: broker, subscribe: ["aabridge/#", "homeassistant/#"])
        let bridge = try ChildProcess(path: try ExecutableTests.executable, arguments: ["run", "--config", config.path], output: log)
        #expect(await observer.waitFor("aabridge/bridge/state") { $0["state"] == "online" } != nil)
        try await body(observer)
        kill(bridge.pid, SIGTERM)
        #expect(await bridge.wait(timeout: .seconds(20)) == 0)
        await observer.disconnect()
        return (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    }

    /// What is retained on `topic` now (nil when nothing is), seen by a new subscriber.
    static func retained(_ topic: String, on broker: MosquittoBroker) async throws -> String? {
        let observer = try await Observer(broker: broker, subscribe: [topic])
        let arrived = await observer.messages.wait(timeout: .seconds(1)) { !$0.isEmpty }
        await observer.disconnect()
        return arrived ? observer.messages.elements.first?.payloadString : nil
    }

    static func storedNames(_ database: String) throws -> [String: String] {
        let restored = try AccessoryStore(path: database).load()
        return Dictionary(uniqueKeysWithValues: restored.accessories.map { ($0.id.description, $0.displayName) })
    }

    @Test(
        "a database the old file planted the phantom in: removed once (log line, state and Home Assistant device cleared); the other accessory stays"
    )
    func removedOnce() async throws {
        let broker = try MosquittoBroker()
        let directory = try ExecutableTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("aabridge.sqlite3").path
        let bobLine = "  - {id: \"\(Self.bob)\", name: Bob's AirPods, product: AirPods or Beats}\n"
        let old = try Self.configuration("config/examples/demo.yaml", broker: broker, database: database, accessories: bobLine)
        try await Self.run(old, broker: broker, in: directory) { observer in
            #expect(await observer.waitFor("homeassistant/device/aabridge_\(Self.phantomTopic)/config") { $0 != .null } != nil)
        }
        #expect(try Self.storedNames(database) == [Self.phantom: "Alice's AirPods", Self.bob: "Bob's AirPods"])
        #expect(try await Self.retained("aabridge/accessory/\(Self.phantomTopic)", on: broker) != nil, "the old run published its state")

        let shipped = try Self.configuration("config/aabridge.yaml", broker: broker, database: database)
        let log = try await Self.run(shipped, broker: broker, in: directory) { observer in
            let list = await observer.waitFor("aabridge/bridge/accessories") { ($0.arrayValue?.count ?? 0) == 1 }
            #expect(list?.arrayValue?.first?["id"] == .string(Self.bob))
        }
        #expect(log.contains("removed Alice's AirPods (\(Self.phantom)): the example accessory"), "\(log)")
        #expect(try Self.storedNames(database) == [Self.bob: "Bob's AirPods"])
        #expect(try await Self.retained("aabridge/accessory/\(Self.phantomTopic)", on: broker) == nil, "its state was cleared")
        #expect(
            try await Self.retained("homeassistant/device/aabridge_\(Self.phantomTopic)/config", on: broker) == nil,
            "its Home Assistant device was removed")

        // Once: the next start has nothing to remove and says nothing about it.
        let again = try await Self.run(shipped, broker: broker, in: directory)
        #expect(!again.contains("removed Alice's AirPods"), "\(again)")
        #expect(try Self.storedNames(database) == [Self.bob: "Bob's AirPods"])
    }

    struct Change: Sendable, CustomStringConvertible {
        let description: String
        /// A request made during the old run, as `Observer.request` takes it (nil: none).
        let request: (name: String, members: String)?
        /// Whether the upgraded start still uses a configuration that lists the accessory.
        let keepsFile: Bool
    }

    static let changes: [Change] = [
        Change(
            description: "renamed", request: ("accessory/rename", #""id":"\#(phantom)","name":"Alice's AirPods Pro""#), keepsFile: false),
        Change(
            description: "given an IRK", request: ("accessory/keys", #""id":"\#(phantom)","irk":"ec0234a357c8ad05341010a60a397d9b""#),
            keepsFile: false),
        Change(description: "still listed by the configuration", request: nil, keepsFile: true),
    ]

    @Test("an accessory at the phantom's address that is someone's is never removed", arguments: changes)
    func keptWhenChanged(_ change: Change) async throws {
        let broker = try MosquittoBroker()
        let directory = try ExecutableTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("aabridge.sqlite3").path
        let old = try Self.configuration("config/examples/demo.yaml", broker: broker, database: database)
        try await Self.run(old, broker: broker, in: directory) { observer async throws in
            if let request = change.request {
                let response = try await observer.request(request.name, request.members)
                #expect(response["status"] == "ok")
            }
        }
        let before = try Self.storedNames(database)
        #expect(before[Self.phantom] != nil)
        let upgraded = change.keepsFile ? old : try Self.configuration("config/aabridge.yaml", broker: broker, database: database)
        let log = try await Self.run(upgraded, broker: broker, in: directory)
        #expect(!log.contains("removed Alice's AirPods"), "\(log)")
        #expect(try Self.storedNames(database) == before)
    }
}
