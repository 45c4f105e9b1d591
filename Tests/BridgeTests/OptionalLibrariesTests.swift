import Foundation
import LocalProcess
import TestSupport
import Testing

/// The libraries only some configurations need are opened when they are needed, never at
/// start: the running `aabridge` executable's memory map shows which it has loaded.
@Suite("Optional libraries: libmicrohttpd, libpq and libsystemd mapped only when configured")
struct OptionalLibrariesTests {
    /// The shared objects `pid` has mapped, by file name.
    static func mappedLibraries(_ pid: Int32) throws -> Set<String> {
        // Read to the end: /proc's files say they are empty, and a read sized by that gets a page.
        guard let file = FileHandle(forReadingAtPath: "/proc/\(pid)/maps") else { throw BrokerError("no /proc/\(pid)/maps") }
        defer { try? file.close() }
        let maps = String(decoding: file.readDataToEndOfFile(), as: UTF8.self)
        return Set(maps.split(separator: "\n").filter { $0.contains("/") }.compactMap { $0.split(separator: "/").last.map(String.init) })
    }

    @Test("without http.listen no libmicrohttpd nor GnuTLS; with it, libmicrohttpd and /healthz; never libpq nor libsystemd")
    func mappedOnlyWhenConfigured() async throws {
        let executable = try ExecutableTests.executable
        let broker = try MosquittoBroker()
        let directory = try ExecutableTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let observer = try await Observer(broker: broker)
        let port = try FreePort.find()
        for http in [false, true] {
            let name = http ? "http" : "plain"
            let config = directory.appendingPathComponent("\(name).yaml")
            let database = directory.appendingPathComponent("\(name).sqlite3").path
            try BridgeHarness.yaml(
                server: broker.url, database: database, mqttExtra: http ? "http:\n  listen: 127.0.0.1:\(port)\n" : ""
            ).write(to: config, atomically: true, encoding: .utf8)
            let log = directory.appendingPathComponent("\(name).log").path
            let seen = observer.messages(on: "aabridge/bridge/state").count
            let bridge = try ChildProcess(path: executable, arguments: ["run", "--config", config.path], output: log)
            await observer.waitFor("aabridge/bridge/state", after: seen, timeout: .seconds(8)) { $0["state"] == "online" }
            let mapped = try Self.mappedLibraries(bridge.pid)
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            #expect(mapped.contains { $0.hasPrefix("libsqlite3") }, "the map was read: \(mapped.sorted())")
            #expect(!mapped.contains { $0.hasPrefix("libpq") }, "\(name): \(mapped.sorted())")
            #expect(!mapped.contains { $0.hasPrefix("libsystemd") || $0.hasPrefix("libgcrypt") }, "\(name): \(mapped.sorted())")
            #expect(!mapped.contains { $0.hasPrefix("libgnutls") } || http, "\(name): \(mapped.sorted())")
            #expect(mapped.contains { $0.hasPrefix("libmicrohttpd") } == http, "\(name): \(mapped.sorted())\n\(text)")
            if http {
                let healthz = try await HTTPTestClient.fetch(port: port, "GET", "/healthz")
                #expect(healthz.status == 200, "\(text)")
            }
            let before = observer.messages(on: "aabridge/bridge/state").count
            bridge.stop(signal: SIGTERM)
            await observer.waitFor("aabridge/bridge/state", after: before) { $0["state"] == "offline" }
        }
        await observer.disconnect()
    }
}
