import Foundation
import JSON
import LocalProcess
import TestSupport
import Testing

/// `storage.url`'s password, however the URL spells it, appears nowhere the bridge shows the
/// URL: the retained `bridge/info` (over a real mosquitto, from a real PostgreSQL), the error
/// when the server cannot be reached, and `validate`'s report. libpq percent-decodes a URI's
/// parameter names, so `?pass%77ord=` is a password to it.
@Suite("storage.url's password is never shown")
struct StorageURLRedactionTests {
    static let secret = "s3cret-w0rd"

    /// The URL with the password written each way libpq reads one.
    static func spellings(_ base: String) -> [String] {
        let (scheme, rest) = (String(base.prefix { $0 != "/" }) + "//", String(base.drop { $0 != "/" }.dropFirst(2)))
        return [
            "\(base)?pass%77ord=\(secret)", "\(base)?password=\(secret)", "\(base)?%70assword=\(secret)",
            scheme + rest.replacingOccurrences(of: "aabridge@", with: "aabridge:\(secret)@"),
        ]
    }

    static func configuration(_ directory: URL, broker: String, url: String) throws -> String {
        let yaml = BridgeHarness.yaml(server: broker, database: directory.appendingPathComponent("unused.sqlite3").path)
            .replacingOccurrences(
                of: "storage:\n  path: \(directory.appendingPathComponent("unused.sqlite3").path)",
                with: "storage:\n  backend: postgresql\n  url: \"\(url)\"")
        let file = directory.appendingPathComponent("aabridge-\(UUID().uuidString.prefix(6)).yaml")
        try yaml.write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }

    @Test("bridge/info and validate show the URL without the password, written as pass%77ord, password, or in userinfo")
    func bridgeInfo() async throws {
        let executable = try ExecutableTests.executable
        let postgres = try LocalPostgres(.init(password: Self.secret))
        defer { postgres.stop() }
        let broker = try MosquittoBroker()
        let directory = try ExecutableTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for url in Self.spellings(postgres.url) {
            let config = try Self.configuration(directory, broker: broker.url, url: url)
            let validated = directory.appendingPathComponent("validate.txt").path
            let validate = try ChildProcess(path: executable, arguments: ["validate", "--config", config], output: validated)
            #expect(validate.wait() == 0)
            let report = (try? String(contentsOfFile: validated, encoding: .utf8)) ?? ""
            #expect(report.contains("configuration is valid"), "\(report)")
            #expect(!report.contains(Self.secret), "validate: \(report)")

            let observer = try await Observer(broker: broker)
            let log = directory.appendingPathComponent("run-\(UUID().uuidString.prefix(6)).log").path
            let bridge = try ChildProcess(path: executable, arguments: ["run", "--config", config], output: log)
            // It connected: libpq took the password however it was spelled (the server asks for one).
            let info = await observer.waitFor("aabridge/bridge/info", timeout: .seconds(15)) { $0["config"] != nil }
            bridge.stop(signal: SIGTERM)
            _ = await bridge.wait(timeout: .seconds(15))
            let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            let text = try #require(info, "no bridge/info for \(url): \(output)").serialized
            #expect(text.contains("127.0.0.1:\(postgres.port)"), "\(text)")
            #expect(!text.contains(Self.secret), "bridge/info for \(url): \(text)")
            #expect(!output.contains(Self.secret), "output for \(url): \(output)")
            await observer.disconnect()
            // The retained bridge/info would otherwise greet the next observer.
            let cleaner = try await Observer(broker: broker, subscribe: [])
            try await cleaner.publish("aabridge/bridge/info", "", retain: true)
            await cleaner.disconnect()
        }
    }

    @Test("the error for an unreachable PostgreSQL names the URL without the password")
    func connectError() async throws {
        let executable = try ExecutableTests.executable
        let directory = try ExecutableTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let port = try FreePort.find()
        let base = "postgresql://aabridge@127.0.0.1:\(port)/aabridge"
        let urls = Self.spellings(base) + ["host=127.0.0.1 port=\(port) user=aabridge password=\(Self.secret)"]
        for (index, url) in urls.enumerated() {
            let config = try Self.configuration(directory, broker: "mqtt://127.0.0.1:1", url: url)
            // A log of its own per spelling, so that each one's output is judged alone.
            let log = directory.appendingPathComponent("run-\(index).log").path
            let bridge = try ChildProcess(path: executable, arguments: ["run", "--config", config], output: log)
            let status = await bridge.wait(timeout: .seconds(30))
            let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            #expect(status == 1, "\(output)")
            #expect(output.contains("cannot connect to PostgreSQL at"), "\(output)")
            #expect(output.contains("127.0.0.1"), "\(output)")
            #expect(!output.contains(Self.secret), "\(url): \(output)")
        }
    }
}
