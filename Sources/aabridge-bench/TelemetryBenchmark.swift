enum TelemetryBenchmark {
    static func run() async throws {
        print("telemetry: not implemented yet")
    }
}
