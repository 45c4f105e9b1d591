/// The `cluster:` section: several bridges sharing one PostgreSQL database (docs/scaling.md).
public struct ClusterConfiguration: Hashable, Sendable {
    /// Whether this bridge is one of several sharing the database (needs `storage.backend: postgresql`).
    public var enabled: Bool
    /// This instance's name, unique among the live instances: its partitions' owner in
    /// `cluster_partitions`, the `instance` of its decisions, responses and states, and its
    /// `bridge/instances/<instance>` topic.
    public var instance: String
    /// How many partitions the accessories are spread over; every instance must use the same.
    public var partitions: Int

    /// The most partitions a cluster may have: each is an advisory lock held on the session.
    public static let maximumPartitions = 4_096

    /// Creates the section; off by default, the instance named after the host, 64 partitions.
    public init(hostname: String, enabled: Bool = false, partitions: Int = 64) {
        self.enabled = enabled
        self.instance = hostname
        self.partitions = partitions
    }
}
