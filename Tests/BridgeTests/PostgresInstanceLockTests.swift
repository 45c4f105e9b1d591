import Foundation
import JSON
import LocalProcess
import Storage
import Synchronization
import TestSupport
import Testing

/// One PostgreSQL database, several real `aabridge run`s against a real mosquitto: one solo
/// bridge, or cluster members only (PostgresInstanceLock). Without it each solo bridge
/// answered every request.
@Suite("one solo bridge per PostgreSQL database")
struct PostgresInstanceLockTests {
    static func configuration(_ directory: URL, broker: String, url: String, cluster: String? = nil) throws -> String {
        let sqlite = directory.appendingPathComponent("unused.sqlite3").path
        var yaml = BridgeHarness.yaml(server: broker, database: sqlite)
            .replacingOccurrences(of: "storage:\n  path: \(sqlite)", with: "storage:\n  backend: postgresql\n  url: \"\(url)\"")
        if let cluster { yaml += "cluster:\n  enabled: true\n  instance: \(cluster)\n  partitions: 4\n" }
        let file = directory.appendingPathComponent("aabridge-\(UUID().uuidString.prefix(6)).yaml")
        try yaml.write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }

    static func start(_ config: String, _ directory: URL, _ name: String) throws -> (ChildProcess, String) {
        let log = directory.appendingPathComponent("\(name).log").path
        return (try ChildProcess(path: try ExecutableTests.executable, arguments: ["run", "--config", config], output: log), log)
    }

    static func output(_ log: String) -> String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    @Test("a second and a third solo bridge on the same database are refused with exit 3; the first answers each request once")
    func secondSoloRefused() async throws {
        let postgres = try LocalPostgres()
        defer { postgres.stop() }
        let broker = try MosquittoBroker()
        let directory = try ExecutableTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let observer = try await Observer(broker: broker)
        let (first, firstLog) = try Self.start(try Self.configuration(directory, broker: broker.url, url: postgres.url), directory, "first")
        defer { first.stop(signal: SIGKILL) }
        await observer.waitFor("aabridge/bridge/state", timeout: .seconds(15)) { $0["state"] == "online" }
        for name in ["second", "third"] {
            let (other, log) = try Self.start(try Self.configuration(directory, broker: broker.url, url: postgres.url), directory, name)
            let status = await other.wait(timeout: .seconds(30))
            if status == nil { other.stop(signal: SIGKILL) }
            let text = Self.output(log)
            #expect(status == 3, "exit \(status.map { "\($0)" } ?? "none: still running after 30 s"): \(text)")
            #expect(text.contains("another aabridge (aabridge from 127.0.0.1"), "\(text)")
            #expect(text.contains("is already running on \(postgres.url) without cluster mode"), "\(text)")
        }
        #expect(first.isRunning, "the first keeps running: \(Self.output(firstLog))")
        // Each request is answered once, by the first.
        for _ in 0..<3 {
            let response = try await observer.request("health")
            let transaction = try #require(response["transaction"]?.stringValue)
            try await Task.sleep(for: .milliseconds(500))
            let answers = observer.json(on: "aabridge/bridge/response/health").filter { $0["transaction"]?.stringValue == transaction }
            #expect(answers.count == 1, "\(answers)")
        }
        // Stopped, it releases the lock with its session: the next solo bridge starts.
        first.stop(signal: SIGTERM)
        #expect(await first.wait(timeout: .seconds(15)) == 0)
        let (next, nextLog) = try Self.start(try Self.configuration(directory, broker: broker.url, url: postgres.url), directory, "next")
        defer { next.stop(signal: SIGKILL) }
        let before = observer.json(on: "aabridge/bridge/state").count
        await observer.waitFor("aabridge/bridge/state", after: before, timeout: .seconds(15)) { $0["state"] == "online" }
        #expect(next.isRunning, "\(Self.output(nextLog))")
    }

    @Test("a solo bridge beside a cluster, and a cluster member beside a solo bridge, are refused with exit 3; members share")
    func soloAndClusterExclude() async throws {
        let postgres = try LocalPostgres()
        defer { postgres.stop() }
        let broker = try MosquittoBroker()
        let directory = try ExecutableTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let observer = try await Observer(broker: broker, subscribe: ["aabridge/#"])
        let (alpha, alphaLog) = try Self.start(
            try Self.configuration(directory, broker: broker.url, url: postgres.url, cluster: "alpha"), directory, "alpha")
        defer { alpha.stop(signal: SIGKILL) }
        await observer.waitFor("aabridge/bridge/instances/alpha", timeout: .seconds(20)) { $0["state"] == "online" }
        let (beta, betaLog) = try Self.start(
            try Self.configuration(directory, broker: broker.url, url: postgres.url, cluster: "beta"), directory, "beta")
        defer { beta.stop(signal: SIGKILL) }
        await observer.waitFor("aabridge/bridge/instances/beta", timeout: .seconds(20)) { $0["state"] == "online" }
        let (solo, soloLog) = try Self.start(try Self.configuration(directory, broker: broker.url, url: postgres.url), directory, "solo")
        let status = await solo.wait(timeout: .seconds(30))
        if status == nil { solo.stop(signal: SIGKILL) }
        #expect(status == 3, "\(Self.output(soloLog))")
        #expect(Self.output(soloLog).contains("a cluster of aabridge instances"), "\(Self.output(soloLog))")
        #expect(alpha.isRunning && beta.isRunning, "\(Self.output(alphaLog))\n\(Self.output(betaLog))")
        alpha.stop(signal: SIGTERM)
        beta.stop(signal: SIGTERM)
        _ = await alpha.wait(timeout: .seconds(15))
        _ = await beta.wait(timeout: .seconds(15))

        // The other way round: a solo bridge first, then a cluster member.
        let (first, firstLog) = try Self.start(try Self.configuration(directory, broker: broker.url, url: postgres.url), directory, "first")
        defer { first.stop(signal: SIGKILL) }
        let before = observer.json(on: "aabridge/bridge/state").count
        await observer.waitFor("aabridge/bridge/state", after: before, timeout: .seconds(15)) { $0["state"] == "online" }
        let (member, memberLog) = try Self.start(
            try Self.configuration(directory, broker: broker.url, url: postgres.url, cluster: "gamma"), directory, "gamma")
        let memberStatus = await member.wait(timeout: .seconds(30))
        if memberStatus == nil { member.stop(signal: SIGKILL) }
        #expect(memberStatus == 3, "\(Self.output(memberLog))")
        #expect(Self.output(memberLog).contains("without cluster mode"), "\(Self.output(memberLog))")
        #expect(first.isRunning, "\(Self.output(firstLog))")
    }

    @Test("after its session ends, the solo store takes its lock again; when another bridge took it first, the store gives up and says so")
    func reconnectRetakesLock() throws {
        let postgres = try LocalPostgres()
        defer { postgres.stop() }
        let lost = Mutex<[String]>([])
        let store = try PostgresStore(
            url: postgres.url, instanceLock: .solo, onLockLost: { error in lost.withLock { $0.append(error.message) } })
        defer { store.close() }
        #expect(throws: StorageError.self) { try PostgresStore(url: postgres.url, instanceLock: .solo) }
        // The server ends the store's session (as a restart does): the lock goes with it; the
        // next call reconnects and takes it again.
        let admin = try PostgresConnection(url: postgres.url)
        defer { admin.close() }
        let terminate = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND datname = 'aabridge'"
        try admin.execute(terminate)
        if (try? store.load()) == nil { _ = try store.load() }
        do {
            _ = try PostgresStore(url: postgres.url, instanceLock: .solo)
            Issue.record("the lock was not taken again after the reconnect")
        } catch { #expect(error.code == .alreadyInUse) }
        #expect(lost.withLock { $0 }.isEmpty)
        // Ended again, and another solo bridge takes the lock before the store reconnects.
        try admin.execute(terminate)
        let intruder = try PostgresStore(url: postgres.url, instanceLock: .solo)
        defer { intruder.close() }
        var thrown: StorageError?
        do { _ = try store.load() } catch { thrown = error }
        if thrown?.code == .unavailable { do { _ = try store.load() } catch { thrown = error } }
        #expect(thrown?.code == .alreadyInUse, "\(String(describing: thrown))")
        #expect(thrown?.message.contains("after reconnecting") == true, "\(String(describing: thrown))")
        #expect(lost.withLock { $0.count } == 1)
        do {
            _ = try store.load()
            Issue.record("a store that lost its lock must keep refusing")
        } catch { #expect(error.code == .alreadyInUse) }
        #expect(lost.withLock { $0.count } == 1, "reported once")
    }
}
