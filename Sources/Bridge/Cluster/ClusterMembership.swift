import AccessoryKit
import Configuration
import Dispatch
import Storage
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// This instance's membership of the cluster (docs/scaling.md): a PostgreSQL session of its
/// own, on a thread of its own, whose advisory locks are the ownership.
///
/// - The instance's member lock says it is live: the server releases it when the session
///   ends, so a `kill -9`, a crash or a lost network ends the membership without anyone's
///   help. `cluster_members` only maps names to lock keys (and keeps a heartbeat to look at).
/// - Every turn (``turnMilliseconds``) it reads the live instances, computes by rendezvous
///   hashing which partitions are this instance's, and takes them with
///   `pg_try_advisory_lock`: a partition whose previous owner still holds it (handing it
///   over, or not yet noticed dead) is simply tried again next turn. Each take increments
///   the partition's epoch in `cluster_partitions`.
/// - Partitions that a joining instance should hold are handed over: the runtime is told
///   (``ClusterEvent/releasing(_:)``), stores what waits and calls ``released(_:)``; only
///   then is the lock released, so two instances never work on one partition.
/// - Other instances' commits arrive as notifications (`LISTEN`, sent by `PostgresStore`
///   in the committing transaction) and are passed on as ``ClusterEvent/changed(_:)``.
/// - When the session fails, every lock is gone with it: the runtime is told at once that
///   nothing is held (it stops publishing, since another instance may be taking over), and
///   the thread reconnects every second.
final class ClusterMembership: Sendable {
    /// How often the membership looks at its peers (and waits for notifications between).
    static let turnMilliseconds: Int32 = 250
    /// After (re)connecting, how long it waits before taking partitions, so that instances
    /// reconnecting together (a PostgreSQL restart) see each other first instead of one of
    /// them taking everything and handing most of it back a moment later.
    static let settle: Duration = .milliseconds(1_500)
    /// How long between attempts while PostgreSQL cannot be reached.
    static let retryMilliseconds: Int64 = 1_000

    private let url: String
    private let password: String?
    private let instance: String
    private let partitioning: Partitioning
    private let logger: BridgeLogger
    private let report: @Sendable (ClusterEvent) -> Void
    private let queue = DispatchQueue(label: "aabridge.cluster")
    private let control = Mutex(Control())

    private struct Control {
        var stopping = false
        /// Partitions the runtime has finished handing over, to unlock.
        var released: Set<Int> = []
    }

    /// The session and what it holds; only the membership's thread touches it.
    private final class Session {
        let locks: PostgresClusterLocks
        let connectedAt = ContinuousClock.now
        var held: [Int: Int64] = [:]
        var releasing: Set<Int> = []
        init(locks: PostgresClusterLocks) {
            self.locks = locks
        }
    }

    init(configuration: BridgeConfiguration, logger: BridgeLogger, report: @escaping @Sendable (ClusterEvent) -> Void) {
        url = configuration.storage.url ?? ""
        password = configuration.storage.password?.revealed
        instance = configuration.cluster.instance
        partitioning = Partitioning(count: configuration.cluster.partitions)
        self.logger = logger
        self.report = report
    }

    /// Starts the thread.
    func start() {
        queue.async { [self] in run() }
    }

    /// The runtime has stored what waited for `partitions` (after ``ClusterEvent/releasing(_:)``):
    /// their locks may go to the instances that joined.
    func released(_ partitions: Set<Int>) {
        control.withLock { $0.released.formUnion(partitions) }
    }

    /// Ends the membership: the session is closed, which releases every lock at once. Waits
    /// at most 2 s for the thread (a query to an unresponsive server may hold it); the
    /// process's exit closes the session in any case.
    func stop() async {
        control.withLock { $0.stopping = true }
        let queue = self.queue
        _ = await Deadline.run(.seconds(2)) {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                queue.async { continuation.resume() }
            }
        }
    }

    private var stopping: Bool { control.withLock { $0.stopping } }

    // MARK: - The thread

    private func run() {
        var session: Session?
        var reported: (held: [Int: Int64], members: [String]) = ([:], [])
        var failures = 0
        while !stopping {
            do throws(StorageError) {
                let current: Session
                if let session {
                    current = session
                } else {
                    current = try connect()
                    session = current
                    if failures > 0 { logger.info("cluster: connected to PostgreSQL again as instance '\(instance)'") }
                    failures = 0
                }
                let (owned, members, changed) = try turn(current)
                if owned != reported.held || members != reported.members {
                    reported = (owned, members)
                    report(.ownership(held: owned, members: members))
                }
                if !changed.isEmpty { report(.changed(changed)) }
                wait(for: current.locks.connection.socket, milliseconds: Self.turnMilliseconds)
            } catch {
                session?.locks.connection.close()
                session = nil
                control.withLock { $0.released.removeAll() }
                if !reported.held.isEmpty || !reported.members.isEmpty {
                    // The locks went with the session: whatever this instance held may already
                    // be another's. Stop at once, before anything more is published as owner.
                    reported = ([:], [])
                    report(.ownership(held: [:], members: []))
                }
                // Said once per outage, then every minute.
                if failures % 60 == 0 {
                    logger.error("cluster: \(error.message); holding no partition, retrying every second")
                }
                failures += 1
                sleep(milliseconds: Self.retryMilliseconds)
            }
        }
        session?.locks.connection.close()
    }

    /// One look at the peers: heartbeat, hand-overs, takes, notifications.
    private func turn(_ session: Session) throws(StorageError) -> (owned: [Int: Int64], members: [String], changed: Set<BluetoothAddress>) {
        let locks = session.locks
        try locks.beat()
        let members = try locks.liveMembers()
        for partition in control.withLock({ control in
            defer { control.released.removeAll() }
            return control.released
        }) {
            try locks.release(partition)
            session.held[partition] = nil
            session.releasing.remove(partition)
        }
        let desired = partitioning.partitions(of: instance, among: members)
        if ContinuousClock.now - session.connectedAt >= Self.settle {
            for partition in desired.subtracting(session.held.keys).sorted() {
                if let epoch = try locks.take(partition) { session.held[partition] = epoch }
            }
        }
        let leaving = Set(session.held.keys).subtracting(desired).subtracting(session.releasing)
        if !leaving.isEmpty {
            session.releasing.formUnion(leaving)
            report(.releasing(leaving))
        }
        let owned = session.held.filter { !session.releasing.contains($0.key) }
        return (owned, members, try locks.changes())
    }

    /// Opens the session: checks the partition count, registers the instance, takes its
    /// member lock and listens for other instances' changes.
    private func connect() throws(StorageError) -> Session {
        let connection = try PostgresConnection(url: url, password: password, applicationName: "aabridge-cluster-\(instance)")
        let locks = PostgresClusterLocks(connection: connection, instance: instance)
        do throws(StorageError) {
            try checkPartitionCount(locks)
            guard try locks.takeMemberLock(try locks.register()) else {
                throw StorageError(
                    .alreadyInUse,
                    message:
                        "another live aabridge is already instance '\(instance)' of this cluster; give each instance its own cluster.instance"
                )
            }
            try locks.listenForChanges()
        } catch {
            connection.close()
            throw error
        }
        return Session(locks: locks)
    }

    /// Every instance must spread accessories over the same partitions; the first one to
    /// start records its count.
    private func checkPartitionCount(_ locks: PostgresClusterLocks) throws(StorageError) {
        let recorded = try locks.recordPartitionCount(partitioning.count)
        guard recorded == String(partitioning.count) else {
            throw StorageError(
                .other(0),
                message:
                    "cluster.partitions is \(partitioning.count) here but \(recorded ?? "unknown") in the database; every instance must use the same"
            )
        }
    }

    // MARK: - Waiting

    /// Waits until the session's socket has something (a notification) or the time is up.
    private func wait(for socket: Int32, milliseconds: Int32) {
        guard socket >= 0 else { return sleep(milliseconds: Int64(milliseconds)) }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        _ = poll(&descriptor, 1, milliseconds)
    }

    private func sleep(milliseconds: Int64) {
        var left = milliseconds
        while left > 0, !stopping {
            let step = min(left, 100)
            usleep(UInt32(step * 1000))
            left -= step
        }
    }
}
