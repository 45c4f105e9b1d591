import AccessoryKit
import Foundation
import Testing

@testable import Storage

@Suite("Full and read-only storage: a clear error, nothing half-stored, reads keep working")
struct StorageFailureTests {
    typealias F = StoreFixtures

    /// A write that needs many new pages (overflow pages for a long name).
    static func bigWrite(_ n: UInt64, size: Int = 512 * 1024) -> [StorageWrite] {
        var accessory = F.accessory(n)
        accessory.displayName = String(repeating: "x", count: size)
        return [.upsertAccessory(accessory), .upsertRegistration(accessory.id, F.registration(n)), .migrationComplete]
    }

    @Test("SQLITE_FULL (page limit reached) becomes .diskFull and the previous state stays")
    func diskFullByPageLimit() throws {
        let directory = TemporaryDirectory()
        let path = directory.database()
        let store = try AccessoryStore(path: path)
        try store.apply(F.everything.filter { $0 != .migrationComplete }, sources: [F.full.id: [F.address(0x100)]])
        let before = try store.load()
        // Cap the file at its current size: the next write that needs a new page fails.
        try store.withConnection { connection throws(StorageError) in
            let pages = try connection.integer("PRAGMA page_count")
            _ = try connection.integer("PRAGMA max_page_count = \(pages)")
        }
        let error = #expect(throws: StorageError.self) { try store.apply(Self.bigWrite(50)) }
        #expect(error?.code == .diskFull)
        #expect(error?.message.contains(path) == true)
        #expect(error?.message.contains("nothing was stored") == true)
        // Reads keep working and nothing of the batch is there.
        #expect(try store.load() == before)
        #expect(try store.loadSources() == [F.full.id: [F.address(0x100)]])
        // Once space is back, writes work again on the same connection.
        try store.withConnection { connection throws(StorageError) in
            _ = try connection.integer("PRAGMA max_page_count = 1073741823")
        }
        try store.apply(Self.bigWrite(50))
        #expect(try store.load().accessories.count == before.accessories.count + 1)
        #expect(store.integrityCheck() == [])
    }

    /// Whether a test may mount a file system (root in a container that allows it).
    static let canMount: Bool = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/bin/mount")

    static func run(_ tool: String, _ arguments: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    @Test(
        "a really full file system (a 512 KiB tmpfs) gives .diskFull and keeps the acknowledged state",
        .enabled(if: canMount, "needs root and mount"))
    func diskFullOnTinyFileSystem() throws {
        let directory = TemporaryDirectory()
        let mountPoint = directory.path + "/tiny"
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        guard Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=512k", "tmpfs", mountPoint]) else {
            // Mounting is not allowed here (an unprivileged container); the page-limit test covers the code path.
            return
        }
        defer { _ = Self.run("/bin/umount", [mountPoint]) }
        let path = mountPoint + "/data/aabridge.sqlite3"
        let store = try AccessoryStore(path: path)
        try store.apply(F.everything)
        var acknowledged = F.everythingState
        var failure: StorageError?
        // Fill the disk one acknowledged write at a time until it refuses.
        for n in UInt64(100)..<UInt64(200) {
            do throws(StorageError) {
                try store.apply(Self.bigWrite(n, size: 32 * 1024).dropLast())
                var accessory = F.accessory(n)
                accessory.displayName = String(repeating: "x", count: 32 * 1024)
                acknowledged.accessories.append(accessory)
                acknowledged.registrations[accessory.id] = F.registration(n)
            } catch {
                failure = error
                break
            }
        }
        let error = try #require(failure)
        #expect(
            acknowledged.accessories.count > F.everythingState.accessories.count + 2, "the disk filled up before the loop wrote anything")
        #expect(error.code == .diskFull, "\(error)")
        #expect(try store.load() == acknowledged)
        store.close()
        #expect(try AccessoryStore(path: path, mode: .readOnly).load() == acknowledged)
    }

    @Test("a read-only store serves load and refuses writes with .readOnly")
    func readOnly() throws {
        let directory = TemporaryDirectory()
        let path = directory.database()
        do {
            let store = try AccessoryStore(path: path)
            try store.apply(F.everything, sources: [F.full.id: [F.address(0x100)]])
            store.close()
        }
        let store = try AccessoryStore(path: path, mode: .readOnly)
        #expect(store.isReadOnly)
        #expect(try store.load() == F.everythingState)
        for writes in [[StorageWrite.migrationComplete], [.deleteAccessory(F.full.id)], Self.bigWrite(7)] {
            let error = #expect(throws: StorageError.self) { try store.apply(writes) }
            #expect(error?.code == .readOnly)
            #expect(error?.message.contains(path) == true)
        }
        let error = #expect(throws: StorageError.self) { try store.saveSources([], for: F.full.id) }
        #expect(error?.code == .readOnly)
        #expect(try store.load() == F.everythingState)
        #expect(try store.loadSources() == [F.full.id: [F.address(0x100)]])
        #expect(store.integrityCheck() == [])
        // A backup of a read-only store works too.
        let copy = directory.path + "/copy.sqlite3"
        try store.backup(to: copy)
        #expect(try AccessoryStore(path: copy).load() == F.everythingState)
    }

    @Test(
        "on a read-only file system .readWrite fails clearly and .readOnly serves the state",
        .enabled(if: canMount, "needs root and mount"))
    func readOnlyFileSystem() throws {
        let directory = TemporaryDirectory()
        let source = directory.path + "/source"
        let readOnlyView = directory.path + "/ro"
        do {
            let store = try AccessoryStore(path: source + "/aabridge.sqlite3")
            try store.apply(F.everything)
            store.close() // a clean shutdown removes -wal and -shm
        }
        try FileManager.default.createDirectory(atPath: readOnlyView, withIntermediateDirectories: true)
        guard Self.run("/bin/mount", ["--bind", source, readOnlyView]) else { return }
        defer { _ = Self.run("/bin/umount", [readOnlyView]) }
        guard Self.run("/bin/mount", ["-o", "remount,bind,ro", readOnlyView]) else { return }
        let path = readOnlyView + "/aabridge.sqlite3"

        let error = #expect(throws: StorageError.self) { try AccessoryStore(path: path) }
        #expect(error?.code == .cannotOpen || error?.code == .readOnly)
        #expect(error?.message.contains(path) == true)

        let store = try AccessoryStore(path: path, mode: .readOnly)
        #expect(store.isReadOnly)
        #expect(try store.load() == F.everythingState)
        let refused = #expect(throws: StorageError.self) { try store.apply([.deleteAccessory(F.full.id)]) }
        #expect(refused?.code == .readOnly)
        #expect(try store.load() == F.everythingState)
        store.close()
    }

    @Test("a read-only store reads alongside a writer and sees its commits")
    func readOnlyAlongsideWriter() throws {
        let directory = TemporaryDirectory()
        let path = directory.database()
        let writer = try AccessoryStore(path: path)
        try writer.apply([.upsertAccessory(F.bare)])
        let reader = try AccessoryStore(path: path, mode: .readOnly)
        #expect(try reader.load().accessories == [F.bare])
        try writer.apply([.upsertAccessory(F.full)])
        #expect(try reader.load().accessories == [F.full, F.bare])
    }

    @Test("a read-only store cannot be opened on a missing file or an old schema")
    func readOnlyNeedsCurrentDatabase() throws {
        let directory = TemporaryDirectory()
        let missing = #expect(throws: StorageError.self) { try AccessoryStore(path: directory.database(), mode: .readOnly) }
        #expect(missing?.code == .cannotOpen)
        #expect(!FileManager.default.fileExists(atPath: directory.database()))
        let old = directory.database("old.sqlite3")
        try SchemaMigrationTests.makeDatabase(old, SchemaMigrationTests.version1)
        let error = #expect(throws: StorageError.self) { try AccessoryStore(path: old, mode: .readOnly) }
        #expect(error?.code == .readOnly)
    }

    @Test(
        "result codes map to the codes the bridge answers with",
        arguments: [
            (13, StorageError.Code.diskFull), (8, .readOnly), (1032, .readOnly), (11, .corrupt), (26, .corrupt),
            (5, .busy), (6, .busy), (14, .cannotOpen), (19, .constraint), (787, .constraint), (10, .ioError), (1, .other(1)),
        ] as [(Int32, StorageError.Code)])
    func codeMapping(result: Int32, code: StorageError.Code) {
        #expect(StorageError.code(for: result) == code)
    }

    @Test("an I/O error caused by a full or read-only file system says so")
    func ioErrorCauses() {
        // SQLITE_IOERR_WRITE = 778, SQLITE_IOERR_FSYNC = 1034.
        #expect(StorageError.code(for: 778, systemErrno: ENOSPC) == .diskFull)
        #expect(StorageError.code(for: 1034, systemErrno: EROFS) == .readOnly)
        #expect(StorageError.code(for: 778, systemErrno: EIO) == .ioError)
    }
}
