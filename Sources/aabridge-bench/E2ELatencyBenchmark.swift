import Foundation
import JSON
import MQTT
import Synchronization

/// End-to-end latency of a route change: native telemetry that changes where a source's audio
/// goes (`{"worn":true,"hardware":"inEarBud"}` / `{"worn":false}` alternately, debounce 0)
/// until `aabridge/accessory/<ID>/decision` arrives at a subscriber, with a paced
/// OpenMQTTGateway background load of 100 and 5,000 msg/s on 1,000 other registered accessories.
///
/// The reference: the same two broker hops through a plain echo client (same library: it
/// re-enqueues what it receives, nothing else), measured interleaved with the bridge samples,
/// so "added" latency is bridge minus echo at each percentile.
enum E2ELatencyBenchmark {
    static let samples = Int(ProcessInfo.processInfo.environment["AABRIDGE_BENCH_SAMPLES"] ?? "") ?? 3_000
    static let loads: [Double] = [100, 5_000]

    static func run() async throws {
        for noDelay in [false, true] { try await run(noDelay: noDelay) }
    }

    static func run(noDelay: Bool) async throws {
        let broker = try E2E.Broker(noDelay: noDelay)
        defer { broker.stop() }
        let background = 1_000
        let workspace = try E2E.Workspace(accessories: background + 1, tag: "latency")
        let target = E2E.accessoryID(background) // registered like the others, no background traffic
        let targetTopicID = String(format: "%012llX", target.rawValue)
        let bridge = try E2E.InProcessBridge(workspace: workspace, port: broker.port, debounceMilliseconds: 0)

        let probe = try await E2E.client(broker, "bench-probe")
        let arrivals = E2E.Recorder(probe)
        try await probe.subscribe("aabridge/bridge/state", qos: .atLeastOnce)
        try await probe.subscribe("aabridge/accessory/\(targetTopicID)/decision", qos: .atLeastOnce)
        try await probe.subscribe("bench/pong", qos: .atLeastOnce)
        bridge.start()
        guard
            await arrivals.wait(
                timeout: 30,
                until: { $0.contains { $0.topic == "aabridge/bridge/state" && E2E.object($0.payload)?["state"]?.stringValue == "online" } })
        else {
            throw E2E.Failure("the bridge did not come online")
        }

        // The echo: receives bench/ping, enqueues it to bench/pong (QoS 1, as the bridge's decisions).
        let echo = try await E2E.client(broker, "bench-echo")
        let echoStream = echo.messages
        let echoTask = Task.detached {
            for await message in echoStream { echo.enqueue(topic: "bench/pong", payload: message.payload, qos: .atLeastOnce) }
        }
        try await echo.subscribe("bench/ping", qos: .atLeastOnce)

        let sender = try await E2E.client(broker, "bench-sender")
        let loader = try await E2E.client(broker, "bench-load")
        let stream = E2EThroughputBenchmark.Stream(prefix: "home", accessories: background, publishers: 1)
        let telemetry = "aabridge/telemetry/bench/\(targetTopicID)"
        sender.enqueue(topic: telemetry, payload: Array(#"{"sources":["11:22:33:44:55:66"]}"#.utf8), qos: .atLeastOnce)
        try await Task.sleep(for: .milliseconds(200))

        print(
            "e2e-latency: route change -> decision, debounce 0, \(noDelay ? samples : samples / 3) samples per load, \(background) background accessories, broker set_tcp_nodelay \(noDelay)"
        )
        for load in loads {
            // Background load on its own thread until the samples are done.
            let running = Atomic<Bool>(true)
            let loadThread = Task.detached {
                await E2E.onThread {
                    let start = E2E.nanoseconds()
                    var sent = 0
                    while running.load(ordering: .relaxed) {
                        let due = Int(Double(E2E.nanoseconds() - start) / 1e9 * load)
                        while sent < due {
                            let (topic, payload) = stream.message(publisher: 0, index: sent)
                            loader.enqueue(topic: topic, payload: payload, qos: .atMostOnce)
                            sent += 1
                        }
                        usleep(200)
                    }
                }
            }
            try await Task.sleep(for: .milliseconds(500))

            // The samples run on their own thread: waiting must not hold the cooperative
            // pool the in-process bridge runs on.
            let (bridgeSamples, echoSamples, missed) = await E2E.onThread {
                // With Nagle on (mosquitto's default) every sample costs ~40 ms: fewer of them.
                sample(count: noDelay ? samples : samples / 3, sender: sender, arrivals: arrivals, telemetry: telemetry)
            }
            let bridgeLatencies = bridgeSamples.sorted()
            let echoLatencies = echoSamples.sorted()
            running.store(false, ordering: .relaxed)
            await loadThread.value

            let label = "\(Int(load))\(noDelay ? "_nodelay" : "")"
            var line: [String] = []
            for (name, p) in [("p50", 50.0), ("p99", 99.0), ("p99_9", 99.9)] {
                let b = E2E.percentile(bridgeLatencies, p)
                let e = E2E.percentile(echoLatencies, p)
                print("e2e.latency_\(name)_us_at_\(label) \(E2E.format(b)) us")
                print("e2e.echo_latency_\(name)_us_at_\(label) \(E2E.format(e)) us")
                line.append("\(name) \(E2E.format(b)) us (echo \(E2E.format(e)), added \(E2E.format(b - e)))")
            }
            print("e2e.latency_missed_at_\(label) \(missed) samples")
            print(
                "e2e-latency at \(label) msg/s background: " + line.joined(separator: ", ")
                    + "; max \(E2E.format(bridgeLatencies.last ?? .nan)) us; \(bridgeLatencies.count) samples, \(missed) without a decision within 1 s"
            )
        }

        echoTask.cancel()
        await bridge.stop()
        for client in [probe, echo, sender, loader] { await client.disconnect() }
    }

    /// `count` bridge samples (one worn toggle -> one decision) interleaved with echo samples
    /// (ping -> pong through the echo client), after 100 discarded warm-up rounds.
    static func sample(count: Int, sender: MQTTClient, arrivals: E2E.Recorder, telemetry: String) -> ([Double], [Double], Int) {
        var bridgeLatencies: [Double] = []
        var echoLatencies: [Double] = []
        var missed = 0
        var worn = false
        for index in -100..<count {
            worn.toggle()
            let payload = Array((worn ? #"{"worn":true,"hardware":"inEarBud"}"# : #"{"worn":false}"#).utf8)
            let before = arrivals.count
            let sentAt = E2E.nanoseconds()
            sender.enqueue(topic: telemetry, payload: payload, qos: .atMostOnce)
            var arrived: UInt64?
            _ = arrivals.waitBlocking(timeout: 1) { list in
                for arrival in list[before...] where arrival.topic.hasSuffix("/decision") {
                    arrived = arrival.at
                    return true
                }
                return false
            }
            if let arrived {
                if index >= 0 { bridgeLatencies.append(Double(arrived - sentAt) / 1000) }
            } else if index >= 0 {
                missed += 1
            }
            let beforeEcho = arrivals.count
            let pingAt = E2E.nanoseconds()
            sender.enqueue(topic: "bench/ping", payload: payload, qos: .atMostOnce)
            var pong: UInt64?
            _ = arrivals.waitBlocking(timeout: 1) { list in
                for arrival in list[beforeEcho...] where arrival.topic == "bench/pong" {
                    pong = arrival.at
                    return true
                }
                return false
            }
            if let pong, index >= 0 { echoLatencies.append(Double(pong - pingAt) / 1000) }
            usleep(300)
        }
        return (bridgeLatencies, echoLatencies, missed)
    }
}
