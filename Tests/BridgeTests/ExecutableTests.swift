import Foundation
import JSON
import LocalProcess
import MQTT
import Storage
import TestSupport
import Testing

@testable import Bridge

/// The real `aabridge` executable as a child process: `validate`, and `run` killed with SIGKILL.
@Suite("aabridge executable")
struct ExecutableTests {
    /// `.build/debug/aabridge`, built by `swift build --build-tests`.
    static var executable: String {
        get throws {
            let path = Repository.file(".build/debug/aabridge")
            guard FileManager.default.isExecutableFile(atPath: path) else {
                throw BrokerError("\(path) is missing: run `swift build --build-tests` first")
            }
            return path
        }
    }

    static func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aabridge-exe-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    struct BadConfiguration: Sendable, CustomStringConvertible {
        let yaml: String
        let paths: [String]
        let description: String
    }

    static let badConfigurations: [BadConfiguration] = [
        BadConfiguration(
            yaml: SampleConfiguration.validBase.replacingOccurrences(
                of: #"bluetooth_manufacturer_data_mask: "ffff""#, with: #"bluetooth_manufacturer_data_mask: "ffffff""#),
            paths: ["products[0].descriptor.bluetooth_manufacturer_data_mask"], description: "mask length"),
        BadConfiguration(
            yaml: SampleConfiguration.validBase + """
                mqtt:
                  keepalive: soon
                switching:
                  placement_debounce_ms: -5

                """, paths: ["mqtt.keepalive", "switching.placement_debounce_ms"], description: "two errors at once"),
        BadConfiguration(yaml: "products: [\n", paths: [], description: "not YAML"),
    ]

    @Test("aabridge validate: exit 2 for a bad configuration, and the output names the key path", arguments: badConfigurations)
    func validateRefuses(_ bad: BadConfiguration) async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("bad.yaml")
        try bad.yaml.write(to: config, atomically: true, encoding: .utf8)
        let output = directory.appendingPathComponent("output.txt").path
        let process = try ChildProcess(path: try Self.executable, arguments: ["validate", "--config", config.path], output: output)
        #expect(process.wait() == 2)
        let text = try String(contentsOfFile: output, encoding: .utf8)
        #expect(!text.isEmpty)
        for path in bad.paths {
            #expect(text.contains(path), "output names \(path):\n\(text)")
        }
    }

    @Test("aabridge run with an invalid configuration exits 2 and starts nothing")
    func runRefuses() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("bad.yaml")
        let database = directory.appendingPathComponent("never.sqlite3")
        let yaml = BridgeHarness.yaml(server: "mqtt://127.0.0.1:1", database: database.path)
            .replacingOccurrences(of: "placement_debounce_ms: 0", with: "placement_debounce_ms: -1")
        try yaml.write(to: config, atomically: true, encoding: .utf8)
        let output = directory.appendingPathComponent("output.txt").path
        let process = try ChildProcess(path: try Self.executable, arguments: ["run", "--config", config.path], output: output)
        #expect(process.wait() == 2)
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        #expect(text.contains("switching.placement_debounce_ms"), "\(text)")
        #expect(!FileManager.default.fileExists(atPath: database.path), "no database created")
    }

    @Test("the password never appears in the executable's output: validate errors, a refused login, a normal run")
    func passwordNeverPrinted() async throws {
        let executable = try Self.executable
        let password = "hunter2-\(UUID().uuidString.prefix(8))"
        let broker = try MosquittoBroker(.init(users: ["bridge": password, "watcher": "watch"]))
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("aabridge.sqlite3").path
        func config(_ name: String, password: String, breakIt: Bool = false) throws -> String {
            var yaml = BridgeHarness.yaml(
                server: broker.url, database: database,
                mqttExtra: "  user: bridge\n  password: \(password)")
            // The log level is raised so that warnings (a refused login) are printed.
            yaml = yaml.replacingOccurrences(of: "level: error", with: "level: info")
            if breakIt { yaml = yaml.replacingOccurrences(of: "keepalive: 10", with: "keepalive: soon") }
            let url = directory.appendingPathComponent(name)
            try yaml.write(to: url, atomically: true, encoding: .utf8)
            return url.path
        }
        // 1. validate, of a valid file and of one with an error elsewhere in the mqtt section.
        let validateLog = directory.appendingPathComponent("validate.log").path
        let validate = try ChildProcess(
            path: executable, arguments: ["validate", "--config", try config("valid.yaml", password: password)],
            output: validateLog)
        #expect(validate.wait() == 0)
        let invalid = try config("invalid.yaml", password: password, breakIt: true)
        let invalidLog = directory.appendingPathComponent("invalid.log").path
        #expect(try ChildProcess(path: executable, arguments: ["validate", "--config", invalid], output: invalidLog).wait() == 2)
        #expect(((try? String(contentsOfFile: invalidLog, encoding: .utf8)) ?? "").contains("mqtt.keepalive"))

        // 2. a refused login (wrong password), then 3. a normal run.
        let wrong = "wrong-\(password)"
        let refusedLog = directory.appendingPathComponent("refused.log").path
        let refused = try ChildProcess(
            path: executable, arguments: ["run", "--config", try config("wrong.yaml", password: wrong)], output: refusedLog)
        try await Task.sleep(for: .milliseconds(1_500))
        refused.stop(signal: SIGTERM)
        let refusedText = (try? String(contentsOfFile: refusedLog, encoding: .utf8)) ?? ""
        #expect(!refusedText.isEmpty, "the refused login is reported")
        #expect(!refusedText.contains(wrong), "\(refusedText)")

        let observer = try await Observer(broker: broker, user: "watcher", password: "watch")
        let runLog = directory.appendingPathComponent("run.log").path
        let run = try ChildProcess(
            path: executable, arguments: ["run", "--config", try config("good.yaml", password: password)], output: runLog)
        await observer.waitFor("aabridge/bridge/state", timeout: .seconds(8)) { $0["state"] == "online" }
        run.stop(signal: SIGTERM)
        await observer.waitFor("aabridge/bridge/state") { $0["state"] == "offline" }
        for log in [validateLog, invalidLog, runLog] {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            #expect(!text.contains(password), "\(log) shows the password:\n\(text)")
        }
        #expect(observer.messages.elements.allSatisfy { !$0.payloadString.contains(password) })
        await observer.disconnect()
    }

    @Test("validate and run refuse a missing TLS file and ca with mqtt:// at their key paths, with exit 2 (never 1)")
    func tlsFilesRefused() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("never.sqlite3")
        let missing = directory.appendingPathComponent("missing-ca.pem").path
        let existing = directory.appendingPathComponent("ca.pem").path
        try "pem\n".write(toFile: existing, atomically: true, encoding: .utf8)
        let cases: [(server: String, extra: String, path: String, message: String)] = [
            ("mqtts://127.0.0.1:1", "  ca: \(missing)", "mqtt.ca", "no such file"),
            ("mqtt://127.0.0.1:1", "  ca: \(existing)", "mqtt.ca", "needs an mqtts:// server"),
        ]
        for (index, testCase) in cases.enumerated() {
            let config = directory.appendingPathComponent("tls-\(index).yaml")
            try BridgeHarness.yaml(server: testCase.server, database: database.path, mqttExtra: testCase.extra)
                .write(to: config, atomically: true, encoding: .utf8)
            for command in ["validate", "run"] {
                let output = directory.appendingPathComponent("\(command)-\(index).txt").path
                let process = try ChildProcess(path: try Self.executable, arguments: [command, "--config", config.path], output: output)
                let status = await process.wait(timeout: .seconds(30))
                let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
                #expect(
                    status == 2, "\(command) \(testCase.extra): exit \(status.map { "\($0)" } ?? "none: still running after 30 s")\n\(text)"
                )
                #expect(text.contains("\(testCase.path): "), "\(text)")
                #expect(text.contains(testCase.message), "\(text)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: database.path), "no database created")
    }

    @Test("a second aabridge run on the same storage.path is refused with exit 3; the first keeps running")
    func secondInstanceRefused() async throws {
        let executable = try Self.executable
        let broker = try MosquittoBroker()
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("data/aabridge.sqlite3").path
        func config(_ name: String) throws -> String {
            let url = directory.appendingPathComponent(name)
            // Each file has a client id of its own: the broker would otherwise drop the first.
            try BridgeHarness.yaml(server: broker.url, database: database).write(to: url, atomically: true, encoding: .utf8)
            return url.path
        }
        let observer = try await Observer(broker: broker)
        let firstLog = directory.appendingPathComponent("first.log").path
        let first = try ChildProcess(path: executable, arguments: ["run", "--config", try config("first.yaml")], output: firstLog)
        await observer.waitFor("aabridge/bridge/state", timeout: .seconds(8)) { $0["state"] == "online" }
        for attempt in ["second", "third"] {
            let log = directory.appendingPathComponent("\(attempt).log").path
            let other = try ChildProcess(path: executable, arguments: ["run", "--config", try config("\(attempt).yaml")], output: log)
            let status = await other.wait(timeout: .seconds(30))
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            #expect(status == 3, "exit \(status.map { "\($0)" } ?? "none: still running after 30 s"): \(text)")
            #expect(text.contains("another aabridge (pid \(first.pid)) is already running on \(database)"), "\(text)")
        }
        #expect(first.isRunning, "the first bridge keeps running")
        #expect(observer.json(on: "aabridge/bridge/state").filter { $0["state"] == "online" }.count == 1, "only one bridge came online")
        first.stop(signal: SIGTERM)
        await observer.waitFor("aabridge/bridge/state") { $0["state"] == "offline" }
        await observer.disconnect()
        // Stopped, the lock is free: the next start takes it.
        let again = try DatabaseLock(database: database)
        #expect(again.isHeld)
    }

    @Test("aabridge validate: exit 0 for the test configuration")
    func validateAccepts() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("good.yaml")
        try BridgeHarness.yaml(server: "mqtt://127.0.0.1:1", database: directory.appendingPathComponent("db").path)
            .write(to: config, atomically: true, encoding: .utf8)
        let output = directory.appendingPathComponent("output.txt").path
        let process = try ChildProcess(path: try Self.executable, arguments: ["validate", "--config", config.path], output: output)
        #expect(process.wait() == 0, "\((try? String(contentsOfFile: output, encoding: .utf8)) ?? "")")
    }

    /// A configuration with `count` migrated, unregistered headphones (ids 0A:00:00:00:00:nn).
    static func burstConfiguration(server: String, database: String, count: Int) -> (yaml: String, ids: [String]) {
        let ids = (0..<count).map { String(format: "0A:00:00:00:%02X:%02X", $0 / 256, $0 % 256) }
        let accessories = ids.enumerated().map { index, id in
            "  - id: \"\(id)\"\n    name: Headphones \(index)\n    product: Acme Studio Headphones\n"
        }.joined()
        let base = BridgeHarness.yaml(server: server, database: database)
        // Swap the harness's three migrated accessories for the burst's.
        let head = base.components(separatedBy: "accessories:\n").first ?? base
        let tail = base.components(separatedBy: "sources:\n").last ?? ""
        return (head + "accessories:\n" + accessories + "sources:\n" + tail, ids)
    }

    @Test("kill -9 during a burst of registrations: every acknowledged registration survives, the database is sound")
    func killDuringRegistrationBurst() async throws {
        let executable = try Self.executable
        let broker = try MosquittoBroker()
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("aabridge.sqlite3").path
        let (yaml, ids) = Self.burstConfiguration(server: broker.url, database: database, count: 120)
        let config = directory.appendingPathComponent("aabridge.yaml")
        try yaml.write(to: config, atomically: true, encoding: .utf8)
        let log = directory.appendingPathComponent("bridge.log").path

        let observer = try await Observer(broker: broker)
        let bridge = try ChildProcess(path: executable, arguments: ["run", "--config", config.path], output: log)
        let online = await observer.messages.wait(timeout: .seconds(8)) { elements in
            elements.contains { $0.topic == "aabridge/bridge/state" && $0.payloadString == #"{"state":"online"}"# }
        }
        guard online else {
            bridge.stop(signal: SIGKILL)
            Issue.record("the bridge did not come online:\n\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
            return
        }

        // The burst: every accessory registered with its own primary source, without waiting.
        func source(_ index: Int) -> String { String(format: "22:00:00:00:%02X:%02X", index / 256, index % 256) }
        let burst = Task {
            for (index, id) in ids.enumerated() {
                try? await observer.publish(
                    "aabridge/bridge/request/accessory/register",
                    #"{"id":"\#(id)","capabilities":["audioSwitching","placement"],"placement":"onHead","primary_source":"\#(source(index))","transaction":\#(index)}"#
                )
            }
        }
        // Kill it once some registrations are acknowledged and others are still in flight.
        let someAcknowledged = await observer.messages.wait(timeout: .seconds(30)) { elements in
            elements.filter { $0.topic == "aabridge/bridge/response/accessory/register" }.count >= 20
        }
        #expect(someAcknowledged)
        bridge.stop(signal: SIGKILL)
        // The broker publishes the bridge's will for it.
        await observer.waitFor("aabridge/bridge/state", timeout: .seconds(5)) { $0["state"] == "offline" }
        await burst.value
        try await Task.sleep(for: .milliseconds(200))
        let acknowledged = observer.json(on: "aabridge/bridge/response/accessory/register")
            .filter { $0["status"] == "ok" }.compactMap { $0["transaction"]?.intValue }
        #expect(acknowledged.count >= 20)
        #expect(acknowledged.count < ids.count, "the kill came before the burst ended (\(acknowledged.count) acknowledged)")
        await observer.disconnect()

        // Restart on the same database and broker; a fresh subscriber checks the state.
        let watcher = try await Observer(broker: broker)
        let restarted = try ChildProcess(path: executable, arguments: ["run", "--config", config.path], output: log)
        defer { restarted.stop(signal: SIGKILL) }
        let back = await watcher.messages.wait(timeout: .seconds(8)) { elements in
            elements.contains { $0.topic == "aabridge/bridge/state" && $0.payloadString == #"{"state":"online"}"# }
                && elements.contains { $0.topic == "aabridge/bridge/info" && $0.payloadString.contains(#""session":"activated""#) }
        }
        #expect(back, "restarted bridge online:\n\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        for index in acknowledged {
            let current = try await watcher.request("accessory/current", #""id":"\#(ids[index])""#)
            #expect(current["status"] == "ok", "acknowledged registration \(index) lost: \(current.serialized)")
            #expect(current["data"]?["configuration"]?["primary_source"] == .string(source(index)))
            #expect(current["data"]?["configuration"]?["placement"] == "onHead")
        }
        let states = watcher.messages.elements.filter {
            $0.topic.hasPrefix("aabridge/accessory/0A") && $0.topic.split(separator: "/").count == 3
        }
        let registered = Set(
            states.compactMap { message -> String? in
                let value = try? JSONParser.parse(message.payload)
                return value?["registration"] == "active" ? value?["id"]?.stringValue : nil
            })
        for index in acknowledged {
            #expect(registered.contains(ids[index]), "retained state of \(ids[index]) shows the registration")
        }
        let health = try await watcher.request("health")
        #expect((health["data"]?["registered"]?.intValue ?? 0) >= acknowledged.count)

        // A clean stop (SIGTERM) closes the database; then it must pass the integrity check.
        restarted.stop(signal: SIGTERM)
        let store = try AccessoryStore(path: database)
        #expect(store.integrityCheck() == [])
        let restored = try store.load()
        for index in acknowledged {
            let registration = restored.registrations.first { $0.key.description == ids[index] }
            #expect(registration != nil, "registration \(index) in the database")
        }
        store.close()
        await watcher.disconnect()
    }
}
