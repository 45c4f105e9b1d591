// aabridge-bench: named benchmarks, release build. Each prints `name value unit` lines and a summary.
import Foundation

let benchmarks: [(name: String, summary: String, run: () async throws -> Void)] = [
    ("core", "engine throughput with 10,000 registered accessories", CoreBenchmark.run),
    ("telemetry", "parse throughput per gateway format", TelemetryBenchmark.run),
    ("storage", "registrations committed/s and load time for 10,000 accessories", StorageBenchmark.run),
    ("storage-postgres", "the same on a local PostgreSQL (LocalPostgres, synchronous_commit on)", StorageBenchmark.runPostgres),
    (
        "e2e-throughput", "real mosquitto, OpenMQTTGateway publishers -> bridge vs a plain subscriber (QoS 1 and 0)",
        E2EThroughputBenchmark.run
    ),
    (
        "ingest-path", "the runtime's own cost per message without the network: CPU and (--callgrind) instructions",
        IngestPathBenchmark.run
    ),
    ("e2e-latency", "route-changing telemetry -> decision, p50/p99/p99.9 at 100 and 5,000 msg/s background", E2ELatencyBenchmark.run),
    (
        "ingest",
        "aabridge run vs mosquitto_sub (C), same broker and stream: throughput and CPU per message ratios (--callgrind: instructions)",
        IngestBenchmark.run
    ),
    ("memory", "RSS of aabridge run with 0/1k/10k/100k accessories; startup time at 10k", MemoryBenchmark.run),
    (
        "memory-breakdown", "heap bytes per accessory of each structure the runtime keeps (10k/100k, in process)",
        MemoryBreakdownBenchmark.run
    ),
    (
        "identity", "IRK resolution per sighting (10/100/1,000 keys; --callgrind: instructions) and aabridge RSS under a 1 M address flood",
        IdentityBenchmark.run
    ),
]

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.isEmpty || arguments.contains("--help") || arguments.contains("-h") {
    print("usage: aabridge-bench <name>... | all\n")
    for benchmark in benchmarks { print("  \(benchmark.name.padding(toLength: 16, withPad: " ", startingAt: 0)) \(benchmark.summary)") }
    exit(arguments.isEmpty ? 64 : 0)
}
// Valgrind (3.19) dies when the concurrency runtime starts its pool thread, so the loop measured
// under callgrind runs here, on the main thread, before anything is awaited.
if arguments.first == "identity", arguments.contains("--callgrind-child") {
    do {
        try IdentityBenchmark.callgrindChild(arguments)
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("aabridge-bench: \(error)\n".utf8))
        exit(64)
    }
}
// Options (`--name`) belong to the benchmarks, which read them from CommandLine.arguments.
let names = arguments.prefix { !$0.hasPrefix("--") }
let selected = names.contains("all") ? benchmarks.map(\.name) : Array(names)
for name in selected {
    guard let benchmark = benchmarks.first(where: { $0.name == name }) else {
        FileHandle.standardError.write(Data("aabridge-bench: unknown benchmark '\(name)'\n".utf8))
        exit(64)
    }
    try await benchmark.run()
}
