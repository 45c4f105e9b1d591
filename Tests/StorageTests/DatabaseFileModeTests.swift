import AccessoryKit
import Foundation
import Testing

@testable import Storage

/// The SQLite files hold IRKs and encryption keys in clear (`identities`): readable by their
/// owner only, whatever the umask (issue 49: under umask 022 they were 0644).
@Suite("SQLite files are the owner's only", .serialized)
struct DatabaseFileModeTests {
    typealias F = StoreFixtures

    /// Runs `body` under `mask`. The umask is the process's: the suite is serialised, and the
    /// other suites' files do not depend on it.
    static func withUmask<T>(_ mask: mode_t, _ body: () throws -> T) rethrows -> T {
        let previous = umask(mask)
        defer { umask(previous) }
        return try body()
    }

    static func mode(_ path: String) -> mode_t? {
        var status = stat()
        return stat(path, &status) == 0 ? status.st_mode & 0o777 : nil
    }

    @Test("under umask 022 a new database, its -wal and its -shm are created 0600")
    func newDatabase() throws {
        let directory = TemporaryDirectory()
        let path = directory.database()
        try Self.withUmask(0o022) {
            let store = try AccessoryStore(path: path)
            try store.apply(F.everything)
            #expect(Self.mode(path) == 0o600)
            #expect(Self.mode(path + "-wal") == 0o600, "the WAL holds the keys until a checkpoint")
            #expect(Self.mode(path + "-shm") == 0o600)
            store.close()
        }
    }

    @Test("a database an older release left 0644 (and a -wal left by a crash) is made 0600 when opened")
    func existingDatabaseTightened() throws {
        let directory = TemporaryDirectory()
        let path = directory.database()
        try Self.withUmask(0o022) {
            let store = try AccessoryStore(path: path)
            try store.apply(F.everything)
            store.close()
            #expect(chmod(path, 0o644) == 0)
            #expect(FileManager.default.createFile(atPath: path + "-wal", contents: nil))
            #expect(chmod(path + "-wal", 0o644) == 0)
            let reopened = try AccessoryStore(path: path)
            #expect(try reopened.load() == F.everythingState)
            #expect(Self.mode(path) == 0o600)
            #expect(Self.mode(path + "-wal") == 0o600)
            reopened.close()
        }
    }
}
