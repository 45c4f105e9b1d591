import Foundation
import LocalProcess

/// The ingest benchmark's mosquitto on a free loopback port: no persistence, and no bound on
/// queued or in-flight messages (`max_queued_messages 0`, `max_inflight_messages 0`), so a
/// consumer that falls behind makes the broker buffer rather than drop, and the consumer's
/// own speed is what is measured. Subscriptions are logged (`log_type subscribe`): that is
/// how the benchmark knows that a mosquitto_sub, which says nothing on its own, is subscribed
/// before the first message is published.
final class IngestBroker: Sendable {
    let port: Int
    let directory: String
    private let process: ChildProcess

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("aabridge-bench-ingest-broker-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        IngestChildren.add(directory: directory)
        port = try FreePort.find()
        let lines = [
            "persistence false", "log_dest file \(directory)/mosquitto.log", "log_type error", "log_type warning",
            "log_type subscribe", "user root", "per_listener_settings false", "max_queued_messages 0",
            "max_inflight_messages 0", "allow_anonymous true", "listener \(port) 127.0.0.1",
        ]
        try (lines.joined(separator: "\n") + "\n").write(toFile: directory + "/mosquitto.conf", atomically: true, encoding: .utf8)
        process = try ChildProcess(path: "/usr/sbin/mosquitto", arguments: ["-c", directory + "/mosquitto.conf"])
        IngestChildren.add(process.pid)
        guard FreePort.waitUntilListening(port: port, timeout: 10) else {
            stop()
            throw E2E.Failure("mosquitto did not listen on 127.0.0.1:\(port)")
        }
    }

    var pid: pid_t { process.pid }

    /// Waits until the broker has logged `clientID`'s subscription to `filter` (true), or
    /// `timeout` seconds passed (false).
    func waitForSubscription(clientID: String, filter: String, timeout: Double) -> Bool {
        let line = "\(clientID) "
        let deadline = E2E.nanoseconds() + UInt64(timeout * 1e9)
        repeat {
            let log = (try? String(contentsOfFile: directory + "/mosquitto.log", encoding: .utf8)) ?? ""
            if log.split(separator: "\n").contains(where: { $0.contains(line) && $0.hasSuffix(" \(filter)") }) { return true }
            usleep(2_000)
        } while E2E.nanoseconds() < deadline
        return false
    }

    func stop() {
        IngestChildren.remove(process.pid)
        if process.isRunning { process.stop() }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
