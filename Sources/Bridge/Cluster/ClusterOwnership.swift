import AccessoryKit

/// What this instance of a cluster holds now: its partitions, each with the epoch it was
/// taken at (docs/scaling.md). A value: the membership thread computes it, the loop
/// replaces its copy when a ``ClusterEvent`` says so.
///
/// An accessory is this instance's to change, publish and answer for only while it holds
/// the accessory's partition's advisory lock; bridge-wide work (the picker, `health`, the
/// bridge topics) belongs to whoever holds partition 0.
struct ClusterOwnership: Sendable, Hashable {
    /// This instance's name (`cluster.instance`).
    let instance: String
    let partitioning: Partitioning
    /// The partitions held, each with its epoch: `cluster_partitions.epoch` after this
    /// instance took it, higher than that of every earlier owner.
    var held: [Int: Int64] = [:]

    init(instance: String, partitions: Int, held: [Int: Int64] = [:]) {
        self.instance = instance
        self.partitioning = Partitioning(count: partitions)
        self.held = held
    }

    /// Whether the accessory's partition is held.
    func owns(_ accessory: BluetoothAddress) -> Bool {
        held[partitioning.partition(of: accessory)] != nil
    }

    /// The epoch the accessory's partition is held at (nil: not held).
    func epoch(of accessory: BluetoothAddress) -> Int64? {
        held[partitioning.partition(of: accessory)]
    }

    /// Whether this instance does the bridge-wide work: partition 0 is held.
    var ownsBridge: Bool { held[0] != nil }

    /// The epoch of partition 0 (bridge-wide responses carry it).
    var bridgeEpoch: Int64? { held[0] }
}
