import Bridge
import Configuration
import Foundation
import LocalProcess
import MQTT
import Storage

/// `ingest-path`: the bridge's own cost per message, without the network, in instructions
/// (callgrind, exact to within a few per message from run to run) and in CPU time.
///
/// `aabridge run`'s runtime (`BridgeRuntime`, unchanged) on an in-process connection
/// (``IngestPathConnection``): the stream of `ingest` (OpenMQTTGateway advertisements over
/// 1,000 registered accessories, from 4 gateways; here each accessory at one RSSI) is appended to the connection's incoming
/// queue as the MQTT client's network thread would, in chunks of 900 messages, each followed
/// by a request the bridge does not know (`bridge/request/bench-chunk`), whose error response
/// says the chunk was handled: a chunk stays below the request lane's congestion mark, so the
/// request waits its turn behind it, and answering it costs next to nothing (a health request,
/// O(accessories), did not). The runtime's clock is frozen: under valgrind's slowdown a real
/// one would make every accessory's 30-second state refresh fall inside the window, work
/// driven by time rather than by messages. Under callgrind the count is (instructions of a
/// process handling N messages − one handling N/10) / 0.9 N, so starting, loading and
/// stopping cancel out. What `ingest` measures besides this is libmosquitto and the kernel:
/// reading the socket, the network thread's copy of each message.
enum IngestPathBenchmark {
    static let environment = ProcessInfo.processInfo.environment
    static let messages = Int(environment["AABRIDGE_BENCH_PATH_MESSAGES"] ?? "") ?? 20_000
    static let timedMessages = Int(environment["AABRIDGE_BENCH_PATH_TIMED_MESSAGES"] ?? "") ?? 200_000
    static let accessories = 1_000
    static let chunk = 900
    static let responseTopic = "aabridge/bridge/response/bench-chunk"

    static func run() async throws {
        let arguments = CommandLine.arguments
        func argument(_ name: String) -> String? {
            arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
        }
        if let text = argument("--child"), let count = Int(text) {
            let kind = try StreamKind.configured(argument("--stream")).first ?? .known
            _ = try await measure(count: count, kind: kind)
            return
        }
        for kind in try StreamKind.configured(environment["AABRIDGE_BENCH_STREAMS"]) {
            try await run(kind, callgrind: arguments.contains("--callgrind"))
        }
    }

    /// The timed run of one stream and, with `callgrind`, its instructions per message.
    static func run(_ kind: StreamKind, callgrind: Bool) async throws {
        let name = "ingest_path.\(kind.rawValue)"
        // Timed, without valgrind.
        let timed = try await measure(count: timedMessages, kind: kind)
        let cpuPerMessage = E2E.format(timed.cpuSeconds * 1e6 / Double(timedMessages), 2)
        print("\(name)_cpu_us_per_msg \(cpuPerMessage) us")
        print("\(name)_msgs_per_s \(Int(Double(timedMessages) / timed.seconds)) msg/s")
        guard callgrind else { return }

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aabridge-bench-path-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let keep = environment["AABRIDGE_BENCH_CALLGRIND_KEEP"] == "1"
        defer { if !keep { try? FileManager.default.removeItem(atPath: directory) } }
        if keep { print("ingest-path --callgrind: output files kept in \(directory)") }
        let shim = try SigsuspendShim.build(in: directory)
        let me = E2E.benchmarkExecutable().path
        var totals: [Int: Double] = [:]
        for count in [messages, messages / 10] {
            let out = "\(directory)/path.\(kind.rawValue).\(count)"
            let command =
                IngestCallgrind.callgrind(shim: shim, out: out) + [me, "ingest-path", "--child", "\(count)", "--stream", kind.rawValue]
            let child = try ChildProcess(path: command[0], arguments: Array(command.dropFirst()), output: "\(out).output")
            let status = child.wait()
            guard status == 0, let total = IngestCallgrind.totalInstructions(out) else {
                throw E2E.Failure("ingest-path under callgrind failed (exit status \(status)); see \(out).valgrind.log")
            }
            totals[count] = total
            print("  \(kind.rawValue) stream, \(count) messages: \(Int(total)) Ir")
        }
        let perMessage = ((totals[messages] ?? 0) - (totals[messages / 10] ?? 0)) / Double(messages - messages / 10)
        print("\(name)_callgrind_instructions_per_msg \(Int(perMessage.rounded())) Ir")
        print(
            "ingest-path, \(kind.rawValue) stream: \(Int(perMessage.rounded())) instructions and \(cpuPerMessage) us of CPU "
                + "per message through BridgeRuntime without the network (\(timedMessages) timed, \(messages) vs \(messages / 10) under callgrind)"
        )
    }

    /// Runs a runtime over `count` messages of stream `kind` (after the known stream's
    /// warm-up); the CPU and wall seconds of the stream alone.
    static func measure(count: Int, kind: StreamKind) async throws -> (cpuSeconds: Double, seconds: Double) {
        let workspace = try E2E.Workspace(accessories: accessories, tag: "path")
        let configuration: BridgeConfiguration
        switch ConfigurationLoader.load(yaml: workspace.yaml(port: 1883, relay: kind.isRelay)) {
        case .success(let loaded): configuration = loaded
        case .failure(let errors): throw E2E.Failure(errors.description)
        }
        let store = try AccessoryStore(path: workspace.databasePath)
        let connection = IngestPathConnection(responseTopic: responseTopic)
        let frozen = BridgeClock.now()
        let runtime = E2E.UncheckedBox(
            try BridgeRuntime(configuration: configuration, store: store, connection: connection, clock: { frozen }))
        let task = Task.detached { await runtime.value.run(signals: nil) }
        var transaction = 0
        /// Waits until everything appended so far has been handled.
        func handled() async throws {
            transaction += 1
            connection.incoming.append(
                MQTTMessage(
                    topic: "aabridge/bridge/request/bench-chunk", payload: Array(#"{"transaction":\#(transaction)}"#.utf8),
                    qos: .atLeastOnce))
            let deadline = Date().addingTimeInterval(600)
            while connection.responses < transaction {
                guard Date() < deadline else { throw E2E.Failure("no response within 600 s") }
                try await Task.sleep(for: .milliseconds(1))
            }
        }
        try await handled()
        let known = E2EThroughputBenchmark.Stream(prefix: "home", accessories: accessories, publishers: 4)
        let measured =
            kind == .known
            ? known : E2EThroughputBenchmark.Stream(prefix: kind.topicPrefix, accessories: accessories, publishers: 4, kind: kind)
        /// Appends messages `range` of `stream` in chunks, waiting for each to be handled.
        func feed(_ range: Range<Int>, of stream: E2EThroughputBenchmark.Stream) async throws {
            var sent = range.lowerBound
            while sent < range.upperBound {
                let end = min(range.upperBound, sent + chunk)
                for index in sent..<end {
                    // Each accessory always at the same RSSI: after the warm-up nothing changes (no
                    // room moves, so no state or accessory-list publication, whose number would follow
                    // the wall clock's wakes, not the messages): the steady cost of a sighting.
                    let (publisher, round) = (index % 4, index / 4)
                    let accessory = (round &* 7919 &+ publisher &* 131) % accessories
                    connection.incoming.append(
                        MQTTMessage(topic: stream.topics[publisher][accessory], payload: stream.payloads[accessory][0]))
                }
                sent = end
                try await handled()
            }
        }
        // Warm-up: every accessory sighted once by every gateway (a first sighting publishes its
        // state and availability), so a short stream and a long one differ only in repeats.
        let warmUp = 4 * accessories
        let lists = connection.accessoryLists
        try await feed(0..<warmUp, of: known)
        // They became available: the accessory list (O(accessories)) is republished at the next
        // wake, in real time; that must not fall inside one window and not the other.
        let deadline = Date().addingTimeInterval(600)
        while connection.accessoryLists == lists {
            guard Date() < deadline else { throw E2E.Failure("the accessory list was not republished after the warm-up") }
            try await Task.sleep(for: .milliseconds(5))
        }
        let cpu0 = E2E.processCPUSeconds()
        let start = E2E.nanoseconds()
        try await feed(warmUp..<(warmUp + count), of: measured)
        let seconds = Double(E2E.nanoseconds() - start) / 1e9
        let cpu = E2E.processCPUSeconds() - cpu0
        runtime.value.stop()
        _ = await task.value
        return (cpu, seconds)
    }
}
