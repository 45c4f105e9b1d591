import Foundation
import JSON
import LocalProcess
import MQTT

/// Ingest against the physical reference: the bridge, `aabridge run` as a separate
/// process, against `mosquitto_sub`, the C client over the same libmosquitto, on the same
/// broker and the same stream, in one run, interleaved (bridge, mosquitto_sub -q 1,
/// mosquitto_sub -q 0, bridge, …) so that all see the same machine load.
///
/// The streams (``StreamKind``, `AABRIDGE_BENCH_STREAMS`): 100,000 OpenMQTTGateway messages of
/// Apple nearby info from 1,000 addresses of nobody, then of proximity pairing over 1,000
/// registered accessories, from four publishers in this process (IngestPublishers), at QoS 1
/// and at QoS 0, as fast as they go;
/// the broker buffers without bound, so each consumer drains at its own speed. Per consumer
/// run: throughput = N / (first publish → done) and CPU per message = the consumer process's
/// utime + stime over the stream / N (/proc/<pid>/stat). Done is mosquitto_sub's exit (`-C N`)
/// and, for the bridge, the decisions of the marker messages that end each publisher's share
/// (IngestBridge). The bridge subscribes to gateway telemetry at QoS 0 by design, so it gets
/// QoS 1 publications at QoS 0: `-q 1` is the issue's reference, `-q 0` the like for like.
/// `--callgrind` adds instructions per message (IngestCallgrind).
enum IngestBenchmark {
    static let environment = ProcessInfo.processInfo.environment
    static let messagesPerRun = Int(environment["AABRIDGE_BENCH_MESSAGES"] ?? "") ?? 100_000
    static let repetitions = Int(environment["AABRIDGE_BENCH_REPEAT"] ?? "") ?? 3
    static let accessories = Int(environment["AABRIDGE_BENCH_ACCESSORIES"] ?? "") ?? 1_000

    /// One consumer's run.
    struct Sample {
        var messages: Int
        var seconds: Double
        var cpu: ProcessClock.Time
        /// Messages the consumer did not get or dropped (nil: unknown, the run did not complete).
        var lost: Int?
        var completed: Bool
        /// The broker's CPU time in the run per message (µs), for reading the figures: the
        /// broker shares the two cores with the consumer and the publishers.
        var brokerMicrosecondsPerMessage: Double
        var publishSeconds: Double

        var rate: Double { Double(messages) / seconds }
        var cpuPerMessage: Double { cpu.total / Double(messages) }
        var userPerMessage: Double { cpu.user / Double(messages) }
        var clean: Bool { completed && lost == 0 }
        /// The consumer was done within 25 % of the publishers' enqueueing: its rate is then
        /// (mostly) the publishers' on this machine, not its own. Printed, not left out.
        var publisherBound: Bool { seconds < publishSeconds * 1.25 }
        var note: String {
            (clean ? "" : completed ? " LOSSY (lost \(lost ?? -1))" : " INCOMPLETE (lost \(lost.map(String.init) ?? "some"))")
                + (publisherBound ? " publisher-bound" : "")
        }
    }

    /// In the order the runs and the ratios go: the like-for-like reference (`-q 0`, the
    /// bridge's own subscription QoS for telemetry) first.
    enum Consumer: CaseIterable {
        case bridge, subscriberQoS0, subscriberQoS1

        var label: String {
            switch self {
            case .bridge: "bridge"
            case .subscriberQoS1: "mosquitto_sub -q 1"
            case .subscriberQoS0: "mosquitto_sub -q 0"
            }
        }

        var key: String {
            switch self {
            case .bridge: "bridge"
            case .subscriberQoS1: "sub_q1"
            case .subscriberQoS0: "sub_q0"
            }
        }
    }

    static func run() async throws {
        let arguments = CommandLine.arguments
        let executable = try E2E.aabridgeExecutable()
        if !arguments.contains("--callgrind-only") {
            // `--backends sqlite,postgresql`: the same runs once per storage backend, each bridge
            // with its own database, in this one invocation, so that one instance on PostgreSQL
            // is compared with SQLite under the same load.
            let backends =
                arguments.firstIndex(of: "--backends").flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }?
                .split(separator: ",").map(String.init) ?? ["sqlite"]
            var figures: [String: [String: Median]] = [:]
            for backend in backends {
                print("ingest: storage backend \(backend)")
                switch backend {
                case "sqlite": figures[backend] = try await throughput(executable: executable, postgresURL: nil)
                case "postgresql":
                    // fsync on, as SQLite's synchronous=FULL: a commit is on disk when it returns.
                    let postgres = try LocalPostgres(.init(fsync: true))
                    defer { postgres.stop() }
                    figures[backend] = try await throughput(executable: executable, postgresURL: postgres.url)
                default: throw E2E.Failure("--backends: '\(backend)' is not sqlite or postgresql")
                }
            }
            if let sqlite = figures["sqlite"], let postgres = figures["postgresql"] {
                for (run, s) in sqlite.sorted(by: { $0.key < $1.key }) {
                    guard let p = postgres[run] else { continue }
                    print("ingest.\(run)_postgresql_vs_sqlite_rate \(E2E.format(p.rate / s.rate, 3)) ratio")
                    print("ingest.\(run)_postgresql_vs_sqlite_cpu \(E2E.format(p.cpu / s.cpu, 3)) ratio")
                    print(
                        "ingest (\(run)): bridge on PostgreSQL \(E2E.format(p.rate, 0)) msg/s, \(E2E.format(p.cpu, 2)) us/msg; "
                            + "on SQLite \(E2E.format(s.rate, 0)) msg/s, \(E2E.format(s.cpu, 2)) us/msg (medians of clean runs)")
                }
            }
        }
        if arguments.contains("--callgrind") || arguments.contains("--callgrind-only") {
            try await IngestCallgrind.run(executable: executable, accessories: accessories)
        }
    }

    /// The bridge's medians (clean runs) per publisher QoS: rate and CPU per message.
    struct Median {
        var rate: Double
        var cpu: Double
    }

    /// - Returns: the bridge's medians by run (`<stream>_qos<n>`).
    static func throughput(executable: String, postgresURL: String?) async throws -> [String: Median] {
        let broker = try IngestBroker()
        defer { broker.stop() }
        let workspace = try E2E.Workspace(accessories: accessories + IngestPublishers.count, tag: "ingest", postgresURL: postgresURL)
        IngestChildren.add(directory: workspace.directory)
        let publishers = try await IngestPublishers(broker: broker, accessories: accessories)
        let bridge = try await IngestBridge(
            executable: executable, workspace: workspace, accessories: accessories, markers: IngestPublishers.count, broker: broker)
        let medians: [String: Median]
        do {
            medians = try await throughput(broker: broker, publishers: publishers, bridge: bridge)
        } catch {
            await bridge.stop()
            await publishers.disconnect()
            throw error
        }
        await bridge.stop()
        await publishers.disconnect()
        return medians
    }

    static func throughput(broker: IngestBroker, publishers: IngestPublishers, bridge: IngestBridge) async throws -> [String: Median] {
        let streams = try StreamKind.configured(environment["AABRIDGE_BENCH_STREAMS"])
        let sent = IngestPublishers.sent(messagesPerRun)
        print(
            "ingest: \(sent) OpenMQTTGateway messages per run, streams \(streams.map(\.rawValue).joined(separator: ", ")) "
                + "(unknown: Apple nearby info from 1,000 addresses of nobody; known: proximity pairing of \(accessories) registered accessories), "
                + "from \(IngestPublishers.count) publishers; "
                + "aabridge run (pid \(bridge.pid)) vs mosquitto_sub on mosquitto 127.0.0.1:\(broker.port) (max_queued_messages 0, max_inflight_messages 0); "
                + "\(repetitions) repetitions, load average \(ProcessClock.loadAverage())")

        // Warm-up: every accessory sighted once (a first sighting publishes retained state),
        // the markers' first decision, and a reference run (pages mosquitto_sub in).
        let warmup = max(20_000, 4 * accessories)
        let bridgeWarmup = try await bridgeRun(bridge, publishers, broker: broker, count: warmup, qos: .atLeastOnce)
        guard bridgeWarmup.completed else {
            throw E2E.Failure("the bridge's warm-up run did not complete (no marker decisions); log:\n\(bridge.log)")
        }
        _ = try await referenceRun(publishers, broker: broker, count: warmup, qos: .atLeastOnce, subscriberQoS: 1)

        var lossy = 0
        var medians: [String: Median] = [:]
        for kind in streams {
            for qos in [MQTTQoS.atLeastOnce, .atMostOnce] {
                let q = qos == .atLeastOnce ? 1 : 0
                let run = "\(kind.rawValue)_qos\(q)"
                var samples: [Consumer: [Sample]] = [:]
                for repetition in 0..<repetitions {
                    let b = try await bridgeRun(bridge, publishers, kind, broker: broker, count: messagesPerRun, qos: qos)
                    let s0 = try await referenceRun(publishers, kind, broker: broker, count: messagesPerRun, qos: qos, subscriberQoS: 0)
                    let s1 = try await referenceRun(publishers, kind, broker: broker, count: messagesPerRun, qos: qos, subscriberQoS: 1)
                    samples[.bridge, default: []].append(b)
                    samples[.subscriberQoS0, default: []].append(s0)
                    samples[.subscriberQoS1, default: []].append(s1)
                    lossy += [b, s0, s1].filter { !$0.clean }.count
                    func describe(_ consumer: Consumer, _ sample: Sample) -> String {
                        "\(consumer.label) \(E2E.format(sample.rate, 0)) msg/s, CPU \(E2E.format(sample.cpuPerMessage, 2)) us/msg (user \(E2E.format(sample.userPerMessage, 2))) "
                            + "(broker \(E2E.format(sample.brokerMicrosecondsPerMessage, 2)) us/msg)\(sample.note)"
                    }
                    print(
                        "  \(kind.rawValue) stream, publishers QoS \(q), run \(repetition + 1): CPU ratio bridge/-q 0 "
                            + "\(E2E.format(b.cpuPerMessage / s0.cpuPerMessage, 2)), bridge/-q 1 \(E2E.format(b.cpuPerMessage / s1.cpuPerMessage, 2)); "
                            + "rate ratio bridge/-q 0 \(E2E.format(b.rate / s0.rate, 3)), bridge/-q 1 \(E2E.format(b.rate / s1.rate, 3)); "
                            + describe(.bridge, b) + "; " + describe(.subscriberQoS0, s0) + "; " + describe(.subscriberQoS1, s1)
                            + "; publishers enqueued in \(E2E.format(b.publishSeconds, 2))/\(E2E.format(s0.publishSeconds, 2))/\(E2E.format(s1.publishSeconds, 2)) s; "
                            + "load \(ProcessClock.loadAverage())")
                }
                medians[run] = report(run: run, kind: kind, qos: q, samples)
            }
        }
        let memory = ProcessClock.memory(bridge.pid)
        print("ingest.bridge_vmrss_kib \(memory.rss) KiB")
        print("ingest.bridge_vmhwm_kib \(memory.peak) KiB")
        print("ingest.lossy_runs \(lossy) runs")
        print(
            "ingest: bridge VmRSS \(E2E.format(Double(memory.rss) / 1024)) MiB, VmHWM \(E2E.format(Double(memory.peak) / 1024)) MiB after the runs; "
                + "\(lossy) lossy or incomplete runs\(lossy > 0 ? " (FLAGGED: their figures are left out of the medians)" : ""); load average \(ProcessClock.loadAverage())"
        )
        return medians
    }

    /// The `name value unit` lines (`ingest.<run>_…`) and the summary of one stream at one
    /// publisher QoS: medians of the clean runs, ranges in the summary; ratios are taken per
    /// repetition (runs side by side), against `-q 0` first.
    /// - Returns: the bridge's medians.
    @discardableResult
    static func report(run: String, kind: StreamKind, qos: Int, _ samples: [Consumer: [Sample]]) -> Median {
        func median(_ values: [Double]) -> Double { values.isEmpty ? .nan : values.sorted()[values.count / 2] }
        func range(_ values: [Double], _ digits: Int) -> String {
            guard let low = values.min(), let high = values.max() else { return "n/a" }
            return low == high ? E2E.format(low, digits) : "\(E2E.format(low, digits))–\(E2E.format(high, digits))"
        }
        let bridge = samples[.bridge] ?? []
        var summary: [String] = []
        for consumer in Consumer.allCases {
            let clean = (samples[consumer] ?? []).filter(\.clean)
            print("ingest.\(run)_\(consumer.key)_msgs_per_s \(E2E.format(median(clean.map(\.rate)), 0)) msg/s")
            print("ingest.\(run)_\(consumer.key)_cpu_us_per_msg \(E2E.format(median(clean.map(\.cpuPerMessage)), 2)) us")
            print("ingest.\(run)_\(consumer.key)_user_cpu_us_per_msg \(E2E.format(median(clean.map(\.userPerMessage)), 2)) us")
        }
        for consumer in [Consumer.subscriberQoS0, .subscriberQoS1] {
            let pairs = zip(bridge, samples[consumer] ?? []).filter { $0.clean && $1.clean }
            let rates = pairs.map { $0.rate / $1.rate }
            let cpu = pairs.map { $0.cpuPerMessage / $1.cpuPerMessage }
            print("ingest.\(run)_ratio_bridge_\(consumer.key) \(E2E.format(median(rates), 3)) ratio")
            print("ingest.\(run)_cpu_ratio_bridge_\(consumer.key) \(E2E.format(median(cpu), 2)) ratio")
            let reference = (samples[consumer] ?? []).filter(\.clean)
            summary.append(
                "vs \(consumer.label) \(range(reference.map(\.rate), 0)) msg/s, \(range(reference.map(\.cpuPerMessage), 2)) us/msg: "
                    + "CPU ratio \(range(cpu, 2))x, throughput ratio \(range(rates, 3))")
        }
        let cleanBridge = bridge.filter(\.clean)
        let result = Median(rate: median(cleanBridge.map(\.rate)), cpu: median(cleanBridge.map(\.cpuPerMessage)))
        print(
            "ingest (\(kind.rawValue) stream, publishers at QoS \(qos), \(cleanBridge.count)/\(bridge.count) clean bridge runs): bridge \(range(cleanBridge.map(\.rate), 0)) msg/s, "
                + "\(range(cleanBridge.map(\.cpuPerMessage), 2)) us/msg; " + summary.joined(separator: "; "))
        return result
    }

    /// One bridge run: `count` messages, then each publisher's marker; done when the markers'
    /// decisions are in. Loss: what the bridge's client never received (from `messages_in`)
    /// plus what it dropped (`telemetry_rejected`: backlog, congestion, client bound), both
    /// from health asked before and after the run, when nothing is waiting.
    static func bridgeRun(
        _ bridge: IngestBridge, _ publishers: IngestPublishers, _ kind: StreamKind = .known, broker: IngestBroker, count: Int,
        qos: MQTTQoS
    ) async throws -> Sample {
        let sent = IngestPublishers.sent(count)
        bridge.resetMarkers()
        let before = try await bridge.health()
        let mark = bridge.mark
        let logOffset = bridge.logSize
        guard let cpu0 = ProcessClock.cpu(bridge.pid), let broker0 = ProcessClock.cpuMicroseconds(broker.pid) else {
            throw E2E.Failure("the bridge or the broker is gone; log:\n\(bridge.log)")
        }
        let start = E2E.nanoseconds()
        await publishers.publish(.bridge, kind, count: count, qos: qos, last: bridge.marker)
        let published = E2E.nanoseconds()
        let completion = await bridge.waitForMarkers(after: mark, timeout: max(60, Double(count) / 2_000))
        var end: UInt64 = E2E.nanoseconds()
        var completed = false
        switch completion {
        case .markers(let at):
            end = at
            completed = true
        case .quiet(let since): end = since
        case .timedOut: break
        }
        let cpu1 = ProcessClock.cpu(bridge.pid) ?? cpu0
        let broker1 = ProcessClock.cpuMicroseconds(broker.pid) ?? broker0
        // Backlog drops are counted on the bridge's next wake (within 50 ms).
        try await Task.sleep(for: .milliseconds(150))
        let after = try await bridge.health()
        func delta(_ key: String) -> Int { (after[key]?.intValue ?? 0) - (before[key]?.intValue ?? 0) }
        // messages_in counts on arrival: the stream, the markers and the second health request.
        let received = delta("messages_in") - bridge.markers - 1
        let lost = max(0, sent - received) + delta("telemetry_rejected")
        if lost > 0 || !completed {
            // Why, in the bridge's words (its flood warnings), for whoever reads the figures.
            for line in bridge.logLines(since: logOffset, containing: "flood").prefix(3) { print("    bridge log: \(line)") }
        }
        return Sample(
            messages: sent, seconds: Double(end - start) / 1e9, cpu: cpu1 - cpu0, lost: lost,
            completed: completed, brokerMicrosecondsPerMessage: (broker1 - broker0) / Double(sent),
            publishSeconds: Double(published - start) / 1e9)
    }

    /// One mosquitto_sub run: subscribed first, then `count` messages on the reference tree;
    /// done at its exit.
    static func referenceRun(
        _ publishers: IngestPublishers, _ kind: StreamKind = .known, broker: IngestBroker, count: Int, qos: MQTTQoS,
        subscriberQoS: Int
    ) async throws -> Sample {
        let sent = IngestPublishers.sent(count)
        let subscriber = try ReferenceSubscriber(broker: broker, qos: subscriberQoS, count: sent)
        let broker0 = ProcessClock.cpuMicroseconds(broker.pid) ?? 0
        let start = E2E.nanoseconds()
        await publishers.publish(.reference, kind, count: count, qos: qos)
        let published = E2E.nanoseconds()
        let outcome = await subscriber.finish(timeout: max(60, Double(count) / 2_000))
        let broker1 = ProcessClock.cpuMicroseconds(broker.pid) ?? broker0
        return Sample(
            messages: sent, seconds: Double(outcome.end - start) / 1e9, cpu: outcome.cpu,
            lost: outcome.completed ? 0 : nil, completed: outcome.completed,
            brokerMicrosecondsPerMessage: (broker1 - broker0) / Double(sent),
            publishSeconds: Double(published - start) / 1e9)
    }
}
