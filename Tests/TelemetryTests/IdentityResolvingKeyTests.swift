import AccessoryKit
import Testing

@testable import Telemetry

@Suite struct IdentityResolvingKeyTests {
    /// Bluetooth Core Specification, Vol 3 Part H, Appendix D.7 (ah random address hash function):
    /// IRK 0xec0234a357c8ad05341010a60a397d9b, prand 0x708194, hash 0x0dfbaa.
    static let specKey = IdentityResolvingKey(hex: "ec0234a357c8ad05341010a60a397d9b")!

    @Test func ahMatchesTheSpecificationSampleData() {
        #expect(Self.specKey.hash(prand: 0x708194) == 0x0DFBAA)
    }

    @Test func aesMatchesFIPS197() throws {
        // FIPS-197 Appendix C.1 AES-128 vector, to pin the byte order handed to libcrypto.
        let key = try #require(Hex.decode("000102030405060708090a0b0c0d0e0f"))
        let plain = try #require(Hex.decode("00112233445566778899aabbccddeeff"))
        #expect(IdentityResolvingKey.aes128Encrypt(key: key, block: plain).map { Hex.encode($0) } == "69c4e0d86a7b0430d8cdb78070b4c55a")
    }

    @Test func resolvesTheSampleAddress() throws {
        let address = try #require(BluetoothAddress("70:81:94:0D:FB:AA"))
        #expect(Self.specKey.resolves(address))
        #expect(!Self.specKey.resolves(try #require(BluetoothAddress("70:81:94:0D:FB:AB"))))
        #expect(!Self.specKey.resolves(try #require(BluetoothAddress("70:81:95:0D:FB:AA"))))
    }

    @Test func resolverPicksTheMatchingIdentity() throws {
        let other = try #require(IdentityResolvingKey(hex: "0x00112233445566778899aabbccddeeff"))
        var resolver = AddressResolver(keys: [(identity: "other", key: other), (identity: "spec", key: Self.specKey)])
        #expect(resolver.resolve(try #require(BluetoothAddress("70:81:94:0D:FB:AA"))) == "spec")
        #expect(resolver.resolve(try #require(BluetoothAddress("70:81:94:0D:FB:AB"))) == nil)
        // A hash that would match but the top bits say "not resolvable private": never resolved.
        let hash = try #require(Self.specKey.hash(prand: 0xF08194))
        let nonResolvable = BluetoothAddress(rawValue: UInt64(0xF08194) << 24 | UInt64(hash))
        #expect(resolver.resolve(nonResolvable) == nil)
    }

    @Test func resolverRemembersBothAnswersWithinItsBound() throws {
        var resolver = AddressResolver(keys: [(identity: "spec", key: Self.specKey)], cacheCapacity: 3)
        let sample = try #require(BluetoothAddress("70:81:94:0D:FB:AA"))
        #expect(resolver.resolve(sample) == "spec")
        #expect(resolver.resolve(sample) == "spec")
        #expect(resolver.cachedCount == 1)
        // Not resolvable private: neither tried nor remembered.
        #expect(resolver.resolve(try #require(BluetoothAddress("F0:81:94:0D:FB:AA"))) == nil)
        #expect(resolver.cachedCount == 1)
        // Misses are remembered too, and the cache never holds more than its capacity.
        for low: UInt64 in 1...10 {
            #expect(resolver.resolve(BluetoothAddress(rawValue: 0x4000_0000_0000 | low)) == nil)
            #expect(resolver.cachedCount <= 3)
        }
        #expect(resolver.resolve(sample) == "spec")
        // New keys forget the old answers.
        resolver.keys = []
        #expect(resolver.cachedCount == 0)
        #expect(resolver.resolve(sample) == nil)
    }

    @Test func generatedAddressesResolve() throws {
        // Round trip: build RPAs from several prands and check they resolve to this key only.
        let other = try #require(IdentityResolvingKey(hex: "ffeeddccbbaa99887766554433221100"))
        for prand: UInt32 in [0x400000, 0x5A5A5A, 0x7FFFFF, 0x412345] {
            let hash = try #require(Self.specKey.hash(prand: prand))
            let address = BluetoothAddress(rawValue: UInt64(prand) << 24 | UInt64(hash))
            #expect(Self.specKey.resolves(address))
            #expect(!other.resolves(address))
        }
    }

    @Test func reusedContextKeepsGivingTheSpecificationAnswer() {
        // One key, one context, many blocks: nothing carries over from one call to the next.
        for round in 0..<2_000 {
            #expect(Self.specKey.hash(prand: 0x708194) == 0x0DFBAA)
            // Other blocks in between, each checked against a context made for that block alone.
            let prand = UInt32(0x40_0000 | (round &* 2_654_435_761) & 0x3F_FFFF)
            let fresh = IdentityResolvingKey.aes128Encrypt(key: Self.specKey.bytes, block: Self.block(prand))
            #expect(Self.specKey.hash(prand: prand) == fresh.map(Self.low24))
        }
        // Copies share the context and answer the same.
        let copy = Self.specKey
        #expect(copy == Self.specKey && copy.hashValue == Self.specKey.hashValue)
        #expect(copy.hash(prand: 0x708194) == 0x0DFBAA)
    }

    @Test func manyKeysEachWithItsOwnContext() throws {
        // 1,000 keys with the specification key at several places: each key's reused context
        // agrees with a fresh one, and the resolver finds the specification key wherever it is.
        var state: UInt64 = 0x1234_5678
        func next() -> UInt8 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
        var keys = try (0..<1_000).map { _ in try #require(IdentityResolvingKey(bytes: (0..<16).map { _ in next() })) }
        for key in keys.prefix(50) {
            let fresh = IdentityResolvingKey.aes128Encrypt(key: key.bytes, block: Self.block(0x708194))
            #expect(key.hash(prand: 0x708194) == fresh.map(Self.low24))
        }
        let sample = try #require(BluetoothAddress("70:81:94:0D:FB:AA"))
        for position in [0, 1, 499, 999] {
            keys[position] = Self.specKey
            var resolver = AddressResolver(keys: keys.enumerated().map { (identity: $0.offset, key: $0.element) })
            #expect(resolver.resolve(sample) == position)
            #expect(resolver.resolve(sample) == position) // cached
            keys[position] = try #require(IdentityResolvingKey(bytes: (0..<16).map { _ in next() }))
        }
    }

    @Test func contextIsSafeToShareAcrossTasks() async {
        let key = Self.specKey
        let answers = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    (0..<500).allSatisfy { _ in key.hash(prand: 0x708194) == 0x0DFBAA }
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(answers == Array(repeating: true, count: 8))
    }

    @Test func aFloodOfFreshAddressesStaysWithinTheCacheBound() throws {
        var resolver = AddressResolver(keys: [(identity: "spec", key: Self.specKey)], cacheCapacity: 1_000)
        #expect(resolver.cacheCapacity == 1_000)
        var highest = 0
        for n: UInt64 in 0..<5_000 {
            // Fresh resolvable-looking addresses (top bits 0b01) that no key resolves...
            #expect(resolver.resolve(BluetoothAddress(rawValue: 0x4000_0000_0000 | n &* 0x9E37_79B9)) == nil)
            highest = max(highest, resolver.cachedCount)
            // ...and addresses that are not resolvable private, never cached at all.
            #expect(resolver.resolve(BluetoothAddress(rawValue: 0xC000_0000_0000 | n)) == nil)
        }
        #expect(highest == 1_000)
        #expect(resolver.cachedCount <= 1_000)
        // Still answers correctly after the resets.
        #expect(resolver.resolve(try #require(BluetoothAddress("70:81:94:0D:FB:AA"))) == "spec")
        // The default bound.
        #expect(AddressResolver<String>(keys: []).cacheCapacity == 10_000)
    }

    static func block(_ prand: UInt32) -> [UInt8] {
        var block = [UInt8](repeating: 0, count: 16)
        block[13] = UInt8(truncatingIfNeeded: prand >> 16)
        block[14] = UInt8(truncatingIfNeeded: prand >> 8)
        block[15] = UInt8(truncatingIfNeeded: prand)
        return block
    }

    static func low24(_ output: [UInt8]) -> UInt32 { UInt32(output[13]) << 16 | UInt32(output[14]) << 8 | UInt32(output[15]) }

    @Test(arguments: ["", "ec0234a357c8ad05341010a60a397d9", "ec0234a357c8ad05341010a60a397d9b00", "zz0234a357c8ad05341010a60a397d9b"])
    func rejectsMalformedKeys(_ hex: String) {
        #expect(IdentityResolvingKey(hex: hex) == nil)
    }
}
