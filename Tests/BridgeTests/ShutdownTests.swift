import Foundation
import LocalProcess
import Storage
import TestSupport
import Testing

@testable import Bridge

/// Shutdown always ends: with the broker frozen (SIGSTOP: the connection stays open, nothing is
/// acknowledged), SIGTERM must not wait for `offline`'s acknowledgement forever, and a second
/// SIGTERM must be heard. The bounds are in docs/operations.md.
@Suite("Shutdown with a broker that stopped answering")
struct ShutdownTests {
    /// Starts the real executable against `broker` and waits until it is online.
    static func start(_ broker: MosquittoBroker, in directory: URL) async throws -> (ChildProcess, database: String, log: String) {
        let database = directory.appendingPathComponent("aabridge.sqlite3").path
        let config = directory.appendingPathComponent("aabridge.yaml")
        // Warnings in the log: they say why the shutdown went on without the broker.
        try BridgeHarness.yaml(server: broker.url, database: database).replacingOccurrences(of: "level: error", with: "level: warning")
            .write(to: config, atomically: true, encoding: .utf8)
        let log = directory.appendingPathComponent("bridge.log").path
        let observer = try await Observer(broker: broker)
        let bridge = try ChildProcess(path: try ExecutableTests.executable, arguments: ["run", "--config", config.path], output: log)
        let online = await observer.waitFor("aabridge/bridge/state", timeout: .seconds(10)) { $0["state"] == "online" }
        await observer.disconnect()
        #expect(online != nil, "the bridge came online")
        return (bridge, database, log)
    }

    /// Starts the executable against a fresh broker, freezes the broker (SIGSTOP) and runs
    /// `body` with the bridge, its database and its log; the broker is thawed afterwards.
    static func withFrozenBroker(_ body: (ChildProcess, _ database: String, _ log: String) async throws -> Void) async throws {
        let broker = try MosquittoBroker()
        let directory = try ExecutableTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (bridge, database, log) = try await start(broker, in: directory)
        broker.freeze()
        defer { broker.thaw() }
        try await body(bridge, database, log)
    }

    @Test("SIGTERM with a frozen broker ends within the bounds (5 s for offline, 2 s for the client), exit 0, storage closed")
    func frozenBroker() async throws {
        try await Self.withFrozenBroker { bridge, database, log async throws in
            let started = ContinuousClock.now
            kill(bridge.pid, SIGTERM)
            // Generous against a loaded machine; before the fix it never ended while frozen.
            let status = await bridge.wait(timeout: .seconds(30))
            let elapsed = ContinuousClock.now - started
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            #expect(status == 0, "exit \(status.map { "\($0)" } ?? "none: still running after 30 s"): \(text)")
            #expect(text.contains("did not acknowledge offline"), "the log says why it stopped without it: \(text)")
            print("figure: shutdown with a frozen broker took \(elapsed)")
            // Storage was closed: the lock is free and the database is whole.
            #expect(try DatabaseLock(database: database).isHeld)
            #expect(try AccessoryStore(path: database).load().migrationComplete)
        }
    }

    @Test("a second SIGTERM ends at once, storage closed, exit status 128 + 15")
    func secondSignal() async throws {
        try await Self.withFrozenBroker { bridge, database, log async throws in
            kill(bridge.pid, SIGTERM)
            try await Task.sleep(for: .milliseconds(500))
            let started = ContinuousClock.now
            kill(bridge.pid, SIGTERM)
            let status = await bridge.wait(timeout: .seconds(4))
            let elapsed = ContinuousClock.now - started
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            #expect(status == 128 + SIGTERM, "exit \(status.map { "\($0)" } ?? "none: still running after 4 s"): \(text)")
            #expect(text.contains("signal 15 again"), "\(text)")
            print("figure: a second SIGTERM ended the bridge after \(elapsed)")
            #expect(try DatabaseLock(database: database).isHeld)
            #expect(try AccessoryStore(path: database).load().migrationComplete)
        }
    }
}
