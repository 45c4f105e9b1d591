import AccessoryKit
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The durable state of the bridge in a PostgreSQL database: the same tables and the same
/// guarantees as ``AccessoryStore`` (SQLite), for bridges that share one database server.
///
/// One connection, reached only through a `Mutex`. Every call blocks on the network and the
/// server's disk: call it from a thread that may block (the runtime's `StorageWorker`).
///
/// Durability: every session runs with `synchronous_commit = on`, so `apply` returns only
/// once the server has flushed the commit to its disk; a request acknowledged afterwards
/// survives the server's crash.
///
/// Lost connections: before each call a connection that is not up is re-established once
/// (`reconnect`); a call that loses the connection throws `.unavailable` and the next call
/// reconnects. A write is never retried silently: when the connection drops during `COMMIT`
/// the commit may or may not have happened, and only the caller can decide to ask again (the
/// writes are upserts and deletes, so applying them twice stores the same thing).
public final class PostgresStore: AccessoryStorage {
    /// The channel `apply` notifies, in its own transaction, with the accessories it changed:
    /// `"<origin>:<ID>,<ID>,..."`, each id as 12 upper-case hex digits, several notifications
    /// when the list is long (each payload below ``maximumPayloadBytes``).
    public static let changesChannel = "aabridge_accessories"
    /// PostgreSQL refuses payloads of 8,000 bytes or more; this leaves room.
    static let maximumPayloadBytes = 7_000

    /// The URL without its password.
    public let location: String
    /// Who wrote a change, at the head of each notification (an instance's name; "" by default),
    /// so an instance can skip its own.
    public let origin: String
    private let connection: Mutex<PostgresConnection?>
    private let commits = Atomic<Int>(0)
    private let instanceLock: PostgresInstanceLock?
    private let onLockLost: @Sendable (StorageError) -> Void
    /// Set once a reconnect found the instance lock taken: the store is no longer this bridge's.
    private let lockLost = Mutex<StorageError?>(nil)

    public var committedTransactions: Int { commits.load(ordering: .relaxed) }

    /// Connects, then creates or migrates the schema, then takes `instanceLock` if given.
    ///
    /// - Parameters:
    ///   - instanceLock: who may run beside this store on the database (``PostgresInstanceLock``);
    ///     nil takes no lock (tools, tests of the store itself).
    ///   - onLockLost: called (on the calling thread, once) when a reconnect finds the lock
    ///     taken by another bridge; every later call then fails with `.alreadyInUse`.
    /// - Throws: `.cannotOpen` for a malformed URL, a refused login or a missing database,
    ///   `.unavailable` when the server cannot be reached, `.newerSchema` for a database
    ///   migrated by a newer aabridge (left unchanged), `.alreadyInUse` when another bridge
    ///   holds the instance lock.
    public init(
        url: String, password: String? = nil, origin: String = "", applicationName: String = "aabridge",
        instanceLock: PostgresInstanceLock? = nil, onLockLost: @escaping @Sendable (StorageError) -> Void = { _ in }
    ) throws(StorageError) {
        let connection = try PostgresConnection(url: url, password: password, applicationName: applicationName)
        location = connection.location
        self.origin = origin
        self.instanceLock = instanceLock
        self.onLockLost = onLockLost
        do throws(StorageError) {
            try Self.migrate(connection)
            if let instanceLock, try !instanceLock.take(on: connection) { throw instanceLock.refusal(on: connection) }
        } catch {
            connection.close()
            throw error
        }
        self.connection = Mutex(connection)
    }

    /// Whether every write is bound to fail: the server is a standby (`pg_is_in_recovery()`)
    /// or the database or role defaults to read-only transactions. Reads work either way;
    /// each write then fails with `.readOnly`. False when the server cannot be asked.
    public var isReadOnly: Bool {
        var readOnly = false
        try? withConnection { connection throws(StorageError) in
            try connection.run("SELECT pg_is_in_recovery() OR current_setting('default_transaction_read_only') = 'on'") {
                row throws(StorageError) in readOnly = row.bool(0)
            }
        }
        return readOnly
    }

    /// Closes the connection; later calls fail with `.closed`. Idempotent.
    public func close() {
        connection.withLock { connection in
            connection?.close()
            connection = nil
        }
    }

    // MARK: Writes

    /// Commits `writes` and the given source lists in one transaction, with a notification on
    /// ``changesChannel`` naming every accessory touched; on any failure it is rolled back and
    /// neither is seen. Returns once the commit is durable. An empty call touches nothing.
    ///
    /// - Throws: `.constraint` (a registration or source list for an accessory that is not
    ///   stored), `.unavailable` (the server cannot be reached; the commit may or may not have
    ///   happened), `.diskFull`, `.readOnly`, `.closed`.
    public func apply(_ writes: [StorageWrite], sources: [BluetoothAddress: [BluetoothAddress]]) throws(StorageError) {
        guard !writes.isEmpty || !sources.isEmpty else { return }
        let now = AccessoryStore.now()
        let payloads = Self.notificationPayloads(origin: origin, accessories: Self.touched(writes, sources: sources))
        try withConnection { connection throws(StorageError) in
            try Self.transaction(connection, begin: "BEGIN") { () throws(StorageError) in
                for write in writes { try Self.perform(write, on: connection, now: now) }
                for (accessory, list) in sources.sorted(by: { $0.key < $1.key }) {
                    try Self.replaceSources(list, for: accessory, on: connection)
                }
                for payload in payloads {
                    try connection.run("SELECT pg_notify($1, $2)", [.text(Self.changesChannel), .text(payload)])
                }
            }
        }
        commits.add(1, ordering: .relaxed)
    }

    // MARK: Reads

    /// The state to start the engine with, read in one `REPEATABLE READ` read-only transaction.
    public func load() throws(StorageError) -> RestoredState {
        try load(only: nil)
    }

    /// The stored state of these accessories only, read as `load` reads everything.
    public func load(accessories ids: [BluetoothAddress]) throws(StorageError) -> RestoredState {
        try load(only: ids)
    }

    private func load(only ids: [BluetoothAddress]?) throws(StorageError) -> RestoredState {
        try withConnection { connection throws(StorageError) in
            var state = RestoredState()
            try Self.transaction(connection, begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") { () throws(StorageError) in
                state = try Self.readState(connection, only: ids)
            }
            return state
        }
    }

    public func loadSources() throws(StorageError) -> [BluetoothAddress: [BluetoothAddress]] {
        try withConnection { connection throws(StorageError) in
            var result: [BluetoothAddress: [BluetoothAddress]] = [:]
            try connection.run(StoredRows.sources) { row throws(StorageError) in
                result[AccessoryStore.address(row.integer(0)), default: []].append(AccessoryStore.address(row.integer(1)))
            }
            return result
        }
    }

    // MARK: Connection

    /// Runs `body` on the connection, reconnecting first (once) when it is down.
    private func withConnection<T: Sendable>(_ body: (PostgresConnection) throws(StorageError) -> T) throws(StorageError) -> T {
        try connection.withLock { connection throws(StorageError) -> T in
            guard let connection else { throw StorageError(.closed, message: "the store for \(location) is closed") }
            if let lost = lockLost.withLock({ $0 }) { throw lost }
            if !connection.isConnected {
                try connection.reconnect()
                // The server dropped the session and its lock with it: take it again before
                // anything is read or written, or give the database up to whoever took it.
                if let instanceLock, try !instanceLock.take(on: connection) {
                    let refusal = instanceLock.refusal(on: connection)
                    let lost = StorageError(
                        .alreadyInUse, message: "after reconnecting, \(refusal.message); this aabridge stops")
                    lockLost.withLock { $0 = lost }
                    connection.close()
                    onLockLost(lost)
                    throw lost
                }
            }
            return try body(connection)
        }
    }

    /// Runs `body` between `begin` and `COMMIT`; rolls back on any failure (unless the
    /// transaction already ended: a failed `COMMIT` of deferred constraints rolls back by
    /// itself, and a lost connection ends it on the server).
    static func transaction(_ connection: PostgresConnection, begin: String, _ body: () throws(StorageError) -> Void) throws(StorageError) {
        try connection.execute(begin)
        do throws(StorageError) {
            try body()
            try connection.execute("COMMIT")
        } catch {
            if connection.inTransaction { try? connection.execute("ROLLBACK") }
            throw error
        }
    }

    // MARK: Migrations

    /// Runs every migration above the stored version, each in its own transaction with its
    /// `schema_migrations` row, under the advisory lock: an instance that waited for the lock
    /// reads the version another one just committed and has nothing left to do.
    static func migrate(_ connection: PostgresConnection) throws(StorageError) {
        // Up to date: write nothing, so that a read-only database (a standby) still opens
        // and serves reads.
        guard try storedVersion(connection) < PostgresSchema.currentVersion else { return }
        while true {
            var done = false
            try transaction(connection, begin: "BEGIN") { () throws(StorageError) in
                try connection.run("SELECT pg_advisory_xact_lock($1)", [.integer(PostgresSchema.migrationLock)])
                try connection.execute(PostgresSchema.migrationsTable)
                // Read under the lock: another instance may have migrated meanwhile.
                let version = try storedVersion(connection)
                guard let migration = PostgresSchema.migrations.first(where: { $0.version > version }) else {
                    done = true
                    return
                }
                try connection.execute(migration.sql)
                try connection.run(
                    "INSERT INTO schema_migrations (version, applied_at) VALUES ($1, now())", [.integer(migration.version)])
            }
            if done { return }
        }
    }

    /// The highest applied migration, 0 for a database without `schema_migrations`.
    ///
    /// - Throws: `.newerSchema` when it is above what this build knows (before anything is written).
    static func storedVersion(_ connection: PostgresConnection) throws(StorageError) -> Int64 {
        var exists = false
        try connection.run("SELECT to_regclass('schema_migrations') IS NOT NULL") { row throws(StorageError) in exists = row.bool(0) }
        guard exists else { return 0 }
        var version: Int64 = 0
        try connection.run("SELECT coalesce(max(version), 0) FROM schema_migrations") { row throws(StorageError) in
            version = row.integer(0)
        }
        if version > PostgresSchema.currentVersion {
            throw StorageError(
                .newerSchema,
                message:
                    "\(connection.location) has schema version \(version), but this aabridge knows only up to \(PostgresSchema.currentVersion); run the newer aabridge (the database was not changed)"
            )
        }
        return version
    }

    // MARK: Notifications

    /// Every accessory a call changes, sorted.
    static func touched(_ writes: [StorageWrite], sources: [BluetoothAddress: [BluetoothAddress]]) -> [BluetoothAddress] {
        Set(sources.keys).union(writes.compactMap(\.accessory)).sorted()
    }

    /// `"<origin>:<ID>,<ID>,..."`, split so that each payload stays below ``maximumPayloadBytes``.
    static func notificationPayloads(origin: String, accessories: [BluetoothAddress]) -> [String] {
        var payloads: [String] = []
        var current = ""
        for id in accessories {
            let hex = id.topicID
            if !current.isEmpty && current.utf8.count + 1 + hex.utf8.count >= maximumPayloadBytes {
                payloads.append(current)
                current = ""
            }
            current += current.isEmpty ? "\(origin):\(hex)" : ",\(hex)"
        }
        if !current.isEmpty { payloads.append(current) }
        return payloads
    }
}
