import Foundation
import Testing

@testable import Storage

/// One bridge per database: `DatabaseLock` on `<storage.path>.lock`.
@Suite("Database lock")
struct DatabaseLockTests {
    @Test("a second lock on the same database is refused, naming the holder; released, it can be taken again")
    func secondLockRefused() throws {
        let directory = TemporaryDirectory()
        let path = directory.database()
        let first = try DatabaseLock(database: path)
        #expect(first.isHeld)
        #expect(first.path == path + ".lock")
        let error = #expect(throws: StorageError.self) { try DatabaseLock(database: path) }
        #expect(error?.code == .alreadyInUse)
        #expect(
            error?.message.contains("another aabridge (pid \(getpid())) is already running on \(path)") == true, "\(error?.message ?? "")")
        // Another database in the same directory is not affected.
        let other = try DatabaseLock(database: directory.database("other.sqlite3"))
        #expect(other.isHeld)
        first.release()
        first.release()
        let again = try DatabaseLock(database: path)
        #expect(again.isHeld)
    }

    @Test("a lock held through a read-only descriptor is honoured; an in-memory database needs none")
    func readOnlyAndMemory() throws {
        let directory = TemporaryDirectory()
        let path = directory.database()
        try DatabaseLock(database: path).release()
        // The lock file exists; a read-only descriptor locks it as well.
        let descriptor = open(path + ".lock", O_RDONLY)
        #expect(descriptor >= 0)
        #expect(flock(descriptor, LOCK_EX | LOCK_NB) == 0)
        let error = #expect(throws: StorageError.self) { try DatabaseLock(database: path) }
        #expect(error?.code == .alreadyInUse)
        close(descriptor)
        let memory = try DatabaseLock(database: ":memory:")
        #expect(!memory.isHeld)
        #expect(memory.warning == nil)
    }
}
