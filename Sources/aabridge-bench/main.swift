// aabridge-bench: named benchmarks, release build. Each prints `name value unit` lines and a summary.
import Foundation

let benchmarks: [(name: String, summary: String, run: () async throws -> Void)] = [
    ("core", "engine throughput with 10,000 registered accessories", CoreBenchmark.run),
    ("telemetry", "parse throughput per gateway format", TelemetryBenchmark.run),
    ("storage", "registrations committed/s and load time for 10,000 accessories", StorageBenchmark.run),
    (
        "e2e-throughput", "real mosquitto, OpenMQTTGateway publishers -> bridge vs a plain subscriber (QoS 1 and 0)",
        E2EThroughputBenchmark.run
    ),
    ("e2e-latency", "route-changing telemetry -> decision, p50/p99/p99.9 at 100 and 5,000 msg/s background", E2ELatencyBenchmark.run),
    ("memory", "RSS of aabridge run with 0/1k/10k/100k accessories; startup time at 10k", MemoryBenchmark.run),
]

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.isEmpty || arguments.contains("--help") || arguments.contains("-h") {
    print("usage: aabridge-bench <name>... | all\n")
    for benchmark in benchmarks { print("  \(benchmark.name.padding(toLength: 16, withPad: " ", startingAt: 0)) \(benchmark.summary)") }
    exit(arguments.isEmpty ? 64 : 0)
}
let selected = arguments.contains("all") ? benchmarks.map(\.name) : arguments
for name in selected {
    guard let benchmark = benchmarks.first(where: { $0.name == name }) else {
        FileHandle.standardError.write(Data("aabridge-bench: unknown benchmark '\(name)'\n".utf8))
        exit(64)
    }
    try await benchmark.run()
}
