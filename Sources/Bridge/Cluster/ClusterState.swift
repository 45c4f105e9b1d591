import AccessoryKit

/// The runtime's side of cluster mode: the membership thread and what it last said.
struct ClusterState {
    /// The thread holding this instance's PostgreSQL session and locks (nil in tests that
    /// post ``ClusterEvent``s themselves).
    var membership: ClusterMembership?
    /// What this instance works on: the partitions held and loaded from storage.
    var ownership: ClusterOwnership
    /// The partitions the membership last said are held (a partition whose state could not
    /// be loaded yet is here but not in ``ownership``).
    var reported: [Int: Int64] = [:]
    /// The live instances, sorted, as the membership last saw them.
    var members: [String] = []
}
