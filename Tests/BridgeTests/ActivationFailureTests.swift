import AccessoryKit
import Foundation
import LocalProcess
import Storage
import TestSupport
import Testing

@testable import Bridge

/// The session's first commit (on a first start, the configuration's `accessories:` and the
/// migration flag) can fail (disk full). Ignored, the engine would go on with accessories that
/// are not on disk, and every later write referring to them would fail, even once space is
/// back; so `aabridge run` stops with exit status 4, having published nothing, and the next
/// start (the service manager's restart) stores them (docs/reliability.md).
///
/// The commit is made to fail by another process (sqlite3) holding the database's write lock
/// past the store's 5 s busy timeout, for as long as the test needs: no mount, no root.
@Suite("A session whose first commit cannot be stored")
struct ActivationFailureTests {
    static var hasSQLite3: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3") }

    /// Creates the schema and nothing else: what a first start has once the store is open,
    /// before the activation commits the configuration's accessories. (With the lock held,
    /// creating the schema would fail before that, when the database is opened: exit 1.)
    static func createSchema(_ path: String) throws {
        let store = try AccessoryStore(path: path)
        defer { store.close() }
        #expect(try store.load().accessories.isEmpty)
    }

    /// What the database holds, read by a store of the test's own.
    static func stored(_ path: String) throws -> RestoredState {
        let store = try AccessoryStore(path: path)
        defer { store.close() }
        return try store.load()
    }

    @Test("aabridge run whose first commit fails (database locked) exits 4 and says why, publishes nothing; a restart stores it")
    func executableExits() async throws {
        guard Self.hasSQLite3 else {
            Issue.record("sqlite3 is not installed")
            return
        }
        let executable = try ExecutableTests.executable
        let broker = try MosquittoBroker()
        let directory = try ExecutableTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("aabridge.sqlite3").path
        let config = directory.appendingPathComponent("aabridge.yaml")
        try BridgeHarness.yaml(server: broker.url, database: database).write(to: config, atomically: true, encoding: .utf8)
        try Self.createSchema(database)
        let observer = try await Observer(broker: broker)

        let holder = try await WriteLockHolder(database: database, directory: directory)
        defer { holder.stop() }
        let firstLog = directory.appendingPathComponent("first.log").path
        let first = try ChildProcess(path: executable, arguments: ["run", "--config", config.path], output: firstLog)
        // About 5 s (the busy timeout); generous against a loaded machine. Before the fix it
        // never ended: it went online with accessories that were not stored.
        let status = await first.wait(timeout: .seconds(60))
        let text = (try? String(contentsOfFile: firstLog, encoding: .utf8)) ?? ""
        #expect(status == 4, "exit \(status.map { "\($0)" } ?? "none: still running after 60 s"): \(text)\nsqlite3: \(holder.log)")
        #expect(text.contains("the session's first commit"), "\(text)")
        #expect(text.contains("could not be stored"), "\(text)")
        #expect(text.contains("another process holds the database lock"), "the cause: \(text)")
        #expect(text.contains("exit status 4"), "\(text)")
        // It never connected: no state, no accessory, no `offline` for a session that never was.
        #expect(observer.messages.elements.map(\.topic) == [])
        // The lock was held all along (sqlite3 had not ended by itself).
        #expect(await holder.release() == 0, "sqlite3: \(holder.log)")
        let left = try Self.stored(database)
        #expect(left.accessories.isEmpty && !left.migrationComplete, "nothing of the session was stored")

        // Nothing retained either: a new subscriber gets nothing.
        let watcher = try await Observer(broker: broker)
        try await Task.sleep(for: .milliseconds(300))
        #expect(watcher.messages.elements.map(\.topic) == [])

        // The restart a service manager makes, once the lock (the full disk) is gone.
        let secondLog = directory.appendingPathComponent("second.log").path
        let second = try ChildProcess(path: executable, arguments: ["run", "--config", config.path], output: secondLog)
        defer { second.stop(signal: SIGKILL) }
        let online = await watcher.waitFor("aabridge/bridge/state", timeout: .seconds(30)) { $0["state"] == "online" }
        #expect(online != nil, "\((try? String(contentsOfFile: secondLog, encoding: .utf8)) ?? "")")
        for topic in [Fixture.airPodsTopic, Fixture.headphonesTopic, Fixture.speakerTopic] {
            await watcher.waitFor("aabridge/accessory/\(topic)", timeout: .seconds(10)) { $0["id"] != nil }
        }
        // Not reaped yet, so the pid is still this child's.
        kill(second.pid, SIGTERM)
        #expect(await second.wait(timeout: .seconds(30)) == 0)
        let restored = try Self.stored(database)
        #expect(restored.migrationComplete)
        #expect(
            Set(restored.accessories.map(\.id.description)) == [Fixture.airPods, Fixture.headphones, Fixture.speaker],
            "the configuration's accessories are stored")
        await watcher.disconnect()
        await observer.disconnect()
    }

    @Test("in the runtime: run() returns 4 by itself, storage closed, the MQTT client never connected")
    func runtimeStops() async throws {
        guard Self.hasSQLite3 else {
            Issue.record("sqlite3 is not installed")
            return
        }
        let harness = try BridgeHarness()
        defer { harness.removeDirectory() }
        try Self.createSchema(harness.databasePath)
        let observer = try await Observer(broker: harness.broker)
        let holder = try await WriteLockHolder(database: harness.databasePath, directory: harness.directory)
        defer { holder.stop() }
        try await harness.runner.start(observer: observer, clock: BridgeClock.now, waitOnline: false)
        let status = await harness.runner.ended(within: .seconds(60))
        #expect(status == 4, "run() returned \(status.map { "\($0)" } ?? "nothing: still running after 60 s")")
        let store = try #require(harness.runner.store)
        let closed = #expect(throws: StorageError.self) { try store.load() }
        #expect(closed?.code == .closed)
        #expect(harness.runner.client?.isConnected == false)
        #expect(observer.messages.elements.map(\.topic) == [])
        #expect(await holder.release() == 0, "sqlite3: \(holder.log)")
        #expect(try Self.stored(harness.databasePath).accessories.isEmpty)
        await harness.stop()
        await observer.disconnect()
    }
}
