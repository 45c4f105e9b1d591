import Foundation
import LocalProcess

/// Jinja2, the engine of Home Assistant's templates, for the tests that render the bridge's
/// templates as Home Assistant would (through `python3` on PATH: pip's Jinja2 or Debian's
/// python3-jinja2, which scripts/install-deps installs).
public enum Jinja {
    /// Whether those tests run: when `python3` can import `jinja2.sandbox`, and always in CI
    /// (`CI=true`), where a missing Jinja2 must fail the tests rather than skip them.
    public static let testsEnabled: Bool = available || ProcessInfo.processInfo.environment["CI"] == "true"

    /// Whether `python3` on PATH has Jinja2's sandbox.
    public static let available: Bool = {
        guard let child = try? ChildProcess(path: "/usr/bin/env", arguments: ["python3", "-c", "import jinja2.sandbox"]) else {
            return false
        }
        return child.wait() == 0
    }()

    /// A script that did not finish well: its exit status and what it printed.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Runs `script`, Python that uses Jinja2, as `python3 script INPUT OUTPUT`: `input` is
    /// written to INPUT first, and what the script wrote to OUTPUT is returned. Every test that
    /// renders templates as Home Assistant does goes through here (the scripts differ: one
    /// template, an automation, a blueprint).
    /// - Throws: ``Failure`` with the script's output when it exits with another status than
    ///   0 or runs longer than 30 s.
    public static func run(script: String, input: [UInt8]) throws -> [UInt8] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aabridge-jinja-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let inputFile = directory.appendingPathComponent("input.json")
        let outputFile = directory.appendingPathComponent("output")
        let scriptFile = directory.appendingPathComponent("script.py")
        let log = directory.appendingPathComponent("python.log")
        try Data(input).write(to: inputFile)
        try Data(script.utf8).write(to: scriptFile)
        let child = try ChildProcess(
            path: "/usr/bin/env", arguments: ["python3", scriptFile.path, inputFile.path, outputFile.path], output: log.path)
        let status = child.wait(timeout: 30)
        guard status == 0 else {
            let printed = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            throw Failure(
                description: "python3 exited with \(status.map { "status \($0)" } ?? "no status (killed after 30 s)"): \(printed)")
        }
        return Array(try Data(contentsOf: outputFile))
    }
}
