import Foundation
import LocalProcess
import TestSupport
import Testing

@testable import Bridge

/// `scripts/run` stops what it starts (the local mosquitto, the bridge, the demo's bridge and
/// watcher) however it ends: it must not `exec scripts/demo`, which would drop its EXIT trap and
/// leave the mosquitto it started running after the demo (docs/reliability.md). The script runs for real with the
/// debug executable (`AABRIDGE_BIN`, so it builds nothing), a free loopback port with no broker
/// on it (so it starts its own) and a run directory of the test's own; afterwards no process
/// may name that directory and the port must be closed.
@Suite("scripts/run stops what it started", .serialized)
struct RunScriptTests {
    struct Run {
        let directory: URL
        let port: Int
        let script: ChildProcess
        let output: String

        var log: String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }
    }

    /// Starts `scripts/run arguments` with its own run directory and broker port.
    static func start(_ arguments: [String], directory: URL) throws -> Run {
        let port = try FreePort.find()
        let output = directory.appendingPathComponent("run.txt").path
        let environment = [
            "AABRIDGE_BIN=\(try ExecutableTests.executable)", "AABRIDGE_MQTT_SERVER=mqtt://127.0.0.1:\(port)",
            "AABRIDGE_RUN_DIR=\(directory.path)", "AABRIDGE_STORAGE_PATH=\(directory.path)/aabridge.sqlite3",
        ]
        let script = try ChildProcess(
            path: "/usr/bin/env", arguments: environment + [Repository.file("scripts/run")] + arguments, output: output)
        return Run(directory: directory, port: port, script: script, output: output)
    }

    /// The processes whose command line names `directory` (the broker's configuration and the
    /// demo's database are in it).
    static func processes(naming directory: URL) -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.filter { $0.allSatisfy(\.isNumber) }.compactMap { pid in
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return nil }
            let command = String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
            return command.contains(directory.path) && !command.contains("/usr/bin/env ") ? "\(pid): \(command)" : nil
        }
    }

    static func isListening(_ port: Int) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    /// Waits until the broker the script started accepts connections and the bridge said online.
    static func waitUntilRunning(_ run: Run) async throws {
        let broker = await eventually(timeout: .seconds(20)) { isListening(run.port) }
        #expect(broker, "the script started a broker on \(run.port): \(run.log)")
        let state = run.directory.appendingPathComponent("state.txt").path
        let subscriber = try ChildProcess(
            path: "/usr/bin/mosquitto_sub",
            arguments: ["-h", "127.0.0.1", "-p", "\(run.port)", "-t", "aabridge/bridge/state", "-C", "1", "-W", "20"], output: state)
        #expect(await subscriber.wait(timeout: .seconds(25)) == 0)
        let text = (try? String(contentsOfFile: state, encoding: .utf8)) ?? ""
        #expect(text.contains(#"{"state":"online"}"#), "bridge/state: \(text); \(run.log)")
    }

    static func expectNothingLeft(_ run: Run, sourceLocation: SourceLocation = #_sourceLocation) async {
        let gone = await eventually(timeout: .seconds(5)) { processes(naming: run.directory).isEmpty && !isListening(run.port) }
        #expect(
            gone, "still running: \(processes(naming: run.directory)); port \(run.port) open: \(isListening(run.port))",
            sourceLocation: sourceLocation)
    }

    @Test("--demo: the demo ends by itself, then its bridge, its watcher and the local broker are gone")
    func demoEnds() async throws {
        let directory = try ExecutableTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try Self.start(["--demo"], directory: directory)
        let status = await run.script.wait(timeout: .seconds(90))
        #expect(status == 0, "\(run.log)")
        #expect(run.log.contains("demo finished"), "\(run.log)")
        #expect(run.log.contains("\"identity\":\"followed\""), "the demo ran to its last step: \(run.log)")
        await Self.expectNothingLeft(run)
    }

    @Test(
        "SIGINT (Ctrl-C) or SIGTERM while the bridge or the demo runs: the script ends, and so does all it started",
        arguments: [
            (SIGINT, false), (SIGTERM, false), (SIGINT, true), (SIGTERM, true),
        ])
    func signalled(signal: Int32, demo: Bool) async throws {
        let directory = try ExecutableTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try Self.start(demo ? ["--demo"] : [], directory: directory)
        try await Self.waitUntilRunning(run)
        #expect(!Self.processes(naming: run.directory).isEmpty, "the broker names the run directory")
        kill(run.script.pid, signal)
        let status = await run.script.wait(timeout: .seconds(30))
        #expect(status == 128 + signal, "\(run.log)")
        await Self.expectNothingLeft(run)
    }

    @Test("the bridge fails to start (a bad configuration): the script fails with its status, and the broker it started is gone")
    func bridgeFails() async throws {
        let directory = try ExecutableTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("bad.yaml")
        try "mqtt:\n  server: mqtt://localhost:1883\nlog: {level: loud}\n".write(to: config, atomically: true, encoding: .utf8)
        let run = try Self.start(["--config", config.path], directory: directory)
        let status = await run.script.wait(timeout: .seconds(30))
        #expect(status == 2, "\(run.log)")
        #expect(run.log.contains("starting a local mosquitto"), "\(run.log)")
        await Self.expectNothingLeft(run)
    }
}
