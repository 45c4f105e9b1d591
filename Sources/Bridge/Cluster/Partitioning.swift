import AccessoryKit

/// Which partition an accessory belongs to, and which live instance should hold each
/// partition (docs/scaling.md).
///
/// Both are built on FNV-1a 64: stable across processes, versions and machines (Swift's
/// `Hasher` is seeded per process), and cheap. The formulas are part of the cluster's
/// contract: every instance must compute the same, and `scripts/cluster-test` recomputes them.
struct Partitioning: Sendable, Hashable {
    /// How many partitions there are (`cluster.partitions`).
    let count: Int

    /// The accessory's partition: FNV-1a 64 over its six address bytes, most significant
    /// first, modulo ``count``. The identity address never rotates, so an accessory stays in
    /// its partition for life.
    func partition(of accessory: BluetoothAddress) -> Int {
        // A single bridge is one partition: asked for every output, it needs no hash.
        guard count > 1 else { return 0 }
        var hash = Self.offsetBasis
        for shift in stride(from: 40, through: 0, by: -8) {
            hash = Self.mix(hash, UInt8(truncatingIfNeeded: accessory.rawValue >> UInt64(shift)))
        }
        return Int(hash % UInt64(count))
    }

    /// Rendezvous (highest random weight) hashing: the instance among `members` with the
    /// largest weight for `partition`. When an instance joins or leaves, only the partitions
    /// it wins (or won) change hands, about 1/N of them; the others keep their owner.
    /// Ties, which need equal 64-bit hashes, go to the smaller name.
    static func owner(of partition: Int, among members: [String]) -> String? {
        var best: (name: String, weight: UInt64)?
        for member in members {
            let weight = Self.weight(member, partition)
            if let current = best, current.weight > weight || (current.weight == weight && current.name < member) { continue }
            best = (member, weight)
        }
        return best?.name
    }

    /// The partitions `instance` should hold while `members` (it among them) are live.
    func partitions(of instance: String, among members: [String]) -> Set<Int> {
        Set((0..<count).filter { Self.owner(of: $0, among: members) == instance })
    }

    /// FNV-1a 64 over the instance name's UTF-8, a `/`, and the partition as 4 bytes
    /// big-endian, then MurmurHash3's 64-bit finalizer. Without the finalizer the weights of
    /// one partition differ only in their low bits' products, and one name won all 64
    /// partitions out of three.
    static func weight(_ instance: String, _ partition: Int) -> UInt64 {
        var hash = offsetBasis
        for byte in instance.utf8 { hash = mix(hash, byte) }
        hash = mix(hash, UInt8(ascii: "/"))
        for shift in stride(from: 24, through: 0, by: -8) { hash = mix(hash, UInt8(truncatingIfNeeded: partition >> shift)) }
        hash ^= hash >> 33
        hash &*= 0xff51_afd7_ed55_8ccd
        hash ^= hash >> 33
        hash &*= 0xc4ce_b9fe_1a85_ec53
        hash ^= hash >> 33
        return hash
    }

    private static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    private static let prime: UInt64 = 0x100_0000_01b3

    private static func mix(_ hash: UInt64, _ byte: UInt8) -> UInt64 { (hash ^ UInt64(byte)) &* prime }
}
