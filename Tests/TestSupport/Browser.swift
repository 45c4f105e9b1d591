import Foundation
import LocalProcess

/// Debian's Chromium driven by its chromedriver through python3-selenium, headless, for the
/// console's browser test (scripts/install-deps installs chromium, chromium-driver and
/// python3-selenium; nothing is downloaded). Debian's own `/usr/bin/python3` runs the script:
/// python3-selenium is installed for it, not for a `python3` of pyenv or a virtualenv on PATH.
public enum Browser {
    public static let python = "/usr/bin/python3"
    public static let chromedriver = "/usr/bin/chromedriver"

    /// Whether the browser tests run: when selenium imports and chromedriver is there, and
    /// always in CI (`CI=true`), where a missing browser must fail the test, not skip it.
    public static let testsEnabled: Bool = available || ProcessInfo.processInfo.environment["CI"] == "true"

    public static let available: Bool = {
        guard FileManager.default.isExecutableFile(atPath: chromedriver),
            let child = try? ChildProcess(path: python, arguments: ["-c", "import selenium.webdriver"])
        else { return false }
        return child.wait() == 0
    }()

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Runs the Python selenium `script` as `/usr/bin/python3 script ARGUMENTS...` (at most `limit`
    /// seconds) and returns what it printed.
    /// - Throws: ``Failure`` with its output when it fails or runs too long.
    public static func run(script: String, arguments: [String], limit: Int = 180) async throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aabridge-browser-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let scriptFile = directory.appendingPathComponent("script.py")
        let log = directory.appendingPathComponent("python.log")
        try Data(script.utf8).write(to: scriptFile)
        let child = try ChildProcess(path: python, arguments: [scriptFile.path] + arguments, output: log.path)
        let status = await child.wait(timeout: .seconds(limit))
        let printed = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        guard status == 0 else {
            throw Failure(
                description: "python3 exited with \(status.map { "status \($0)" } ?? "no status (killed after \(limit) s)"): \(printed)")
        }
        return printed
    }
}
