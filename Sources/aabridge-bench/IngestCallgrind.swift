import Foundation

/// Instructions per message under callgrind (filled in below).
enum IngestCallgrind {
    static func run(executable: String, accessories: Int, messages: Int) async throws {
        print("ingest --callgrind: not yet")
    }
}
