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
    /// Each source's route as the broker holds it (`<base>/source/+/route`, whoever published
    /// it): source -> the accessory it goes to; absent when it is `fallback`.
    var routes: [BluetoothAddress: BluetoothAddress] = [:]
    /// The live instances, sorted, as the membership last saw them.
    var members: [String] = []
}
