import Foundation
import LocalProcess
import TestSupport
import Testing

@testable import Bridge

/// The command clients (`healthcheck`, `keys`, `report-sources`) leave no session at the
/// broker: a clean session that expires on disconnect. With the bridge's persistent-session
/// settings, each healthcheck (the image runs one every 30 s) left a disconnected session
/// behind, with its QoS 1 subscriptions, for the broker's `persistent_client_expiration`.
@Suite("Command clients leave nothing behind at the broker")
struct CommandSessionTests {
    /// Until two more `$SYS` rounds reached `observer` (`$SYS/broker/uptime` changes every
    /// round): the `$SYS` figures it holds then count what happened before the call.
    static func settle(_ observer: Observer) async {
        let rounds = observer.messages(on: "$SYS/broker/uptime").count
        _ = await observer.waitFor("$SYS/broker/uptime", after: rounds + 1)
    }

    /// The broker's `$SYS/broker/clients/<name>` figure (connected and disconnected sessions:
    /// `total`; only the disconnected ones: `disconnected`) as `observer` last received it.
    /// Mosquitto publishes a figure (retained) only when it changed: the last one received is the
    /// current.
    static func clients(_ name: String, observer: Observer) -> Int? {
        observer.messages(on: "$SYS/broker/clients/\(name)").last.flatMap { Int($0.payloadString) }
    }

    @Test("20 healthchecks against a running bridge: every one healthy, and the broker holds as many sessions as before")
    func healthchecksLeaveNoSession() async throws {
        let broker = try MosquittoBroker(.init(sysIntervalSeconds: 1))
        let directory = try ExecutableTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("aabridge.yaml").path
        let database = directory.appendingPathComponent("aabridge.sqlite3").path
        try BridgeHarness.yaml(server: broker.url, database: database).write(toFile: config, atomically: true, encoding: .utf8)
        let observer = try await Observer(
            broker: broker,
            subscribe: ["aabridge/bridge/state", "$SYS/broker/clients/total", "$SYS/broker/clients/disconnected", "$SYS/broker/uptime"])
        let bridge = try ChildProcess(
            path: try ExecutableTests.executable, arguments: ["run", "--config", config],
            output: directory.appendingPathComponent("bridge.log").path)
        defer { bridge.stop() }
        #expect(await observer.waitFor("aabridge/bridge/state") { $0["state"] == "online" } != nil)

        await Self.settle(observer)
        let total = try #require(Self.clients("total", observer: observer))
        let disconnected = try #require(Self.clients("disconnected", observer: observer))
        #expect(total >= 2, "the bridge and the observer: \(total)")
        for run in 1...20 {
            let output = directory.appendingPathComponent("healthcheck-\(run).txt").path
            let check = try ChildProcess(
                path: try ExecutableTests.executable, arguments: ["healthcheck", "--config", config], output: output)
            let status = await check.wait(timeout: .seconds(20))
            #expect(status == 0, "healthcheck \(run): \((try? String(contentsOfFile: output, encoding: .utf8)) ?? "")")
        }
        await Self.settle(observer)
        let totalAfter = Self.clients("total", observer: observer)
        let disconnectedAfter = Self.clients("disconnected", observer: observer)
        #expect(
            totalAfter == total, "sessions at the broker: \(total) before 20 healthchecks, \(totalAfter.map { "\($0)" } ?? "none") after")
        #expect(
            disconnectedAfter == disconnected,
            "disconnected sessions kept: \(disconnected) before, \(disconnectedAfter.map { "\($0)" } ?? "none") after")
        await observer.disconnect()
    }
}
