/// The runtime's side of cluster mode: the membership thread and what it last said.
struct ClusterState {
    /// The thread holding this instance's PostgreSQL session and locks (nil in tests that
    /// post ``ClusterEvent``s themselves).
    var membership: ClusterMembership?
    var ownership: ClusterOwnership
    /// The live instances, sorted, as the membership last saw them.
    var members: [String] = []
}
