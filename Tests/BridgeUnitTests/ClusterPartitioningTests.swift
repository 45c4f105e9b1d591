import AccessoryKit
import Testing

@testable import Bridge

/// The two hashes of cluster mode are a contract between instances (and with
/// scripts/cluster-test, which recomputes them in Python): these values must never change.
@Suite("Cluster partitioning (FNV-1a, rendezvous)")
struct ClusterPartitioningTests {
    @Test("an accessory's partition is FNV-1a 64 of its address bytes modulo the count, the same in every process")
    func partitionOfAnAccessory() throws {
        let partitioning = Partitioning(count: 64)
        #expect(partitioning.partition(of: try #require(BluetoothAddress("A1:B2:C3:D4:E5:F6"))) == 58)
        #expect(partitioning.partition(of: try #require(BluetoothAddress("00:00:00:00:00:01"))) == 10)
        #expect(partitioning.partition(of: try #require(BluetoothAddress("FF:FF:FF:FF:FF:FF"))) == 47)
        #expect(Partitioning(count: 1).partition(of: try #require(BluetoothAddress("A1:B2:C3:D4:E5:F6"))) == 0)
    }

    @Test("rendezvous weights are FNV-1a 64 of name/partition with MurmurHash3's finalizer")
    func weights() {
        #expect(Partitioning.weight("a", 0) == 10_402_776_913_116_952_670)
        #expect(Partitioning.weight("b", 7) == 1_548_265_106_365_999_568)
        let owners = (0..<64).map { Partitioning.owner(of: $0, among: ["a", "b", "c"]) ?? "-" }.joined()
        #expect(owners == "abbcacbcbbacbbbaccccbabbcacaacaababbccacaaaaaaabcbcacccabaaacbab")
    }

    @Test("partitions spread over the instances, each held by exactly one")
    func spread() {
        let partitioning = Partitioning(count: 64)
        let members = ["a", "b", "c"]
        let shares = members.map { partitioning.partitions(of: $0, among: members) }
        #expect(shares.map(\.count).reduce(0, +) == 64)
        #expect(Set(shares.flatMap { $0 }).count == 64, "disjoint and covering")
        for share in shares { #expect((14...30).contains(share.count), "a fair share: \(shares.map(\.count))") }
        #expect(Partitioning.owner(of: 3, among: []) == nil)
    }

    @Test("an instance leaving moves only its own partitions; coming back takes back exactly those")
    func minimalMovement() {
        let partitioning = Partitioning(count: 64)
        let all = ["a", "b", "c"]
        let before = Dictionary(uniqueKeysWithValues: (0..<64).map { ($0, Partitioning.owner(of: $0, among: all)) })
        let after = Dictionary(uniqueKeysWithValues: (0..<64).map { ($0, Partitioning.owner(of: $0, among: ["a", "c"])) })
        for partition in 0..<64 where before[partition] != "b" {
            #expect(after[partition] == before[partition], "partition \(partition) stayed with its owner")
        }
        #expect(partitioning.partitions(of: "b", among: all).allSatisfy { after[$0] != "b" })
        let back = Dictionary(uniqueKeysWithValues: (0..<64).map { ($0, Partitioning.owner(of: $0, among: ["c", "b", "a"])) })
        #expect(back == before, "the order of the member list does not matter, and b takes back exactly its share")
    }
}
