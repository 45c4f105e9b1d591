import Foundation
import LocalProcess
import TestSupport

/// Another process, sqlite3, holding a database's write lock (`BEGIN EXCLUSIVE`) until the
/// test releases it.
///
/// The lock is held for no fixed time: a fixed time is outrun on a loaded machine, where a
/// full parallel test run's blocking waits can hold the few cooperative threads for seconds
/// and the test's next step comes after the lock is gone.
final class WriteLockHolder {
    let process: ChildProcess
    /// What sqlite3 and its script printed (errors), for a failure's message.
    let logPath: String
    private let releasePath: String

    /// Starts sqlite3 on `database` (whose schema must exist) and returns once it holds the
    /// lock; its files go to `directory`.
    init(database: String, directory: URL) async throws {
        let name = "write-lock-\(UUID().uuidString.prefix(8))"
        let held = directory.appendingPathComponent("\(name).held").path
        releasePath = directory.appendingPathComponent("\(name).release").path
        logPath = directory.appendingPathComponent("\(name).log").path
        let script = directory.appendingPathComponent("\(name).sh")
        // Released by the test, or after about two minutes should the test never do it.
        try """
        touch '\(held)'
        i=0
        while [ ! -e '\(releasePath)' ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done

        """.write(to: script, atomically: true, encoding: .utf8)
        // .timeout: a bridge's commit in progress is waited for. -bail: should BEGIN EXCLUSIVE
        // fail all the same, sqlite3 stops there and never says it holds the lock.
        process = try ChildProcess(
            path: "/usr/bin/sqlite3",
            arguments: ["-bail", database, ".timeout 10000", "BEGIN EXCLUSIVE;", ".shell sh \(script.path)", "COMMIT;"],
            output: logPath)
        guard await eventually(timeout: .seconds(30), { FileManager.default.fileExists(atPath: held) }) else {
            process.stop(signal: SIGKILL)
            throw BrokerError("sqlite3 did not take the write lock of \(database) within 30 s: \(log)")
        }
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Lets sqlite3 commit (nothing) and exit.
    /// - Returns: its exit status; nil when it was still running after `timeout` seconds (it is killed then).
    func release(timeout: TimeInterval = 30) async -> Int32? {
        askToRelease()
        return await process.wait(timeout: .seconds(timeout))
    }

    /// Ends it now (for a test that failed before ``release(timeout:)``): the release file
    /// ends its script too, which would otherwise outlive it by two minutes.
    func stop() {
        askToRelease()
        process.stop(signal: SIGKILL)
    }

    /// The script ends once the release file exists (should it not be created, its own limit ends it).
    private func askToRelease() {
        _ = FileManager.default.createFile(atPath: releasePath, contents: nil)
    }
}
