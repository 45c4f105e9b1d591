import AccessoryKit

/// The cluster's SQL (docs/scaling.md), on the tables ``PostgresSchema`` defines
/// (`cluster_members`, `cluster_partitions`, `meta`): an instance's member row and lock, the
/// partitions' advisory locks and epochs, and other instances' change notifications. Used by
/// the runtime's membership thread on a session of its own: advisory locks belong to the
/// session, so whoever holds this connection holds the locks.
public struct PostgresClusterLocks {
    /// `pg_try_advisory_lock(partitionLockClass, partition)`: "AABR" and "AABS" as int4s, so
    /// they do not collide with another application's advisory locks on the same database.
    public static let partitionLockClass: Int32 = 0x4141_4240
    public static let memberLockClass: Int32 = 0x4141_4241

    public let connection: PostgresConnection
    /// This instance's name (`cluster.instance`).
    public let instance: String

    public init(connection: PostgresConnection, instance: String) {
        self.connection = connection
        self.instance = instance
    }

    /// Every instance must spread accessories over the same partitions; the first one to
    /// start records its count.
    /// - Returns: the count the database has recorded (this one's, when it was the first).
    public func recordPartitionCount(_ count: Int) throws(StorageError) -> String? {
        try connection.run(
            "INSERT INTO meta (key, value) VALUES ('cluster_partitions', $1) ON CONFLICT (key) DO NOTHING",
            [.text(String(count))])
        var recorded: String?
        try connection.run("SELECT value FROM meta WHERE key = 'cluster_partitions'") { row throws(StorageError) in
            recorded = row.text(0)
        }
        return recorded
    }

    /// This instance's row in `cluster_members` and its lock key (kept across restarts; a
    /// new name gets the next free key, under a table lock so two new instances never share one).
    public func register() throws(StorageError) -> Int64 {
        try connection.execute("BEGIN; LOCK TABLE cluster_members IN SHARE ROW EXCLUSIVE MODE")
        var key: Int64 = 0
        do throws(StorageError) {
            try connection.run(
                """
                INSERT INTO cluster_members (instance, lock_key, started_at, heartbeat_at)
                VALUES ($1, (SELECT coalesce(max(lock_key), 0) + 1 FROM cluster_members), now(), now())
                ON CONFLICT (instance) DO UPDATE SET started_at = now(), heartbeat_at = now()
                RETURNING lock_key
                """, [.text(instance)]
            ) { row throws(StorageError) in key = row.integer(0) }
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
        return key
    }

    /// Takes the member lock of `key`: the server releases it when the session ends, so it
    /// says the instance is live. - Returns: false when another session holds it.
    public func takeMemberLock(_ key: Int64) throws(StorageError) -> Bool {
        var locked = false
        try connection.run(
            "SELECT pg_try_advisory_lock($1::int4, $2::int4)", [.integer(Int64(Self.memberLockClass)), .integer(key)]
        ) { row throws(StorageError) in locked = row.bool(0) }
        return locked
    }

    /// Subscribes the session to other instances' commits (``PostgresStore/changesChannel``).
    public func listenForChanges() throws(StorageError) {
        try connection.execute("LISTEN \(PostgresStore.changesChannel)")
    }

    /// The heartbeat in this instance's member row (for people looking at the table; the lock
    /// is what says it is live).
    public func beat() throws(StorageError) {
        try connection.run("UPDATE cluster_members SET heartbeat_at = now() WHERE instance = $1", [.text(instance)])
    }

    /// The instances whose member lock is held: live, whatever their heartbeat says.
    public func liveMembers() throws(StorageError) -> [String] {
        var members: [String] = []
        try connection.run(
            """
            SELECT m.instance FROM cluster_members m
            WHERE EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
                AND l.classid::bigint = $1 AND l.objid::bigint = m.lock_key)
            ORDER BY m.instance
            """, [.integer(Int64(Self.memberLockClass))]
        ) { row throws(StorageError) in
            if let name = row.text(0) { members.append(name) }
        }
        return members
    }

    /// Takes `partition` when its lock is free, recording this instance as its owner with the
    /// next epoch. - Returns: the epoch, or nil when another session still holds it.
    public func take(_ partition: Int) throws(StorageError) -> Int64? {
        var locked = false
        try connection.run(
            "SELECT pg_try_advisory_lock($1::int4, $2::int4)",
            [.integer(Int64(Self.partitionLockClass)), .integer(Int64(partition))]
        ) { row throws(StorageError) in locked = row.bool(0) }
        guard locked else { return nil }
        var epoch: Int64 = 0
        try connection.run(
            """
            INSERT INTO cluster_partitions (partition, owner, epoch, since) VALUES ($1::int4, $2, 1, now())
            ON CONFLICT (partition) DO UPDATE SET owner = excluded.owner, epoch = cluster_partitions.epoch + 1, since = now()
            RETURNING epoch
            """, [.integer(Int64(partition)), .text(instance)]
        ) { row throws(StorageError) in epoch = row.integer(0) }
        return epoch
    }

    /// Releases `partition`'s lock, for the instance it is handed over to.
    public func release(_ partition: Int) throws(StorageError) {
        try connection.run(
            "SELECT pg_advisory_unlock($1::int4, $2::int4)",
            [.integer(Int64(Self.partitionLockClass)), .integer(Int64(partition))])
    }

    /// The accessories other instances committed changes to since the last call
    /// (`<origin>:<ID>,<ID>,...`; this instance's own commits are skipped).
    public func changes() throws(StorageError) -> Set<BluetoothAddress> {
        var changed = Set<BluetoothAddress>()
        for notification in try connection.notifications() where notification.channel == PostgresStore.changesChannel {
            guard let colon = notification.payload.firstIndex(of: ":") else { continue }
            guard notification.payload[..<colon] != instance else { continue }
            for id in notification.payload[notification.payload.index(after: colon)...].split(separator: ",") {
                if let address = BluetoothAddress(id) { changed.insert(address) }
            }
        }
        return changed
    }
}
