import AccessoryKit
import Foundation
import LocalProcess
import Storage
import TestSupport
import Testing

@testable import Bridge

/// The runtime on a real PostgreSQL (``LocalPostgres``) and a real broker: a request is
/// committed there before it is answered, and another bridge on the same database starts
/// from it.
@Suite("The runtime on PostgreSQL")
struct PostgresFlowTests {
    static let password = "flow-Secret-9"

    @Test("a registration answered ok is in PostgreSQL; a new bridge on the same database restores it")
    func requestSurvivesANewBridge() async throws {
        let postgres = try LocalPostgres(.init(password: Self.password))
        let url = postgres.url
        let first = try BridgeHarness()
        defer { first.removeDirectory() }
        first.runner.openStore = { try PostgresStore(url: url, password: Self.password, origin: "first") }
        var registeredBefore: Int?
        try await first.run { observer in
            let response = try await observer.request(
                "accessory/register",
                #""id":"\#(Fixture.headphones)","capabilities":["audioSwitching"],"primary_source":"\#(Fixture.phone)""#)
            #expect(response["status"] == "ok")
            // Answered, so committed: another connection sees it now, before the bridge stops.
            let reader = try PostgresStore(url: url, password: Self.password)
            defer { reader.close() }
            let headphones = try #require(BluetoothAddress(Fixture.headphones))
            let registration = try reader.load().registrations[headphones]
            #expect(registration?.configuration.primaryAudioSourceDeviceIdentifier == BluetoothAddress(Fixture.phone))
            registeredBefore = try await observer.request("health")["data"]?["registered"]?.intValue
        }
        #expect(!FileManager.default.fileExists(atPath: first.databasePath), "no SQLite file beside PostgreSQL")

        // A new bridge, a new broker (no retained state from the first), the same database.
        let second = try BridgeHarness()
        defer { second.removeDirectory() }
        second.runner.openStore = { try PostgresStore(url: url, password: Self.password, origin: "second") }
        try await second.run { observer in
            let state = await observer.waitFor("aabridge/accessory/\(Fixture.headphonesTopic)") { $0["registration"] == "active" }
            #expect(state?["primary_source"] == .string(Fixture.phone))
            let health = try await observer.request("health")
            #expect(registeredBefore != nil)
            #expect(health["data"]?["registered"]?.intValue == registeredBefore)
        }
    }

    /// `aabridge run`'s configuration for the test broker and a PostgreSQL URL.
    static func runConfiguration(server: String, url: String, directory: URL) throws -> String {
        let placeholder = directory.appendingPathComponent("unused.sqlite3").path
        let yaml = BridgeHarness.yaml(server: server, database: placeholder)
            .replacingOccurrences(
                of: "  path: \(placeholder)", with: "  backend: postgresql\n  url: \(url)\n  password: \"\(Self.password)\"")
        let file = directory.appendingPathComponent("aabridge.yaml")
        try yaml.write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }

    @Test("aabridge run on PostgreSQL: exit 1 with the reason when the server cannot be reached; answers requests when it can")
    func executable() async throws {
        let executable = try ExecutableTests.executable
        let directory = try ExecutableTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let nobody = "postgresql://aabridge@127.0.0.1:\(try FreePort.find())/aabridge"
        let refusedLog = directory.appendingPathComponent("refused.log").path
        let refused = try ChildProcess(
            path: executable,
            arguments: ["run", "--config", try Self.runConfiguration(server: "mqtt://127.0.0.1:1", url: nobody, directory: directory)],
            output: refusedLog)
        let status = await refused.wait(timeout: .seconds(30))
        let text = (try? String(contentsOfFile: refusedLog, encoding: .utf8)) ?? ""
        #expect(status == 1, "\(text)")
        #expect(text.contains("aabridge: storage.url: cannot connect to PostgreSQL at \(nobody)"), "\(text)")
        #expect(!text.contains(Self.password))

        let postgres = try LocalPostgres(.init(password: Self.password))
        let broker = try MosquittoBroker()
        let observer = try await Observer(broker: broker)
        let log = directory.appendingPathComponent("run.log").path
        let bridge = try ChildProcess(
            path: executable,
            arguments: ["run", "--config", try Self.runConfiguration(server: broker.url, url: postgres.url, directory: directory)],
            output: log)
        await observer.waitFor("aabridge/bridge/state", timeout: .seconds(15)) { $0["state"] == "online" }
        let response = try await observer.request(
            "accessory/register", #""id":"\#(Fixture.headphones)","capabilities":["audioSwitching"]"#)
        #expect(response["status"] == "ok")
        bridge.stop(signal: SIGTERM)
        #expect(await bridge.wait(timeout: .seconds(30)) == 0)
        await observer.disconnect()
        let reader = try PostgresStore(url: postgres.url, password: Self.password)
        #expect(try reader.load().registrations[try #require(BluetoothAddress(Fixture.headphones))] != nil)
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("unused.sqlite3").path))
        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(!output.contains(Self.password))
    }
}
