import Foundation
import JSON
import MQTT
import Synchronization

/// End-to-end throughput: a real mosquitto on loopback, P OpenMQTTGateway publishers
/// (`home/<gw>/BTtoMQTT/<MAC>`, raw `id`/`rssi`/`manufacturerdata`) for 1,000 and 10,000
/// registered accessories, the bridge (in this process, as `aabridge run` runs it) consuming.
///
/// Completion: after its last telemetry message each publisher sends `bridge/request/health`;
/// the bridge handles one ordered stream, so when the P responses are in, everything before
/// them was processed. Loss = messages the bridge's client never received (broker drops) plus
/// messages the bridge's backlog dropped (`telemetry_rejected`, counted before health answers).
///
/// The reference: a plain subscriber (the same MQTTClient, counting and nothing else) fed the
/// same stream by the same publishers on a twin topic tree (`prob/<gw>/BTtoMQTT/<MAC>`), in
/// the same process, interleaved with the bridge runs so both see the same machine load.
enum E2EThroughputBenchmark {
    static let publishers = 4
    /// AirPods Pro, the right bud broadcasting at 50 %: a whole proximity-pairing message, since
    /// one shorter than its length byte is refused (docs/telemetry.md, "Refused frames").
    static let frame = "4c000719010e2000f58f0100" + String(repeating: "00", count: 17)
    static let messagesPerRun = Int(ProcessInfo.processInfo.environment["AABRIDGE_BENCH_MESSAGES"] ?? "") ?? 100_000
    static let repetitions = Int(ProcessInfo.processInfo.environment["AABRIDGE_BENCH_REPEAT"] ?? "") ?? 3
    static let accessoryCounts: [Int] = (ProcessInfo.processInfo.environment["AABRIDGE_BENCH_ACCESSORIES"] ?? "1000,10000")
        .split(separator: ",").compactMap { Int($0) }

    struct RunResult {
        var messages: Int
        var seconds: Double
        var publishSeconds: Double
        var lost: Int
        var completed: Bool
        /// CPU time (user + system) this whole process spent during the run, per message:
        /// publishers, probe and consumer alike, so bridge minus plain is the bridge's own
        /// cost, much less noisy on a shared machine than the rates.
        var cpuMicrosecondsPerMessage: Double = 0
        var rate: Double { Double(messages) / seconds }
    }

    /// Pre-built messages: topic per publisher (gateway) and accessory, payload per accessory and RSSI.
    final class Stream: Sendable {
        let accessories: Int
        let topics: [[String]] // [publisher][accessory]
        let payloads: [[[UInt8]]] // [accessory][rssi variant]

        init(prefix: String, accessories: Int, publishers: Int, kind: StreamKind = .known) {
            self.accessories = accessories
            var macs: [String] = []
            var ids: [String] = []
            for n in 0..<accessories {
                let raw = kind.address(n)
                let bytes = (0..<6).map { String(format: "%02X", (raw >> (8 * (5 - UInt64($0)))) & 0xFF) }
                macs.append(bytes.joined())
                ids.append(bytes.joined(separator: ":"))
            }
            topics = (0..<publishers).map { p in macs.map { "\(prefix)/gw\(p)/BTtoMQTT/\($0)" } }
            payloads = ids.map { id in (0..<8).map { kind.payload(id: id, variant: $0) } }
        }

        /// Message `i` of publisher `p`: accessories in turn, each publisher offset.
        func message(publisher p: Int, index i: Int) -> (String, [UInt8]) {
            let accessory = (i &* 7919 &+ p &* 131) % accessories
            return (topics[p][accessory], payloads[accessory][(i / accessories) & 7])
        }
    }

    static func run() async throws {
        for accessories in accessoryCounts {
            try await run(accessories: accessories)
        }
    }

    static func run(accessories: Int) async throws {
        let broker = try E2E.Broker(noDelay: false)
        defer { broker.stop() }
        let workspace = try E2E.Workspace(accessories: accessories, tag: "e2e")
        let bridge = try E2E.InProcessBridge(workspace: workspace, port: broker.port)

        // Probe: the bridge's state and responses.
        let probe = try await E2E.client(broker, "bench-probe")
        let responses = E2E.Recorder(probe)
        try await probe.subscribe("aabridge/bridge/state", qos: .atLeastOnce)
        try await probe.subscribe("aabridge/bridge/response/health", qos: .atLeastOnce)
        bridge.start()
        guard
            await responses.wait(
                timeout: 30,
                until: { $0.contains { $0.topic == "aabridge/bridge/state" && E2E.object($0.payload)?["state"]?.stringValue == "online" } })
        else {
            throw E2E.Failure("the bridge did not come online")
        }

        // The plain subscriber: same library, same subscription QoS, counts and nothing else.
        let plain = try await E2E.client(broker, "bench-plain")
        let counter = E2E.Counter(plain)
        try await plain.subscribe("prob/+/BTtoMQTT/#", qos: .atLeastOnce)
        try await plain.subscribe("prob/bridge/request/#", qos: .atLeastOnce)

        var publisherClients: [MQTTClient] = []
        for p in 0..<publishers { publisherClients.append(try await E2E.client(broker, "bench-gw\(p)")) }
        let clients = publisherClients
        defer {
            Task {
                for client in clients { await client.disconnect() }; await plain.disconnect(); await probe.disconnect()
            }
        }

        let bridgeStream = Stream(prefix: "home", accessories: accessories, publishers: publishers)
        let plainStream = Stream(prefix: "prob", accessories: accessories, publishers: publishers)

        let responseTopic = "aabridge/bridge/response/health"
        var transaction = 0
        /// Asks the bridge for its health and returns it (after everything published before).
        func health() async throws -> JSONValue {
            transaction += 1
            return try await responses.health(through: probe, transaction: transaction, timeout: 60)
        }

        /// Publishes `count` messages split over the publishers (each then sends one health
        /// request) and returns the seconds the publishers took.
        func publish(_ stream: Stream, requestTopic: String, count: Int, qos: MQTTQoS, rate: Double?, tag: Int) async -> Double {
            let share = count / publishers
            let perPublisherRate = rate.map { $0 / Double(publishers) }
            let start = E2E.nanoseconds()
            await withTaskGroup(of: Void.self) { group in
                for p in 0..<publishers {
                    let client = clients[p]
                    group.addTask {
                        await E2E.onThread {
                            _ = E2E.paced(count: share, rate: perPublisherRate) { i in
                                let (topic, payload) = stream.message(publisher: p, index: i)
                                client.enqueue(topic: topic, payload: payload, qos: qos)
                            }
                            client.enqueue(
                                topic: requestTopic, payload: Array(#"{"transaction":\#(tag * 100 + p)}"#.utf8), qos: .atLeastOnce)
                        }
                    }
                }
            }
            return Double(E2E.nanoseconds() - start) / 1e9
        }

        func measureBridge(count: Int, qos: MQTTQoS, rate: Double?) async throws -> RunResult {
            let before = try await health()
            let cpu0 = E2E.processCPUSeconds()
            let messagesIn0 = before["messages_in"]?.intValue ?? 0
            let rejected0 = before["telemetry_rejected"]?.intValue ?? 0
            let start = E2E.nanoseconds()
            let responsesBefore = responses.snapshot().filter { $0.topic == responseTopic }.count
            transaction += 1
            let tag = transaction
            transaction += 1
            let publishSeconds = await publish(
                bridgeStream, requestTopic: "aabridge/bridge/request/health", count: count, qos: qos, rate: rate, tag: tag)
            let timeout = max(20, Double(count) / 5_000)
            var end = E2E.nanoseconds()
            let completed = await responses.wait(timeout: timeout) { arrivals in
                let list = arrivals.filter { $0.topic == responseTopic }
                guard list.count >= responsesBefore + publishers else { return false }
                end = list[(responsesBefore + publishers - 1)].at
                return true
            }
            if !completed { end = E2E.nanoseconds() }
            let cpu = E2E.processCPUSeconds() - cpu0
            // Lets the last messages in the client's stream reach the backlog before health counts its drops.
            try await Task.sleep(for: .milliseconds(150))
            let after = try await health()
            let received = (after["messages_in"]?.intValue ?? 0) - messagesIn0 - 1 // minus the final health request
            let rejected = (after["telemetry_rejected"]?.intValue ?? 0) - rejected0
            let sent = (count / publishers) * publishers
            let lost = max(0, sent + publishers - received) + rejected
            return RunResult(
                messages: sent, seconds: Double(end - start) / 1e9, publishSeconds: publishSeconds, lost: lost, completed: completed,
                cpuMicrosecondsPerMessage: cpu * 1e6 / Double(sent))
        }

        func measurePlain(count: Int, qos: MQTTQoS, rate: Double?) async throws -> RunResult {
            let base = counter.count
            let sent = (count / publishers) * publishers
            let expected = sent + publishers
            let cpu0 = E2E.processCPUSeconds()
            let start = E2E.nanoseconds()
            transaction += 2
            let publishSeconds = await publish(
                plainStream, requestTopic: "prob/bridge/request/health", count: count, qos: qos, rate: rate, tag: transaction)
            // Done when everything arrived, or when nothing more arrived for two seconds.
            var lastCount = counter.count
            var lastChange = E2E.nanoseconds()
            while counter.count - base < expected {
                try await Task.sleep(for: .milliseconds(2))
                let now = counter.count
                if now != lastCount {
                    lastCount = now
                    lastChange = E2E.nanoseconds()
                } else if E2E.nanoseconds() - lastChange > 2_000_000_000 {
                    break
                }
            }
            let received = counter.count - base
            let cpu = E2E.processCPUSeconds() - cpu0
            return RunResult(
                messages: sent, seconds: Double(counter.lastArrival - start) / 1e9, publishSeconds: publishSeconds,
                lost: max(0, expected - received), completed: received >= expected,
                cpuMicrosecondsPerMessage: cpu * 1e6 / Double(sent))
        }

        print(
            "e2e-throughput: \(accessories) registered accessories, \(publishers) OpenMQTTGateway publishers, \(messagesPerRun) messages per run"
        )

        // Warm-up: every accessory sighted once (first sightings make them available, which
        // publishes retained state), then a short run of each kind.
        _ = try await measureBridge(count: max(accessories, 20_000), qos: .atLeastOnce, rate: nil)
        _ = try await measurePlain(count: max(accessories, 20_000), qos: .atLeastOnce, rate: nil)

        let label = accessories >= 1000 ? "\(accessories / 1000)k" : "\(accessories)"
        // QoS 1, as fast as the publishers go; bridge and plain interleaved.
        var bridgeRates: [Double] = []
        var plainRates: [Double] = []
        var ratios: [Double] = []
        var cpuBridge: [Double] = []
        var cpuPlain: [Double] = []
        for repetition in 0..<repetitions {
            let b = try await measureBridge(count: messagesPerRun, qos: .atLeastOnce, rate: nil)
            let s = try await measurePlain(count: messagesPerRun, qos: .atLeastOnce, rate: nil)
            print(
                "  qos1 run \(repetition + 1): bridge \(E2E.format(b.rate, 0)) msg/s (lost \(b.lost)\(b.completed ? "" : ", INCOMPLETE"); publishers took \(E2E.format(b.publishSeconds, 2)) s), "
                    + "plain \(E2E.format(s.rate, 0)) msg/s (lost \(s.lost)); ratio \(E2E.format(b.rate / s.rate, 3)); "
                    + "process CPU per message: bridge run \(E2E.format(b.cpuMicrosecondsPerMessage, 2)) us, plain run \(E2E.format(s.cpuMicrosecondsPerMessage, 2)) us"
            )
            cpuBridge.append(b.cpuMicrosecondsPerMessage)
            cpuPlain.append(s.cpuMicrosecondsPerMessage)
            if b.lost == 0 && b.completed { bridgeRates.append(b.rate) }
            if s.lost == 0 && s.completed { plainRates.append(s.rate) }
            if b.lost == 0 && s.lost == 0 && b.completed && s.completed { ratios.append(b.rate / s.rate) }
        }
        bridgeRates.sort(); plainRates.sort(); ratios.sort()
        func median(_ values: [Double]) -> Double { values.isEmpty ? .nan : values[values.count / 2] }
        print("e2e.qos1_bridge_msgs_per_s_\(label) \(E2E.format(median(bridgeRates), 0)) msg/s")
        print("e2e.qos1_plain_msgs_per_s_\(label) \(E2E.format(median(plainRates), 0)) msg/s")
        print("e2e.qos1_ratio_bridge_plain_\(label) \(E2E.format(median(ratios), 3)) ratio")
        cpuBridge.sort(); cpuPlain.sort()
        print("e2e.qos1_cpu_us_per_msg_bridge_run_\(label) \(E2E.format(median(cpuBridge), 2)) us")
        print("e2e.qos1_cpu_us_per_msg_plain_run_\(label) \(E2E.format(median(cpuPlain), 2)) us")

        // QoS 0 flat out: the loss when the publishers outrun the consumer.
        let b0 = try await measureBridge(count: messagesPerRun, qos: .atMostOnce, rate: nil)
        let s0 = try await measurePlain(count: messagesPerRun, qos: .atMostOnce, rate: nil)
        print(
            "  qos0 flat out: bridge \(E2E.format(b0.rate, 0)) msg/s lost \(b0.lost); plain \(E2E.format(s0.rate, 0)) msg/s lost \(s0.lost); publishers took \(E2E.format(b0.publishSeconds, 2)) s"
        )

        // QoS 0 paced ladder: the highest offered rate the consumer keeps up with for two
        // seconds with zero loss (finishing within 10% + 100 ms of the publishers, so buffering
        // in the broker or the backlog does not count as keeping up).
        func ladder(_ measure: (Int, MQTTQoS, Double?) async throws -> RunResult) async throws -> (Double, String) {
            var best = 0.0
            var note = "all steps clean"
            for rate in [5_000.0, 10_000, 20_000, 30_000, 40_000, 50_000, 60_000, 80_000, 100_000, 130_000, 160_000] {
                let count = Int(rate * 2)
                let result = try await measure(count, .atMostOnce, rate)
                let offered = Double(result.messages) / result.publishSeconds
                if result.lost > 0 || !result.completed {
                    note = "lost \(result.lost) at \(Int(rate)) msg/s"
                    break
                }
                if offered < rate * 0.9 {
                    note = "publishers reached only \(E2E.format(offered, 0)) of \(Int(rate)) msg/s"
                    break
                }
                if result.seconds > result.publishSeconds * 1.1 + 0.1 {
                    note =
                        "fell behind at \(Int(rate)) msg/s (done after \(E2E.format(result.seconds, 2)) s for \(E2E.format(result.publishSeconds, 2)) s of publishing)"
                    break
                }
                best = rate
            }
            return (best, note)
        }
        let (bridgeSustained, bridgeNote) = try await ladder(measureBridge)
        let (plainSustained, plainNote) = try await ladder(measurePlain)
        print("e2e.qos0_bridge_sustained_msgs_per_s_\(label) \(E2E.format(bridgeSustained, 0)) msg/s")
        print("e2e.qos0_plain_sustained_msgs_per_s_\(label) \(E2E.format(plainSustained, 0)) msg/s")
        print(
            """
            e2e-throughput (\(accessories) accessories): QoS 1 zero-loss bridge \(bridgeRates.map { E2E.format($0, 0) }.joined(separator: "/")) msg/s \
            vs plain subscriber \(plainRates.map { E2E.format($0, 0) }.joined(separator: "/")) msg/s, \
            ratio \(ratios.map { E2E.format($0, 3) }.joined(separator: "/")); \
            QoS 0 highest clean paced rate: bridge \(E2E.format(bridgeSustained, 0)) (\(bridgeNote)), \
            plain \(E2E.format(plainSustained, 0)) (\(plainNote))
            """)

        await bridge.stop()
    }
}
