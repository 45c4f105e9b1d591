import Foundation
import JSON
import LocalProcess
import MQTT
import Synchronization

/// `aabridge run` as a separate process (the release binary, as deployed) on the ingest
/// benchmark's broker, with a probe client in this process that sees its state, its health
/// responses and the decisions that mark a run's end.
///
/// Completion of a run: each publisher ends its share with one native telemetry message that
/// puts a marker accessory in the ear (accessory 1,000 + p, registered but never in the
/// stream, taken out before the run; placement debounce 0), which makes the bridge publish
/// that accessory's `decision`.
/// The bridge handles telemetry in arrival order, and the broker forwards one publisher's
/// messages in order, so marker p's decision comes only after everything publisher p sent
/// before it was processed: the run is done when all P decisions arrived. (A health request
/// would not do: past 1,000 waiting messages requests overtake the backlog, RequestLane.)
final class IngestBridge: Sendable {
    let markers: Int
    let accessories: Int
    private let child: ChildProcess
    private let probe: MQTTClient
    private let arrivals: E2E.Recorder
    private let transactions = Atomic<Int>(0)
    private let logPath: String

    static let responseTopic = "aabridge/bridge/response/health"

    /// Spawns the bridge (behind `wrapper`, e.g. valgrind, when given) and returns once its
    /// retained state says online and the markers are set up.
    init(
        executable: String, workspace: E2E.Workspace, accessories: Int, markers: Int, broker: IngestBroker, wrapper: [String] = [],
        onlineTimeout: Double = 120
    ) async throws {
        self.accessories = accessories
        self.markers = markers
        let configuration = try workspace.writeConfiguration(port: broker.port, debounceMilliseconds: 0)
        var settings = MQTTConfiguration(host: "127.0.0.1", port: broker.port, clientID: "bench-probe-\(UUID().uuidString.prefix(8))")
        settings.messageBufferLimit = nil
        probe = try MQTTClient(configuration: settings)
        try await probe.connect()
        arrivals = E2E.Recorder(probe)
        try await probe.subscribe("aabridge/bridge/state", qos: .atLeastOnce)
        try await probe.subscribe(Self.responseTopic, qos: .atLeastOnce)
        for p in 0..<markers { try await probe.subscribe(Self.decisionTopic(accessories + p), qos: .atLeastOnce) }

        logPath = workspace.directory + "/aabridge.log"
        let arguments = ["run", "--config", configuration]
        child =
            try wrapper.isEmpty
            ? ChildProcess(path: executable, arguments: arguments, output: logPath)
            : ChildProcess(path: wrapper[0], arguments: Array(wrapper.dropFirst()) + [executable] + arguments, output: logPath)
        IngestChildren.add(child.pid)
        let online = await arrivals.wait(timeout: onlineTimeout, pollMicroseconds: 2_000) { list in
            list.contains { $0.topic == "aabridge/bridge/state" && E2E.object($0.payload)?["state"]?.stringValue == "online" }
        }
        guard online else {
            IngestChildren.remove(child.pid)
            child.stop()
            throw E2E.Failure("aabridge did not come online within \(Int(onlineTimeout)) s; log:\n\(log)")
        }
        // The markers' sources (as e2e-latency sets its target up), one each: sharing one, two
        // markers put in within the same millisecond would tie, and only one would be routed.
        for p in 0..<markers {
            let source = String(format: "11:22:33:44:55:%02X", 0x60 + p)
            probe.enqueue(
                topic: Self.telemetryTopic(accessories + p), payload: Array(#"{"sources":["\#(source)"]}"#.utf8), qos: .atLeastOnce)
        }
    }

    var pid: pid_t { child.pid }
    var isRunning: Bool { child.isRunning }
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    static func topicID(_ n: Int) -> String { String(format: "%012llX", E2E.accessoryID(n).rawValue) }
    static func decisionTopic(_ n: Int) -> String { "aabridge/accessory/\(topicID(n))/decision" }
    static func telemetryTopic(_ n: Int) -> String { "aabridge/telemetry/bench/\(topicID(n))" }

    /// Takes every marker out of the ear (`worn` false: no decision is due for that), so that
    /// the next run's markers, which put it back, each make one. Sent by the probe before the
    /// health request that opens a run, so the bridge has handled them when that is answered.
    func resetMarkers() {
        for p in 0..<markers {
            probe.enqueue(topic: Self.telemetryTopic(accessories + p), payload: Array(#"{"worn":false}"#.utf8), qos: .atLeastOnce)
        }
    }

    /// Publisher p's last message of a run: marker p back in the ear, a route change.
    func marker(_ p: Int) -> (topic: String, payload: [UInt8]) {
        (Self.telemetryTopic(accessories + p), Array(#"{"worn":true,"hardware":"inEarBud"}"#.utf8))
    }

    /// The bridge's `health` answer. Only asked while nothing is waiting (before and after a
    /// run), so it is answered in order, after everything that came before it.
    func health(timeout: Double = 60) async throws -> JSONValue {
        let transaction = transactions.add(1, ordering: .relaxed).newValue
        return try await arrivals.health(through: probe, transaction: transaction, timeout: timeout)
    }

    /// A mark in the probe's arrivals: decisions after it belong to the run that follows.
    var mark: Int { arrivals.count }

    /// How a run ended.
    enum Completion {
        /// Every marker's decision arrived; the last one at this time.
        case markers(UInt64)
        /// No decision for some marker (a marker is telemetry too: the bridge may drop it
        /// with the rest of a flood), and the bridge has been idle since this time: it
        /// processed what it was going to. The run is incomplete, its loss in the counters.
        case quiet(UInt64)
        case timedOut
    }

    /// Waits up to `timeout` seconds for every marker's decision after `mark`, or until the
    /// bridge has been idle (at most 30 ms CPU) for `quiet` seconds without them.
    func waitForMarkers(after mark: Int, timeout: Double, quiet: Double = 1) async -> Completion {
        let topics = Set((0..<markers).map { Self.decisionTopic(accessories + $0) })
        let deadline = E2E.nanoseconds() + UInt64(timeout * 1e9)
        var quietSince = (at: E2E.nanoseconds(), cpu: ProcessClock.cpuMicroseconds(pid) ?? 0)
        while E2E.nanoseconds() < deadline {
            var last: UInt64?
            let done = await arrivals.wait(timeout: 0.05, pollMicroseconds: 500) { list in
                var seen: Set<String> = []
                var latest: UInt64 = 0
                for arrival in list[min(mark, list.count)...] where topics.contains(arrival.topic) && !seen.contains(arrival.topic) {
                    seen.insert(arrival.topic)
                    latest = max(latest, arrival.at)
                }
                guard seen.count == topics.count else { return false }
                last = latest
                return true
            }
            if done, let last { return .markers(last) }
            let now = E2E.nanoseconds()
            let cpu = ProcessClock.cpuMicroseconds(pid) ?? 0
            if cpu - quietSince.cpu > 30_000 {
                quietSince = (now, cpu)
            } else if Double(now - quietSince.at) / 1e9 >= quiet {
                return .quiet(quietSince.at)
            }
        }
        return .timedOut
    }

    /// The size of the bridge's log now (for ``logLines(since:containing:)``).
    var logSize: Int { (try? FileManager.default.attributesOfItem(atPath: logPath)[.size] as? Int) ?? 0 }

    /// The log lines written since `offset` that contain `text`.
    func logLines(since offset: Int, containing text: String) -> [String] {
        guard let handle = FileHandle(forReadingAtPath: logPath) else { return [] }
        defer { try? handle.close() }
        try? handle.seek(toOffset: UInt64(offset))
        let data = (try? handle.readToEnd()) ?? Data()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").filter { $0.contains(text) }.map(String.init)
    }

    /// Stops the bridge (SIGTERM, SIGKILL after `timeout` seconds) and the probe's connection.
    func stop(timeout: TimeInterval = 10) async {
        IngestChildren.remove(child.pid)
        child.stop(timeout: timeout)
        await probe.disconnect()
    }

    deinit {
        IngestChildren.remove(child.pid)
        child.stop()
    }
}
