import CSQLite

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

/// One SQLite connection with a cache of prepared statements: the thin C-facing layer
/// under `AccessoryStore`.
///
/// Not thread-safe by itself (it is opened with `SQLITE_OPEN_NOMUTEX`); `AccessoryStore`
/// only reaches it through its `Mutex`, which is why it needs no locking of its own.
final class SQLiteConnection {
    /// A value bound to a statement parameter.
    enum Value {
        case null
        case integer(Int64)
        case text(String)
        case blob([UInt8])
    }

    /// The database file, for error messages.
    let path: String
    /// Whether the connection was opened with `SQLITE_OPEN_READONLY`.
    let isReadOnly: Bool
    private var handle: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]

    /// `SQLITE_TRANSIENT`: SQLite copies bound text and blobs, so Swift buffers may go away.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Opens (and with `create`, creates) the database file.
    ///
    /// `immutable` (read-only only) tells SQLite the file cannot change, so it needs no `-shm`
    /// file: the only way to read a WAL database on a read-only file system after a clean
    /// shutdown removed its `-shm`.
    init(path: String, readOnly: Bool, create: Bool, immutable: Bool = false) throws(StorageError) {
        self.path = path
        self.isReadOnly = readOnly
        var flags = SQLITE_OPEN_NOMUTEX
        flags |= readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE
        if create && !readOnly { flags |= SQLITE_OPEN_CREATE }
        var name = path
        if immutable && readOnly {
            flags |= SQLITE_OPEN_URI
            // A URI path: escape what URIs give a meaning to.
            let escaped = path.replacing("%", with: "%25").replacing("?", with: "%3f").replacing("#", with: "%23")
            name = "file:\(escaped)?immutable=1"
        }
        if create && !readOnly { Self.restrictFiles(of: path) }
        var db: OpaquePointer?
        let result = sqlite3_open_v2(name, &db, flags, nil)
        handle = db
        if result != SQLITE_OK {
            let error = self.error(result, "cannot open the database")
            close()
            throw error
        }
        sqlite3_extended_result_codes(db, 1)
    }

    deinit { close() }

    /// Makes the database file (and its `-wal`, `-shm` and `-journal`, when there) readable by
    /// this user only, whatever the umask: `identities` holds IRKs and encryption keys in clear.
    ///
    /// SQLite creates a new database with 0644 less the umask, and its `-wal`, `-shm` and
    /// `-journal` with the database file's mode: so the file is created here first, 0600, and
    /// SQLite gives the others the same. Files already there (an older release's 0644, a
    /// `-wal` left by a crash) are tightened when this user owns them. By path, never by
    /// opening and closing a descriptor of an existing file: closing one drops every POSIX
    /// lock this process holds on it, another connection's included.
    static func restrictFiles(of path: String) {
        guard !path.isEmpty, path != ":memory:", !path.hasPrefix("file:") else { return }
        let created = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if created >= 0 {
            _ = fchmod(created, 0o600)
            closeDescriptor(created)
        }
        for file in [path, path + "-wal", path + "-shm", path + "-journal"] {
            var status = stat()
            guard lstat(file, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_uid == geteuid(),
                status.st_mode & 0o077 != 0
            else { continue }
            _ = chmod(file, 0o600)
        }
    }

    /// Whether the connection is still open.
    var isOpen: Bool { handle != nil }

    /// Whether SQLite can write the main database (false when closed).
    var isReadOnlyDatabase: Bool {
        guard let handle else { return true }
        return sqlite3_db_readonly(handle, "main") != 0
    }

    /// Whether a transaction is open (SQLite rolls some failures back by itself).
    var inTransaction: Bool {
        guard let handle else { return false }
        return sqlite3_get_autocommit(handle) == 0
    }

    /// Finalizes every cached statement and closes the connection; idempotent.
    func close() {
        for statement in statements.values { sqlite3_finalize(statement) }
        statements.removeAll()
        if let handle {
            // close_v2 defers the close if a backup object still references the connection.
            sqlite3_close_v2(handle)
        }
        handle = nil
    }

    /// The raw handle, for the backup API.
    func rawHandle() throws(StorageError) -> OpaquePointer {
        guard let handle else { throw closedError() }
        return handle
    }

    /// Runs SQL that may hold several statements and binds nothing (schema, pragmas, BEGIN).
    func execute(_ sql: String) throws(StorageError) {
        let handle = try rawHandle()
        var message: UnsafeMutablePointer<CChar>?
        let result = sqlite3_exec(handle, sql, nil, nil, &message)
        let text = message.map { String(cString: $0) }
        sqlite3_free(message)
        if result != SQLITE_OK {
            throw error(result, text ?? "statement failed")
        }
    }

    /// Runs one cached statement with `bindings`, calling `row` for each result row.
    func run(
        _ sql: String, _ bindings: [Value] = [], row: (Row) throws(StorageError) -> Void = { _ throws(StorageError) in }
    ) throws(StorageError) {
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (index, value) in bindings.enumerated() {
            let position = Int32(index + 1)
            let result: Int32
            switch value {
            case .null: result = sqlite3_bind_null(statement, position)
            case .integer(let value): result = sqlite3_bind_int64(statement, position, value)
            case .text(let value): result = sqlite3_bind_text(statement, position, value, Int32(value.utf8.count), Self.transient)
            case .blob(let value):
                result = value.withUnsafeBytes { bytes in
                    // A non-nil pointer even for an empty array, so that [] stays a blob, not NULL.
                    sqlite3_bind_blob(
                        statement, position, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count), Self.transient)
                }
            }
            guard result == SQLITE_OK else { throw error(result, "cannot bind parameter \(position)") }
        }
        while true {
            let result = sqlite3_step(statement)
            switch result {
            case SQLITE_ROW: try row(Row(statement: statement))
            case SQLITE_DONE: return
            default: throw error(result, "statement failed")
            }
        }
    }

    /// The first column of the first row as text (pragmas), or nil when there is no row.
    func scalar(_ sql: String) throws(StorageError) -> String? {
        var value: String?
        try run(sql) { row throws(StorageError) in
            if value == nil { value = row.text(0) }
        }
        return value
    }

    /// The first column of the first row as an integer, 0 when there is no row.
    func integer(_ sql: String) throws(StorageError) -> Int64 {
        var value: Int64 = 0
        try run(sql) { row throws(StorageError) in value = row.integer(0) }
        return value
    }

    private func prepared(_ sql: String) throws(StorageError) -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        let handle = try rawHandle()
        var statement: OpaquePointer?
        let result = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard result == SQLITE_OK, let statement else {
            throw error(result, "cannot prepare a statement")
        }
        statements[sql] = statement
        return statement
    }

    /// A `StorageError` for `result`, with SQLite's message, the path and advice.
    func error(_ result: Int32, _ context: String) -> StorageError {
        let sqliteMessage = handle.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(result))
        let systemErrno = handle.map { sqlite3_system_errno($0) } ?? 0
        let code = StorageError.code(for: result, systemErrno: systemErrno)
        var message = "\(context): \(sqliteMessage) (SQLite code \(result), database \(path))"
        let advice = StorageError.advice(for: code)
        if !advice.isEmpty { message += "; \(advice)" }
        return StorageError(code, message: message, sqliteCode: result)
    }

    func closedError() -> StorageError {
        StorageError(.closed, message: "the store for \(path) is closed")
    }
}

extension SQLiteConnection {
    /// The current result row of a statement; valid only inside the `run` callback.
    struct Row {
        let statement: OpaquePointer

        func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }

        func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }

        func optionalInteger(_ column: Int32) -> Int64? { isNull(column) ? nil : integer(column) }

        func text(_ column: Int32) -> String? {
            guard let pointer = sqlite3_column_text(statement, column) else { return nil }
            // By length, not up to the first NUL, so that every stored string comes back exactly.
            let count = Int(sqlite3_column_bytes(statement, column))
            return String(decoding: UnsafeRawBufferPointer(start: pointer, count: count), as: UTF8.self)
        }

        func blob(_ column: Int32) -> [UInt8]? {
            if isNull(column) { return nil }
            let count = Int(sqlite3_column_bytes(statement, column))
            guard count > 0, let pointer = sqlite3_column_blob(statement, column) else { return [] }
            return Array(UnsafeRawBufferPointer(start: pointer, count: count))
        }
    }
}

/// The C library's `close`, outside `SQLiteConnection`, whose `close()` would hide it.
private func closeDescriptor(_ descriptor: Int32) {
    _ = close(descriptor)
}
