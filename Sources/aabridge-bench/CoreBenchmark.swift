enum CoreBenchmark {
    static func run() async throws {
        print("core: not implemented yet")
    }
}
