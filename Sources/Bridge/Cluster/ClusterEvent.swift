import AccessoryKit

/// What ``ClusterMembership`` tells the runtime's loop.
enum ClusterEvent: Sendable, Hashable {
    /// The partitions held now, each with its epoch, and the live instances (sorted), sent
    /// whenever either changed. Partitions missing from `held` that were held before are
    /// lost: the database session ended, or they were handed over after ``releasing(_:)``.
    case ownership(held: [Int: Int64], members: [String])
    /// Instances joined that should hold these partitions: stop working on them, store what
    /// waits, then call ``ClusterMembership/released(_:)``, which unlocks them for the new owner.
    case releasing(Set<Int>)
    /// Other instances committed changes to these accessories (PostgreSQL notifications).
    case changed(Set<BluetoothAddress>)
    /// The runtime's own: partitions held could not be loaded from storage; try the latest
    /// holdings again.
    case loadAgain
}
