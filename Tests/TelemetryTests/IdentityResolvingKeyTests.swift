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

    @Test(arguments: ["", "ec0234a357c8ad05341010a60a397d9", "ec0234a357c8ad05341010a60a397d9b00", "zz0234a357c8ad05341010a60a397d9b"])
    func rejectsMalformedKeys(_ hex: String) {
        #expect(IdentityResolvingKey(hex: hex) == nil)
    }
}
