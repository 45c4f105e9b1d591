import CSQLite

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A storage failure: a code the bridge can branch on and a message an operator can act on.
///
/// The message names the database path and SQLite's own explanation; it never carries
/// row contents, so nothing a user typed (names, SSIDs) ends up in logs by accident.
public struct StorageError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, in the terms an operator fixes it by.
    public enum Code: Hashable, Sendable {
        /// The disk (or the database's size limit) is full: `SQLITE_FULL`. Free space and retry.
        case diskFull
        /// The database or its directory cannot be written: `SQLITE_READONLY*`, or the store
        /// was opened read-only. Reads keep working.
        case readOnly
        /// The database is damaged: `SQLITE_CORRUPT`, `SQLITE_NOTADB` on a file that still
        /// carries aabridge's application id, or a row the store cannot decode. Restore a backup.
        case corrupt
        /// Another process holds the database lock longer than the busy timeout:
        /// `SQLITE_BUSY`, `SQLITE_LOCKED`.
        case busy
        /// The file or its directory cannot be opened or created: `SQLITE_CANTOPEN`, or
        /// creating the directory failed.
        case cannotOpen
        /// The database was written by a newer aabridge (its schema version is higher
        /// than this build knows); it is left untouched.
        case newerSchema
        /// The file is not aabridge's: a SQLite database of some other application, or not a
        /// SQLite database at all (`SQLITE_NOTADB` without aabridge's application id).
        case notAStore
        /// A write broke a constraint, e.g. a registration or sources for an accessory that
        /// is not stored: `SQLITE_CONSTRAINT`.
        case constraint
        /// The operating system reported an I/O error: `SQLITE_IOERR`.
        case ioError
        /// Another aabridge already runs on this database (it holds `<storage.path>.lock`).
        case alreadyInUse
        /// The store was closed.
        case closed
        /// The database server cannot be reached or the connection to it was lost
        /// (PostgreSQL). A write that failed so may or may not have been committed; nothing
        /// was acknowledged, and the next call reconnects.
        case unavailable
        /// Any other SQLite result code (the extended code).
        case other(Int32)
    }

    /// What went wrong.
    public var code: Code
    /// A sentence an operator can act on, with the path and SQLite's message.
    public var message: String
    /// The extended SQLite result code, when the failure came from SQLite.
    public var sqliteCode: Int32?
    /// PostgreSQL's SQLSTATE (five characters, e.g. `23503`), when the failure came from the server.
    public var sqlState: String?

    /// Creates an error.
    public init(_ code: Code, message: String, sqliteCode: Int32? = nil, sqlState: String? = nil) {
        self.code = code
        self.message = message
        self.sqliteCode = sqliteCode
        self.sqlState = sqlState
    }

    public var description: String { "storage: \(message)" }

    /// The code for an (extended) SQLite result code and the `errno` behind it
    /// (`sqlite3_system_errno`).
    static func code(for result: Int32, systemErrno: Int32 = 0) -> Code {
        switch result & 0xFF {
        case SQLITE_FULL: .diskFull
        case SQLITE_READONLY: .readOnly
        case SQLITE_CORRUPT, SQLITE_NOTADB: .corrupt
        case SQLITE_BUSY, SQLITE_LOCKED: .busy
        case SQLITE_CANTOPEN, SQLITE_PERM, SQLITE_AUTH: .cannotOpen
        case SQLITE_CONSTRAINT: .constraint
        case SQLITE_IOERR:
            // A full or read-only file system can surface as an I/O error (a failed write or
            // fsync); the operator needs the advice for the cause, not "I/O error".
            switch systemErrno {
            case ENOSPC, EDQUOT: .diskFull
            case EROFS: .readOnly
            default: .ioError
            }
        default: .other(result)
        }
    }

    /// Advice per code, appended to SQLite's message so the operator knows what to do.
    static func advice(for code: Code) -> String {
        switch code {
        case .diskFull: "the disk is full; free space, then retry (nothing was stored)"
        case .readOnly: "the database is read-only; check the file system, permissions and storage.path (nothing was stored)"
        case .corrupt: "the database is damaged; stop aabridge and restore a backup"
        case .busy: "another process holds the database lock; make sure only one aabridge uses storage.path"
        case .cannotOpen: "check that storage.path and its directory exist and are writable"
        case .ioError: "the operating system reported an I/O error; check the disk"
        case .constraint: "the write refers to an accessory that is not stored"
        case .unavailable: "the database server cannot be reached; check that it runs and storage.url (nothing was acknowledged)"
        case .newerSchema, .notAStore, .alreadyInUse, .closed, .other: ""
        }
    }
}
