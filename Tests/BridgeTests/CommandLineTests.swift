import Foundation
import LocalProcess
import TestSupport
import Testing

/// The real `aabridge` executable, as a newcomer runs it.
@Suite("aabridge command line")
struct CommandLineTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let binary = repository.appendingPathComponent(".build/debug/aabridge").path

    /// Runs the binary and returns its exit status and combined output; a command still
    /// running after 30 s is killed and reported as status -2.
    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("cli-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: output) }
        let child = try ChildProcess(path: binary, arguments: arguments, output: output.path)
        let status = child.wait(timeout: 30) ?? -2
        return (status, (try? String(contentsOf: output, encoding: .utf8)) ?? "")
    }

    @Test("--help lists every subcommand")
    func help() throws {
        let (status, output) = try Self.run(["--help"])
        #expect(status == 0)
        for command in ["run", "validate", "simulate", "healthcheck", "version"] {
            #expect(output.contains("\n  \(command) "), "missing \(command) in:\n\(output)")
        }
    }

    @Test("version names the bridge and libmosquitto")
    func version() throws {
        let (status, output) = try Self.run(["version"])
        #expect(status == 0)
        #expect(output.hasPrefix("aabridge "))
        #expect(output.contains("libmosquitto 2."))
    }

    @Test("an unknown command is a usage error (exit 2)")
    func unknownCommand() throws {
        let (status, output) = try Self.run(["frobnicate"])
        #expect(status == 2)
        #expect(output.contains("unknown command 'frobnicate'"))
    }

    @Test(
        "an unknown option, an option without its value, a repeated option or a stray argument is a usage error (exit 2)",
        arguments: [
            (["validate", "--confg", "x.yaml"], "unknown option '--confg'"),
            (["validate", "--config"], "--config needs a value"),
            (["run", "--config"], "--config needs a value"),
            (["run", "--config", "--verbose"], "--config needs a value"),
            (["healthcheck", "--conf", "x.yaml"], "unknown option '--conf'"),
            (["simulate", "--config", "x.yaml", "--scenario"], "--scenario needs a value"),
            (["validate", "--scenario", "s.jsonl"], "unknown option '--scenario'"),
            (["validate", "--config", "a.yaml", "--config", "b.yaml"], "--config is given twice"),
            (["validate", "config/aabridge.yaml"], "unexpected argument 'config/aabridge.yaml'"),
            (["version", "--config", "x.yaml"], "unknown option '--config'"),
        ])
    func badOptions(arguments: [String], message: String) throws {
        let (status, output) = try Self.run(arguments)
        #expect(status == 2, "\(arguments): \(output)")
        #expect(output.contains(message), "\(output)")
        #expect(output.contains("usage: aabridge"), "the usage follows: \(output)")
        #expect(!output.contains("configuration is valid"), "nothing was validated: \(output)")
    }

    @Test("healthcheck without a configuration file names the path it looked for")
    func healthcheckMissingConfiguration() throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("missing-\(UUID().uuidString).yaml").path
        let (status, output) = try Self.run(["healthcheck", "--config", missing])
        #expect(status == 2, "\(output)")
        #expect(output.contains("'\(missing)': no such file"), "\(output)")
    }

    @Test(
        "simulate refuses a scenario line with a wrong type, no payload or an unknown key, naming file:line",
        arguments: [
            (#"{"delay_ms":"soon","topic":"home/a/b","payload":"x"}"#, "'delay_ms' must be a whole number"),
            (#"{"delay_ms":-1,"topic":"home/a/b","payload":"x"}"#, "'delay_ms' must be a whole number"),
            (#"{"delay_ms":1.5,"topic":"home/a/b","payload":"x"}"#, "'delay_ms' must be a whole number"),
            (#"{"delay_ms":10,"topic":"home/a/b"}"#, "'payload' is missing"),
            (#"{"topic":"home/a/b","payload":null}"#, "'payload' must be an object, an array or a string"),
            (#"{"topic":"home/a/b","payload":42}"#, "'payload' must be an object, an array or a string"),
            (#"{"topic":7,"payload":"x"}"#, "'topic' must be a topic name"),
            (#"{"delay":5,"topic":"home/a/b","payload":"x"}"#, "unknown key 'delay'"),
            (#"["home/a/b","x"]"#, "a line must be an object"),
        ])
    func badScenarioLines(line: String, message: String) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("scenario-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // A broker that is not there: a line that got through would end in exit 1, not 2.
        let port = try FreePort.find()
        let config = directory.appendingPathComponent("aabridge.yaml")
        let shipped = try String(contentsOf: Self.repository.appendingPathComponent("config/aabridge.yaml"), encoding: .utf8)
        try shipped.replacingOccurrences(of: "mqtt://localhost:1883", with: "mqtt://127.0.0.1:\(port)")
            .write(to: config, atomically: true, encoding: .utf8)
        let scenario = directory.appendingPathComponent("bad.jsonl")
        try "# comment\n{\"delay_ms\":0,\"topic\":\"home/a/b\",\"payload\":{}}\n\(line)\n".write(
            to: scenario, atomically: true, encoding: .utf8)
        let (status, output) = try Self.run(["simulate", "--config", config.path, "--scenario", scenario.path])
        #expect(status == 2, "\(output)")
        #expect(output.contains("\(scenario.path):3: \(message)"), "\(output)")
        #expect(!output.contains("published"), "nothing is published before every line is checked")
    }

    @Test("the shipped configuration and the demo's validate", arguments: ["config/aabridge.yaml", "config/examples/demo.yaml"])
    func shippedConfiguration(file: String) throws {
        let (status, output) = try Self.run(["validate", "--config", Self.repository.appendingPathComponent(file).path])
        #expect(status == 0, "\(output)")
        #expect(output.contains("configuration is valid"))
    }

    @Test("simulate refuses a scenario line with a wildcard topic, naming the line")
    func badScenario() throws {
        let scenario = FileManager.default.temporaryDirectory.appendingPathComponent("scenario-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: scenario) }
        try "# comment\n{\"delay_ms\":0,\"topic\":\"home/+/x\",\"payload\":{}}\n".write(to: scenario, atomically: true, encoding: .utf8)
        let (status, output) = try Self.run([
            "simulate", "--config", Self.repository.appendingPathComponent("config/aabridge.yaml").path,
            "--scenario", scenario.path,
        ])
        #expect(status == 2)
        #expect(output.contains("\(scenario.path):2"))
    }

    @Test("the shipped demo scenario parses")
    func demoScenario() throws {
        // Pointing at a broker that is not there: parsing must succeed first, then the
        // connection fails with exit 1 (not the exit 2 of a bad scenario).
        let port = try FreePort.find()
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("cli-\(UUID().uuidString).log")
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("cli-\(UUID().uuidString).yaml")
        defer {
            try? FileManager.default.removeItem(at: output)
            try? FileManager.default.removeItem(at: config)
        }
        // The environment is shared by tests running in parallel: point a copy of the file instead.
        let demo = try String(contentsOf: Self.repository.appendingPathComponent("config/examples/demo.yaml"), encoding: .utf8)
        try demo.replacingOccurrences(of: "mqtt://localhost:1883", with: "mqtt://127.0.0.1:\(port)")
            .write(to: config, atomically: true, encoding: .utf8)
        let child = try ChildProcess(
            path: Self.binary,
            arguments: [
                "simulate", "--config", config.path,
                "--scenario", Self.repository.appendingPathComponent("config/scenarios/demo.jsonl").path,
            ], output: output.path)
        #expect(child.wait() == 1)
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        #expect(text.contains("127.0.0.1:\(port)"), "\(text)")
    }
}
