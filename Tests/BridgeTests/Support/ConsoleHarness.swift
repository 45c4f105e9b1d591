import Foundation
import LocalProcess
import TestSupport

/// A bridge with its HTTP server on a free loopback port (`http.listen`), for the console,
/// metrics and health tests.
func withConsole(
    http extra: String = "", _ body: (_ harness: BridgeHarness, _ observer: Observer, _ port: Int) async throws -> Void
) async throws {
    let port = try FreePort.find()
    // `mqttExtra` lands at the top level of the file when its lines are not indented.
    let harness = try BridgeHarness(mqttExtra: "http:\n  listen: 127.0.0.1:\(port)\n" + extra)
    defer { harness.removeDirectory() }
    try await harness.run { observer in try await body(harness, observer, port) }
}
