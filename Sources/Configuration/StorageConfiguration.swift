import Storage

/// The `storage:` section.
public struct StorageConfiguration: Hashable, Sendable {
    /// Where the bridge keeps its state.
    public enum Backend: String, CaseIterable, Hashable, Sendable {
        /// One SQLite file (`path`), embedded: the default.
        case sqlite
        /// A PostgreSQL database (`url`), which several bridges may share.
        case postgresql
    }

    /// Which store `run` opens.
    public var backend: Backend
    /// The SQLite database, created on first start; relative paths are from the working
    /// directory. Ignored with backend postgresql.
    public var path: String
    /// The PostgreSQL database: a libpq connection string (`postgresql://user@host:5432/db`
    /// or `host=... dbname=...`). Required with backend postgresql, refused with sqlite.
    public var url: String?
    /// From `password`, `password_file` or `AABRIDGE_STORAGE_PASSWORD`; given to libpq on its
    /// own, so it never appears in `url`, logs or `bridge/info`.
    public var password: Secret?
    /// Where the password was read from, when it came from a file (the path, never the content).
    public var passwordFile: String?

    /// Creates the section; the default is SQLite at `data/aabridge.sqlite3`.
    public init(path: String = "data/aabridge.sqlite3") {
        self.backend = .sqlite
        self.path = path
        self.url = nil
        self.password = nil
        self.passwordFile = nil
    }

    /// `url` without a password written into it, for log lines and `bridge/info`.
    public var redactedURL: String? { url.map(PostgresConnection.redacted) }

    /// What the store is, for messages: the SQLite path, or the URL without its password.
    public var location: String {
        switch backend {
        case .sqlite: path
        case .postgresql: redactedURL ?? ""
        }
    }
}
