import AccessoryKit
import CSQLite
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The durable state of the bridge: paired accessories, their AudioAccessoryKit
/// registrations, their connected sources and the migration flag, in one SQLite file.
///
/// One connection, reached only through a `Mutex`, so the store is `Sendable` without
/// `@unchecked`. Every call blocks on disk I/O (`apply` waits for `fsync`): call it from a
/// thread that may block, not from a hot cooperative-pool task.
///
/// Durability: WAL journal with `synchronous=FULL`; `apply` returns only after the commit
/// is on disk, so a write the bridge acknowledges afterwards survives `kill -9` and a power cut.
public final class AccessoryStore: AccessoryStorage {
    /// How the database is opened.
    public enum Mode: Sendable, Hashable {
        /// Created if missing, migrated to the current schema, writable.
        case readWrite
        /// `SQLITE_OPEN_READONLY`: `load` works, every write fails with `.readOnly`. The file
        /// must exist and already have the current schema (a read-only store cannot migrate).
        /// Also opens a database on a read-only file system, where `.readWrite` fails.
        case readOnly
    }

    /// The database file.
    public let path: String
    /// The database file, for log lines.
    public var location: String { path }
    /// How it was opened.
    public let mode: Mode
    private let connection: Mutex<SQLiteConnection>
    private let commits = Atomic<Int>(0)

    /// Transactions `apply` has committed since the store was opened (each one an fsync):
    /// what batching writes saves can be counted, not guessed.
    public var committedTransactions: Int { commits.load(ordering: .relaxed) }

    /// Opens the store at `path`, creating its directory and the database if missing, and
    /// migrates an older schema.
    ///
    /// - Throws: `.cannotOpen` when the directory or file cannot be created or opened,
    ///   `.newerSchema` for a database written by a newer aabridge, `.notAStore` for another
    ///   application's database or a file that is not a SQLite database at all, `.corrupt`
    ///   for a damaged database, `.readOnly`
    ///   when a migration is needed but cannot be written.
    public init(path: String, mode: Mode = .readWrite) throws(StorageError) {
        self.path = path
        self.mode = mode
        if mode == .readWrite { try Self.createDirectory(containing: path) }
        var connection = try SQLiteConnection(path: path, readOnly: mode == .readOnly, create: mode == .readWrite)
        do throws(StorageError) {
            try Self.prepare(connection, mode: mode)
        } catch  where mode == .readOnly && error.code == .cannotOpen {
            // A WAL database on a read-only file system whose -shm is gone (clean shutdown)
            // cannot be opened normally; nothing can write it there, so read it as immutable.
            connection.close()
            connection = try SQLiteConnection(path: path, readOnly: true, create: false, immutable: true)
            try Self.prepare(connection, mode: mode)
        }
        self.connection = Mutex(connection)
    }

    /// Whether writes are impossible: opened `.readOnly`, or SQLite fell back to read-only
    /// because the file or its file system cannot be written. Reads work either way; every
    /// write then fails with `.readOnly`. The bridge can report this at startup.
    public var isReadOnly: Bool {
        connection.withLock { connection in connection.isReadOnlyDatabase }
    }

    /// Closes the connection; later calls fail with `.closed`. Idempotent.
    public func close() {
        connection.withLock { $0.close() }
    }

    // MARK: Writes

    /// Commits `writes` (and the given source lists) in one transaction.
    ///
    /// Either everything is stored or, on any failure, nothing: the transaction is rolled
    /// back and the error thrown. Returns only after the commit is durable, so the caller may
    /// acknowledge the request that caused the writes. An empty call touches nothing.
    ///
    /// - Parameters:
    ///   - writes: the engine's storage outputs, applied in order.
    ///   - sources: connected source lists to replace, per accessory (ordered, primary first);
    ///     an empty list clears an accessory's sources.
    /// - Throws: `.diskFull`, `.readOnly`, `.ioError`, `.busy`, `.constraint` (a registration
    ///   or source list for an accessory that is not stored), `.closed`.
    public func apply(_ writes: [StorageWrite], sources: [BluetoothAddress: [BluetoothAddress]] = [:]) throws(StorageError) {
        guard !writes.isEmpty || !sources.isEmpty else { return }
        let now = Self.now()
        try connection.withLock { connection throws(StorageError) in
            try Self.transaction(connection) { () throws(StorageError) in
                for write in writes { try Self.perform(write, on: connection, now: now) }
                // Sorted so the same call always writes in the same order.
                for (accessory, list) in sources.sorted(by: { $0.key < $1.key }) {
                    try Self.replaceSources(list, for: accessory, on: connection)
                }
            }
        }
        commits.add(1, ordering: .relaxed)
    }

    /// Replaces the ordered connected sources of one stored accessory, durably.
    ///
    /// - Throws: `.constraint` when the accessory is not stored; the errors of `apply`.
    public func saveSources(_ sources: [BluetoothAddress], for accessory: BluetoothAddress) throws(StorageError) {
        try apply([], sources: [accessory: sources])
    }

    // MARK: Reads

    /// The state to start the engine with: accessories sorted by id, registrations and the
    /// migration flag, read as one consistent snapshot.
    ///
    /// - Throws: `.corrupt` when a row cannot be decoded (the message names the accessory),
    ///   `.busy`, `.ioError`, `.closed`.
    public func load() throws(StorageError) -> RestoredState {
        try load(only: nil)
    }

    /// The stored state of these accessories only, as one snapshot (the migration flag too).
    public func load(accessories ids: [BluetoothAddress]) throws(StorageError) -> RestoredState {
        try load(only: ids)
    }

    private func load(only ids: [BluetoothAddress]?) throws(StorageError) -> RestoredState {
        try connection.withLock { connection throws(StorageError) in
            let state = try Self.readTransaction(connection) { () throws(StorageError) in
                try Self.readState(connection, only: ids)
            }
            // Reading every row filled SQLite's page cache (up to its 2 MB) with pages the
            // writes that follow, a row at a time, do not need: given back (issue 53). Nothing
            // is lost if it cannot be.
            if ids == nil { try? connection.execute("PRAGMA shrink_memory") }
            return state
        }
    }

    /// The ordered connected sources of every accessory that has any.
    public func loadSources() throws(StorageError) -> [BluetoothAddress: [BluetoothAddress]] {
        try connection.withLock { connection throws(StorageError) in
            var result: [BluetoothAddress: [BluetoothAddress]] = [:]
            try connection.run(StoredRows.sources) { row throws(StorageError) in
                result[Self.address(row.integer(0)), default: []].append(Self.address(row.integer(1)))
            }
            return result
        }
    }

    // MARK: Operations

    /// Writes a consistent copy of the database to `destination` with SQLite's online backup
    /// API, while the store stays open.
    ///
    /// The copy is written next to `destination` (`.partial`) and renamed into place only
    /// when complete, so a failed backup never leaves a truncated file under that name. It is
    /// a self-contained rollback-journal database (no `-wal` file to carry along) that
    /// `AccessoryStore(path:)` opens as is. Writers wait for the duration of the copy.
    public func backup(to destination: String) throws(StorageError) {
        try Self.createDirectory(containing: destination)
        let partial = destination + ".partial"
        for suffix in ["", "-journal", "-wal", "-shm"] { unlink(partial + suffix) }
        try connection.withLock { connection throws(StorageError) in
            let source = try connection.rawHandle()
            let target = try SQLiteConnection(path: partial, readOnly: false, create: true)
            defer { target.close() }
            let targetHandle = try target.rawHandle()
            guard let backup = sqlite3_backup_init(targetHandle, "main", source, "main") else {
                throw target.error(sqlite3_errcode(targetHandle), "cannot start the backup to \(destination)")
            }
            var result: Int32
            repeat {
                result = sqlite3_backup_step(backup, -1)
                if result == SQLITE_BUSY || result == SQLITE_LOCKED { sqlite3_sleep(10) }
            } while result == SQLITE_OK || result == SQLITE_BUSY || result == SQLITE_LOCKED
            let finished = sqlite3_backup_finish(backup)
            guard result == SQLITE_DONE, finished == SQLITE_OK else {
                let failure = result == SQLITE_DONE ? finished : result
                unlink(partial)
                throw target.error(failure, "the backup to \(destination) failed")
            }
            // The copied header says WAL; switch the copy to a single self-contained file.
            try target.execute("PRAGMA journal_mode=DELETE")
        }
        guard rename(partial, destination) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(partial)
            throw StorageError(.cannotOpen, message: "cannot move the backup into place at \(destination): \(reason)")
        }
    }

    /// The problems `PRAGMA integrity_check` finds; empty when the database is sound.
    public func integrityCheck() -> [String] {
        connection.withLock { connection in
            var rows: [String] = []
            do throws(StorageError) {
                try connection.run("PRAGMA integrity_check") { row throws(StorageError) in rows.append(row.text(0) ?? "") }
            } catch {
                return ["integrity_check could not run: \(error.message)"]
            }
            return rows == ["ok"] ? [] : rows
        }
    }

    // MARK: Internal (tests)

    /// Runs `body` on the connection under the lock (tests query pragmas and set limits).
    func withConnection<T: Sendable>(_ body: (SQLiteConnection) throws(StorageError) -> T) throws(StorageError) -> T {
        try connection.withLock { connection throws(StorageError) in try body(connection) }
    }
}

// MARK: - Opening

extension AccessoryStore {
    static func createDirectory(containing path: String) throws(StorageError) {
        guard path != ":memory:", !path.hasPrefix("file:") else { return }
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        guard !directory.isEmpty else { return }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw StorageError(
                .cannotOpen, message: "cannot create the directory \(directory) for storage.path \(path): \(reason(error))")
        }
    }

    /// What went wrong, in the C library's words when the error carries a POSIX code.
    private static func reason(_ error: any Error) -> String {
        let posix = (error as? CocoaError)?.userInfo["NSUnderlyingError"] as? POSIXError
        return posix.map { String(cString: strerror($0.code.rawValue)) } ?? "\(error)"
    }

    /// Checks whose database this is, sets the connection's pragmas and migrates.
    static func prepare(_ connection: SQLiteConnection, mode: Mode) throws(StorageError) {
        let path = connection.path
        // The first read also tells a non-database file apart (SQLITE_NOTADB), which is either
        // a file that never was ours or an aabridge database whose header is damaged.
        let applicationID: Int64
        do throws(StorageError) {
            applicationID = try connection.integer("PRAGMA application_id")
        } catch  where error.sqliteCode.map({ $0 & 0xFF == SQLITE_NOTADB }) == true {
            throw notADatabase(path: path, error: error)
        }
        let version = try connection.integer("PRAGMA user_version")
        if applicationID != 0 && applicationID != StoreSchema.applicationID {
            throw StorageError(
                .notAStore,
                message:
                    "\(path) is a SQLite database of another application (application_id \(applicationID)); point storage.path at a new file"
            )
        }
        if version == 0 {
            let tables = try connection.integer("SELECT count(*) FROM sqlite_schema")
            if tables > 0 {
                throw StorageError(
                    .notAStore, message: "\(path) already holds tables that aabridge did not create; point storage.path at a new file")
            }
        }
        if version > StoreSchema.currentVersion {
            throw StorageError(
                .newerSchema,
                message:
                    "\(path) has schema version \(version), but this aabridge knows only up to \(StoreSchema.currentVersion); run the newer aabridge or restore a backup made by this version (the file was not changed)"
            )
        }
        try connection.execute("PRAGMA busy_timeout = 5000")
        try connection.execute("PRAGMA foreign_keys = ON")
        guard mode == .readWrite else {
            if version < StoreSchema.currentVersion {
                throw StorageError(
                    .readOnly,
                    message:
                        "\(path) has schema version \(version) and needs an upgrade to \(StoreSchema.currentVersion), which a read-only store cannot write; open it read-write once"
                )
            }
            return
        }
        let journal = try connection.scalar("PRAGMA journal_mode = WAL")
        guard journal?.lowercased() == "wal" else {
            throw StorageError(
                .other(SQLITE_ERROR),
                message: "\(path) cannot use the WAL journal (got \(journal ?? "nothing")); put storage.path on a local file system")
        }
        // WAL with synchronous=NORMAL syncs the WAL only at checkpoints: the database stays
        // consistent after a power cut, but the last commits, already acknowledged, can
        // vanish. FULL syncs the WAL at every commit, which "durable once acknowledged" needs.
        try connection.execute("PRAGMA synchronous = FULL")
        // On macOS fsync does not flush the drive's cache; fullfsync does (no-op on Linux).
        try connection.execute("PRAGMA fullfsync = ON")
        try migrate(connection)
    }

    /// The error for a file SQLite does not recognise (`SQLITE_NOTADB`), judged by its first
    /// 100 bytes (the SQLite header): one that still carries aabridge's application id at
    /// offset 68 is a damaged aabridge database (restore a backup); anything else, a text
    /// file or another format, never was one (`.notAStore`: point storage.path elsewhere).
    static func notADatabase(path: String, error: StorageError) -> StorageError {
        let header = firstBytes(of: path, count: 100)
        let count = header.count
        let storedID = count >= 72 ? header[68..<72].reduce(Int64(0)) { $0 << 8 | Int64($1) } : 0
        if storedID == StoreSchema.applicationID {
            return StorageError(
                .corrupt,
                message:
                    "\(path) is an aabridge database whose header is damaged (SQLite: file is not a database); stop aabridge and restore a backup",
                sqliteCode: error.sqliteCode)
        }
        let magic = Array("SQLite format 3\0".utf8)
        let what =
            count >= magic.count && Array(header[0..<magic.count]) == magic ? "a SQLite file SQLite cannot read" : "not a SQLite database"
        return StorageError(
            .notAStore,
            message:
                "\(path) is not an aabridge database (\(what)); point storage.path at the aabridge database or at a path where a new one may be created (the file was not changed)",
            sqliteCode: error.sqliteCode)
    }

    /// Runs every migration above the stored version, each with its `user_version` bump in
    /// one transaction.
    static func migrate(_ connection: SQLiteConnection) throws(StorageError) {
        // Up to date: take no write lock, so a store on a read-only file system still opens
        // and serves reads.
        guard try connection.integer("PRAGMA user_version") < StoreSchema.currentVersion else { return }
        for migration in StoreSchema.migrations {
            try transaction(connection) { () throws(StorageError) in
                // Read inside the write lock: another process may have migrated meanwhile.
                let version = try connection.integer("PRAGMA user_version")
                guard version < migration.version else { return }
                guard version == migration.version - 1 else {
                    throw StorageError(
                        .corrupt,
                        message: "\(connection.path) is at schema version \(version), below \(migration.version - 1); no migration path")
                }
                try connection.execute(migration.sql)
                try connection.execute("PRAGMA user_version = \(migration.version)")
            }
        }
    }

    // MARK: Transactions

    /// Runs `body` in `BEGIN IMMEDIATE ... COMMIT` (the write lock is taken up front, so a
    /// busy database fails here rather than half-way); rolls back on any failure.
    static func transaction(_ connection: SQLiteConnection, _ body: () throws(StorageError) -> Void) throws(StorageError) {
        try connection.run("BEGIN IMMEDIATE")
        do throws(StorageError) {
            try body()
            try connection.run("COMMIT")
        } catch {
            // SQLite rolls some failures (e.g. SQLITE_FULL in some cases) back by itself.
            if connection.inTransaction { try? connection.run("ROLLBACK") }
            throw error
        }
    }

    /// A read transaction, so the tables are read from one snapshot.
    static func readTransaction<T>(_ connection: SQLiteConnection, _ body: () throws(StorageError) -> T) throws(StorageError) -> T {
        try connection.run("BEGIN")
        do throws(StorageError) {
            let value = try body()
            try connection.run("COMMIT")
            return value
        } catch {
            if connection.inTransaction { try? connection.run("ROLLBACK") }
            throw error
        }
    }

    static func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    static func address(_ value: Int64) -> BluetoothAddress { BluetoothAddress(rawValue: UInt64(bitPattern: value)) }

}

/// Up to `count` bytes from the start of a file; empty when it cannot be read. (Outside
/// `AccessoryStore`, whose `close()` would hide the C library's.)
private func firstBytes(of path: String, count: Int) -> [UInt8] {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return [] }
    defer { close(descriptor) }
    var bytes = [UInt8](repeating: 0, count: count)
    let read = pread(descriptor, &bytes, count, 0)
    bytes.removeLast(count - max(0, read))
    return bytes
}
