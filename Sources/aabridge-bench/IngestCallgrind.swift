import Foundation
import JSON
import LocalProcess
import MQTT

/// `ingest --callgrind`: instructions per message, which repeat where the seconds do not,
/// for both consumers by the same method: the instructions of a window with a stream of N
/// messages minus those of a window with N/10, divided by 0.9 N, so that whatever a window
/// costs regardless of its length (startup, connecting, the end markers) cancels out.
///
/// - mosquitto_sub: each window is a whole process under `valgrind --tool=callgrind`,
///   subscribed, then fed N (or N/10) messages, exiting after them (`-C`).
/// - the bridge: one `aabridge run` under callgrind for all windows (starting it under
///   valgrind takes long), each window between two `callgrind_control --dump`s, which
///   count the instructions since the previous dump. The window of the bridge also holds
///   its idle wake-ups for the window's duration (valgrind slows everything down ~50x, so
///   that is more than in real time); they are measured separately and printed, not
///   subtracted.
///
/// Both run with SigsuspendShim preloaded (without it valgrind 3.19 dies as the bridge starts).
/// Publishers at QoS 1; the bridge gets QoS 0 (its subscription), mosquitto_sub -q 1 and -q 0.
enum IngestCallgrind {
    static let environment = ProcessInfo.processInfo.environment
    /// 20,000 by default: mosquitto_sub's count per message is the same at 5,000, 20,000 and
    /// 50,000, and under valgrind the bridge takes ~1 ms per message.
    static let messages = Int(environment["AABRIDGE_BENCH_CALLGRIND_MESSAGES"] ?? "") ?? 20_000
    /// Pairs of windows (N, N/10) per consumer: mosquitto_sub repeats to within a few
    /// instructions per message, the bridge does not (its batching follows the scheduling).
    static let repetitions = Int(environment["AABRIDGE_BENCH_CALLGRIND_REPEAT"] ?? "") ?? 3

    static func run(executable: String, accessories: Int) async throws {
        let streams = try StreamKind.configured(environment["AABRIDGE_BENCH_STREAMS"])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "aabridge-bench-ingest-callgrind-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        // AABRIDGE_BENCH_CALLGRIND_KEEP=1 keeps the output files for callgrind_annotate.
        let keep = environment["AABRIDGE_BENCH_CALLGRIND_KEEP"] == "1"
        if !keep { IngestChildren.add(directory: directory) }
        defer { if !keep { try? FileManager.default.removeItem(atPath: directory) } }
        if keep { print("ingest --callgrind: output files kept in \(directory)") }
        let shim = try SigsuspendShim.build(in: directory)
        let large = IngestPublishers.sent(messages)
        let small = IngestPublishers.sent(messages / 10)
        print(
            "ingest --callgrind: instructions per message = (Ir of a window with \(large) messages - Ir with \(small)) / \(large - small), "
                + "\(repetitions) pairs per consumer, valgrind --tool=callgrind with \(shim) preloaded; publishers at QoS 1; "
                + "load average \(ProcessClock.loadAverage())")

        let broker = try IngestBroker()
        defer { broker.stop() }
        let publishers = try await IngestPublishers(broker: broker, accessories: accessories)
        func wrapper(_ out: String) -> [String] { callgrind(shim: shim, out: out) }

        // By stream, then subscriber QoS.
        var reference: [StreamKind: [Int: [Double]]] = [:]
        for kind in streams {
            for subscriberQoS in [0, 1] {
                for repetition in 0..<repetitions {
                    var totals: [Double] = []
                    for count in [large, small] {
                        let out = "\(directory)/mosquitto_sub.\(kind.rawValue).q\(subscriberQoS).\(count).\(repetition)"
                        let subscriber = try ReferenceSubscriber(
                            broker: broker, qos: subscriberQoS, count: count, wrapper: wrapper(out), subscribeTimeout: 120)
                        await publishers.publish(.reference, kind, count: count, qos: .atLeastOnce)
                        let outcome = await subscriber.finish(timeout: 300 + Double(count) / 500)
                        guard outcome.completed, let total = totalInstructions(out) else {
                            throw E2E.Failure(
                                "mosquitto_sub -q \(subscriberQoS) under callgrind did not complete \(count) messages; see \(out).valgrind.log"
                            )
                        }
                        totals.append(total)
                    }
                    let perMessage = (totals[0] - totals[1]) / Double(large - small)
                    reference[kind, default: [:]][subscriberQoS, default: []].append(perMessage)
                    print(
                        "  \(kind.rawValue) stream, mosquitto_sub -q \(subscriberQoS), pair \(repetition + 1): \(Int(totals[0])) Ir for \(large) messages, "
                            + "\(Int(totals[1])) for \(small): \(E2E.format(perMessage, 1)) per message")
                }
            }
        }

        let workspace = try E2E.Workspace(accessories: accessories + IngestPublishers.count, tag: "ingest-callgrind")
        IngestChildren.add(directory: workspace.directory)
        let out = "\(directory)/bridge.out"
        let bridge = try await IngestBridge(
            executable: executable, workspace: workspace, accessories: accessories, markers: IngestPublishers.count,
            broker: broker, wrapper: wrapper(out), onlineTimeout: 600)
        let dumps = Dumps(pid: bridge.pid, out: out)
        var bridgeFigures: [StreamKind: [Double]] = [:]
        var idlePerSecond = 0.0
        do {
            // Warm-up: every accessory sighted once (a first sighting publishes retained state).
            _ = try await window(bridge, publishers, dumps, count: 4 * accessories)
            try dumps.take()
            let idleSeconds = 5.0
            try await Task.sleep(for: .seconds(idleSeconds))
            idlePerSecond = try dumps.take() / idleSeconds
            print("  bridge idle under callgrind: \(E2E.format(idlePerSecond, 0)) Ir/s")
            for kind in streams {
                for repetition in 0..<repetitions {
                    let l = try await window(bridge, publishers, dumps, kind, count: large)
                    let s = try await window(bridge, publishers, dumps, kind, count: small)
                    let perMessage = (l.instructions - s.instructions) / Double(large - small)
                    let lost = l.lost + s.lost
                    if lost == 0 { bridgeFigures[kind, default: []].append(perMessage) }
                    print(
                        "  \(kind.rawValue) stream, bridge, pair \(repetition + 1): \(Int(l.instructions)) Ir for \(large) messages (\(E2E.format(l.seconds, 1)) s window), "
                            + "\(Int(s.instructions)) for \(small) (\(E2E.format(s.seconds, 1)) s): \(E2E.format(perMessage, 1)) per message"
                            + (lost > 0 ? "; LOSSY (lost \(lost)), left out" : ""))
                }
            }
        } catch {
            await bridge.stop(timeout: 120)
            throw error
        }
        await bridge.stop(timeout: 120)
        await publishers.disconnect()

        func median(_ values: [Double]) -> Double { values.isEmpty ? .nan : values.sorted()[values.count / 2] }
        func range(_ values: [Double]) -> String {
            guard let low = values.min(), let high = values.max() else { return "n/a" }
            return E2E.format(low, 0) == E2E.format(high, 0) ? E2E.format(low, 0) : "\(E2E.format(low, 0))–\(E2E.format(high, 0))"
        }
        print("ingest.callgrind_bridge_idle_instructions_per_s \(E2E.format(idlePerSecond, 0)) Ir")
        for kind in streams {
            let figures = bridgeFigures[kind] ?? []
            let bridgeMedian = median(figures)
            let name = "ingest.callgrind_\(kind.rawValue)"
            print("\(name)_bridge_instructions_per_msg \(E2E.format(bridgeMedian, 0)) Ir")
            var summary = ["bridge \(range(figures)) instructions per message (median \(E2E.format(bridgeMedian, 0)))"]
            for subscriberQoS in [0, 1] {
                let figures = reference[kind]?[subscriberQoS] ?? []
                let ratio = bridgeMedian / median(figures)
                print("\(name)_sub_q\(subscriberQoS)_instructions_per_msg \(E2E.format(median(figures), 0)) Ir")
                print("\(name)_ratio_bridge_sub_q\(subscriberQoS) \(E2E.format(ratio, 2)) ratio")
                summary.append("mosquitto_sub -q \(subscriberQoS) \(range(figures)) (bridge median \(E2E.format(ratio, 2))x)")
            }
            print(
                "ingest --callgrind, \(kind.rawValue) stream: " + summary.joined(separator: "; ")
                    + "; user-space instructions only (the kernel's share is not counted)")
        }
    }

    /// One bridge window: `count` messages and the markers between two dumps, completion by
    /// the markers' decisions (IngestBridge), loss from health before and after.
    static func window(
        _ bridge: IngestBridge, _ publishers: IngestPublishers, _ dumps: Dumps, _ kind: StreamKind = .known, count: Int
    ) async throws -> (instructions: Double, seconds: Double, lost: Int) {
        let sent = IngestPublishers.sent(count)
        bridge.resetMarkers()
        let before = try await bridge.health(timeout: 600)
        let mark = bridge.mark
        try dumps.take()
        let start = E2E.nanoseconds()
        await publishers.publish(.bridge, kind, count: count, qos: .atLeastOnce, last: bridge.marker)
        guard case .markers = await bridge.waitForMarkers(after: mark, timeout: 600 + Double(count) / 200, quiet: 30) else {
            throw E2E.Failure("the bridge under callgrind did not finish \(count) messages (markers dropped?); log:\n\(bridge.log)")
        }
        let instructions = try dumps.take()
        let seconds = Double(E2E.nanoseconds() - start) / 1e9
        try await Task.sleep(for: .seconds(1))
        let after = try await bridge.health(timeout: 600)
        func delta(_ key: String) -> Int { (after[key]?.intValue ?? 0) - (before[key]?.intValue ?? 0) }
        let lost = max(0, sent - (delta("messages_in") - bridge.markers - 1)) + delta("telemetry_rejected")
        return (instructions, seconds, lost)
    }

    /// The `totals:` (or `summary:`) instruction count of a callgrind output file.
    /// The command prefix that runs a program under callgrind with the sigsuspend shim
    /// preloaded, its counts in `out` and valgrind's log in `out`.valgrind.log.
    static func callgrind(shim: String, out: String) -> [String] {
        [
            "/usr/bin/env", "LD_PRELOAD=\(shim)", "/usr/bin/valgrind", "--tool=callgrind", "--callgrind-out-file=\(out)",
            "--log-file=\(out).valgrind.log",
        ]
    }

    static func totalInstructions(_ path: String) -> Double? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
            let line = text.split(separator: "\n").last(where: { $0.hasPrefix("totals:") || $0.hasPrefix("summary:") })
        else { return nil }
        return Double(line.split(separator: " ").dropFirst().first ?? "")
    }

    /// `callgrind_control --dump` of a running process: each dump holds the instructions since
    /// the previous one and lands in `<out>.<n>`.
    final class Dumps: Sendable {
        let pid: pid_t
        let out: String
        private let taken = E2E.ResultBox<Int>()

        init(pid: pid_t, out: String) {
            self.pid = pid
            self.out = out
        }

        /// Dumps now and returns the dump's instructions.
        @discardableResult
        func take() throws -> Double {
            let number = taken.value.withLock { value -> Int in
                value = (value ?? 0) + 1
                return value!
            }
            let control = try ChildProcess(path: "/usr/bin/callgrind_control", arguments: ["--dump=window\(number)", "\(pid)"])
            guard control.wait(timeout: 120) == 0 else { throw E2E.Failure("callgrind_control --dump \(pid) failed") }
            let path = "\(out).\(number)"
            let deadline = E2E.nanoseconds() + 60_000_000_000
            while E2E.nanoseconds() < deadline {
                if let total = IngestCallgrind.totalInstructions(path) { return total }
                usleep(50_000)
            }
            throw E2E.Failure("no callgrind dump \(path)")
        }
    }
}
