/// Who may run on one PostgreSQL database: one solo bridge, or any number of cluster members,
/// never both. A session-level advisory lock on one fixed key, held on the store's connection
/// for the life of the process: a solo bridge takes it exclusively
/// (`pg_try_advisory_lock`), a cluster member shared (`pg_try_advisory_lock_shared`). Two
/// solo bridges on one database would each answer every request and overwrite each other's
/// state; a solo bridge beside a cluster would do the same to the cluster's accessories.
///
/// The server releases a session lock when the session ends, so a bridge that crashed or lost
/// its connection holds nothing. After a reconnect (a PostgreSQL restart) the store takes it
/// again before anything else; if another bridge took it meanwhile, the store refuses every
/// further call and reports it (``PostgresStore/lockLost``): the bridge exits with status 3.
public enum PostgresInstanceLock: Sendable {
    /// `cluster.enabled: false`: exclusive.
    case solo
    /// `cluster.enabled: true`: shared with the other members.
    case clusterMember

    /// The lock's key, a single `bigint` ("aabs"): the migrations' key ("aabr",
    /// ``PostgresSchema/migrationLock``) plus one; the cluster's own locks take two `int4`s,
    /// which PostgreSQL keeps apart from single-key locks.
    static let key: Int64 = 0x6161_6273

    /// Takes the lock on `connection`; false when another session holds it incompatibly.
    func take(on connection: PostgresConnection) throws(StorageError) -> Bool {
        var taken = false
        let function = self == .solo ? "pg_try_advisory_lock" : "pg_try_advisory_lock_shared"
        try connection.run("SELECT \(function)($1)", [.integer(Self.key)]) { row throws(StorageError) in taken = row.bool(0) }
        return taken
    }

    /// The refusal when ``take(on:)`` says no: who holds the lock, as `pg_stat_activity` shows
    /// them, in the words of SQLite's ``DatabaseLock``.
    func refusal(on connection: PostgresConnection) -> StorageError {
        var holders: [String] = []
        var exclusive = false
        try? connection.run(
            """
            SELECT l.mode = 'ExclusiveLock', a.application_name, coalesce(host(a.client_addr), 'a local socket'), l.pid
            FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND l.classid = 0 AND l.objid = $1
            ORDER BY l.pid LIMIT 3
            """, [.integer(Self.key)]
        ) { row throws(StorageError) in
            exclusive = exclusive || row.bool(0)
            holders.append("\(row.text(1) ?? "aabridge") from \(row.text(2) ?? "?"), server pid \(row.integer(3))")
        }
        let who = holders.isEmpty ? "" : " (\(holders.joined(separator: "; ")))"
        let message: String
        switch self {
        case .solo where !exclusive && !holders.isEmpty:
            message =
                "a cluster of aabridge instances\(who) is already running on \(connection.location); set cluster.enabled: true on this one too, or give it a database of its own"
        case .solo, .clusterMember:
            message =
                "another aabridge\(who) is already running on \(connection.location) without cluster mode; run one bridge per database, or set cluster.enabled: true on every instance"
        }
        return StorageError(.alreadyInUse, message: message)
    }
}
