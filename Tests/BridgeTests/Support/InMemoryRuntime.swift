import Configuration
import Foundation
import Testing

@testable import Bridge

/// The pieces the in-memory flow tests share: the end-to-end configuration with a database of
/// its own, and a runtime run on an ``InMemoryConnection`` for the length of a test.
enum InMemoryRuntime {
    /// The end-to-end configuration (``BridgeHarness/yaml``, no broker) and a database path in
    /// a fresh temporary directory, removed after `body`.
    static func withConfiguration(
        homeAssistant: Bool = false, _ body: (_ configuration: BridgeConfiguration, _ database: String) async throws -> Void
    ) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aabridge-memory-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("aabridge.sqlite3").path
        let configuration = try ConfigurationLoader.load(
            yaml: BridgeHarness.yaml(server: "mqtt://127.0.0.1:1", database: database, homeAssistant: homeAssistant), environment: [:],
            hostname: "testhost"
        ).get()
        try await body(configuration, database)
    }

    /// Runs `runtime` (on `connection`) until `body` returns, once it said `online`; then stops
    /// it, which must end with exit status 0.
    static func run(_ runtime: BridgeRuntime, on connection: InMemoryConnection, _ body: () async throws -> Void) async throws {
        nonisolated(unsafe) let running = runtime
        let task = Task { await running.run(signals: nil) }
        await connection.waitFor("aabridge/bridge/state") { $0 == ["state": "online"] }
        try await body()
        runtime.stop()
        #expect(await task.value == 0)
    }
}
