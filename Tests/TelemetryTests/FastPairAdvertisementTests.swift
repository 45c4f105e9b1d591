import AccessoryKit
import TestSupport
import Testing

@testable import Telemetry

/// Fast Pair service data (UUID 0xFE2C), with vectors written byte by byte from Google's pages
/// (cited in `FastPairAdvertisement.swift`): "Provider Advertising signal", "Battery
/// Notification" and "Audio Switch". Filter and salt bytes are arbitrary: nothing checks them.
@Suite struct FastPairAdvertisementTests {
    typealias Layout = FastPairAdvertisement.UnknownLayout

    /// Version and flags `0bVVVVFFFF`: version 0, no flags.
    static let header: [UInt8] = [0x00]
    /// Account key filter for one account key: s = (uint8)(1.2 * 1) + 3 = 4 bytes, type 0b0000
    /// (show UI indication): `0b0100_0000`.
    static let filterShown: [UInt8] = [0b0100_0000, 0x0A, 0x0B, 0x0C, 0x0D]
    /// The same filter, type 0b0010 (hide UI indication): `0b0100_0010`.
    static let filterHidden: [UInt8] = [0b0100_0010, 0x0A, 0x0B, 0x0C, 0x0D]
    /// Salt, length 2, type 0b0001: `0b0010_0001`.
    static let salt: [UInt8] = [0b0010_0001, 0xC3, 0x5A]
    /// Battery, 3 values, type 0b0011 (show): `0b0011_0011`; left 85 % (0b0_1010101), right
    /// 100 % charging (0b1_1100100), case unknown (0b0_1111111).
    static let batteryShown: [UInt8] = [0b0011_0011, 0b0101_0101, 0b1110_0100, 0b0111_1111]
    /// Battery, type 0b0100 (hide): `0b0011_0100`; left 0 % charging, right unknown charging
    /// (0b1_1111111), case 42 %.
    static let batteryHidden: [UInt8] = [0b0011_0100, 0b1000_0000, 0b1111_1111, 42]

    static func decode(_ parts: [UInt8]...) throws(Layout) -> FastPairAdvertisement {
        try FastPairAdvertisement(serviceData: parts.flatMap { $0 })
    }

    static func layout(_ parts: [UInt8]...) -> Layout? {
        do {
            _ = try FastPairAdvertisement(serviceData: parts.flatMap { $0 })
            return nil
        } catch {
            return error
        }
    }

    // MARK: Discoverable

    @Test("discoverable: 3 bytes are the 24-bit model ID, big-endian")
    func modelID() throws {
        #expect(try Self.decode([0x2D, 0x7A, 0x23]) == .modelID(0x2D7A23))
        #expect(try Self.decode([0x00, 0x00, 0x06]) == .modelID(0x000006), "leading zeros are part of the ID")
        #expect(try Self.decode([0xFF, 0xFF, 0xFF]) == .modelID(0xFFFFFF))
        #expect(try Self.decode([0x2D, 0x7A, 0x23]).battery == nil)
    }

    @Test("LE Audio sharing: a model ID field (0bLLLL0111) and a capability map (0bLLLL1000) are the model ID")
    func leAudioSharing() throws {
        #expect(try Self.decode(Self.header, [0b0011_0111, 0x2D, 0x7A, 0x23], [0b0001_1000, 0b0000_0010]) == .modelID(0x2D7A23))
        #expect(try Self.decode(Self.header, [0b0011_0111, 0x2D, 0x7A, 0x23]) == .modelID(0x2D7A23))
    }

    // MARK: Account data

    @Test("not discoverable: filter (show) and salt, no battery")
    func accountDataShown() throws {
        let decoded = try Self.decode(Self.header, Self.filterShown, Self.salt)
        #expect(decoded == .accountData(.init(hasAccountKeys: true, showsIndication: true)))
        #expect(decoded.battery == nil)
    }

    @Test("filter type 0b0010 hides the UI indication")
    func accountDataHidden() throws {
        #expect(
            try Self.decode(Self.header, Self.filterHidden, Self.salt) == .accountData(.init(hasAccountKeys: true, showsIndication: false)))
    }

    @Test("two account keys: a filter of (uint8)(1.2 * 2) + 3 = 5 bytes")
    func twoAccountKeys() throws {
        let filter: [UInt8] = [0b0101_0000, 1, 2, 3, 4, 5]
        #expect(try Self.decode(Self.header, filter, Self.salt) == .accountData(.init(hasAccountKeys: true, showsIndication: true)))
    }

    @Test("the older specification's 1-byte salt (0b0001_0001)")
    func oneByteSalt() throws {
        let decoded = try Self.decode(Self.header, Self.filterShown, [0b0001_0001, 0x77], Self.batteryShown)
        #expect(decoded.battery?.battery == Battery(left: 85, right: 100))
    }

    @Test("empty account key list: 0x00 0x00 (a filter of length 0), no salt needed")
    func emptyAccountData() throws {
        #expect(try Self.decode([0x00, 0x00]) == .accountData(.init(hasAccountKeys: false, showsIndication: true)))
        #expect(try Self.decode([0x00, 0x00], Self.salt) == .accountData(.init(hasAccountKeys: false, showsIndication: true)))
        let withBattery = try Self.decode([0x00, 0x00], Self.batteryShown)
        #expect(withBattery.battery?.battery == Battery(left: 85, right: 100))
    }

    // MARK: Battery

    @Test("battery (show): left 85 %, right 100 % charging, case unknown")
    func batteryShown() throws {
        let battery = try #require(try Self.decode(Self.header, Self.filterShown, Self.salt, Self.batteryShown).battery)
        #expect(
            battery
                == FastPairBattery(
                    leftBattery: 85, rightBattery: 100, caseBattery: nil, leftCharging: false, rightCharging: true, caseCharging: false,
                    showsIndication: true))
        #expect(battery.battery == Battery(left: 85, right: 100, chargingCase: nil))
        #expect(battery.battery?.main == nil, "no single-battery level: Fast Pair reports buds and case")
    }

    @Test("battery (hide): left 0 % charging, right unknown but charging (0bS1111111), case 42 %")
    func batteryHidden() throws {
        let decoded = try Self.decode(Self.header, Self.filterHidden, Self.salt, Self.batteryHidden)
        guard case .accountData(let account) = decoded else {
            Issue.record("not account data: \(decoded)")
            return
        }
        #expect(!account.showsIndication)
        let battery = try #require(account.battery)
        #expect(!battery.showsIndication)
        #expect(battery.leftBattery == 0 && battery.leftCharging)
        #expect(battery.rightBattery == nil && battery.rightCharging, "unknown level, the status bit still read")
        #expect(battery.caseBattery == 42 && !battery.caseCharging)
        #expect(battery.battery == Battery(left: 0, chargingCase: 42))
    }

    @Test("every level is unknown (0x7F, 0xFF): no battery for the engine, so nothing published is erased")
    func allUnknown() throws {
        let battery = try #require(try Self.decode(Self.header, Self.filterShown, Self.salt, [0b0011_0011, 0x7F, 0xFF, 0x7F]).battery)
        #expect(battery.leftBattery == nil && battery.rightBattery == nil && battery.caseBattery == nil)
        #expect(!battery.leftCharging && battery.rightCharging && !battery.caseCharging)
        #expect(battery.battery == nil)
    }

    @Test("levels 0 and 100 with and without the charging bit")
    func levelBounds() throws {
        let battery = try #require(try Self.decode(Self.header, Self.filterShown, Self.salt, [0b0011_0011, 0x00, 0x64, 0xE4]).battery)
        #expect(battery.battery == Battery(left: 0, right: 100, chargingCase: 100))
        #expect(!battery.leftCharging && !battery.rightCharging && battery.caseCharging)
    }

    @Test("Audio Switch: version 1 with a connection status (0bLLLL0101) and random resolvable data (0bLLLL0110), skipped")
    func audioSwitch() throws {
        let connection: [UInt8] = [0b0011_0101, 0b0100_0011, 0x00, 0x01]
        let resolvable: [UInt8] = [0b1000_0110, 1, 2, 3, 4, 5, 6, 7, 8]
        let decoded = try Self.decode([0b0001_0000], Self.filterShown, Self.salt, Self.batteryShown, resolvable)
        #expect(decoded.battery?.battery == Battery(left: 85, right: 100))
        let withStatus = try Self.decode([0b0001_0000], Self.filterShown, Self.salt, connection, Self.batteryHidden)
        #expect(withStatus.battery?.battery == Battery(left: 0, chargingCase: 42))
    }

    // MARK: Unknown layouts

    @Test("unknown layouts: each reason, from bytes that break one rule of the pages")
    func unknownLayouts() {
        #expect(Self.layout([]) == .empty)
        #expect(Self.layout([0b0010_0000], Self.filterShown, Self.salt) == .unsupportedVersion(2))
        #expect(Self.layout([0b1111_0000, 0x00]) == .unsupportedVersion(15))
        #expect(Self.layout([0b0000_0001], Self.filterShown, Self.salt) == .reservedFlags(1))
        #expect(Self.layout([0b0000_1000, 0x00]) == .reservedFlags(8))
        // A field longer than what is left: a filter of 4 with 3 bytes after its header.
        #expect(Self.layout(Self.header, [0b0100_0000, 1, 2, 3]) == .fieldOverrun(type: 0, length: 4, available: 3))
        #expect(
            Self.layout(Self.header, Self.filterShown, Self.salt, [0b0011_0011, 0x10]) == .fieldOverrun(type: 3, length: 3, available: 1))
        #expect(Self.layout(Self.header, Self.filterShown, Self.salt, [0b1001_0000]) == .fieldOverrun(type: 0, length: 9, available: 0))
        // Types 0b1001...0b1111 are defined nowhere.
        #expect(Self.layout(Self.header, [0b0010_1001, 0xAB, 0xCD]) == .unknownFieldType(9))
        #expect(Self.layout(Self.header, Self.filterShown, Self.salt, [0b0000_1111]) == .unknownFieldType(15))
        // Once each: the filter (either type), the salt, the battery (either type).
        #expect(Self.layout(Self.header, Self.filterShown, Self.salt, Self.salt) == .repeatedField(1))
        #expect(Self.layout(Self.header, Self.filterShown, Self.filterHidden, Self.salt) == .repeatedField(2))
        #expect(Self.layout(Self.header, Self.filterShown, Self.salt, Self.batteryShown, Self.batteryHidden) == .repeatedField(4))
        // The filter comes first; there must be one.
        #expect(Self.layout(Self.header, Self.salt, Self.filterShown) == .unexpectedFirstField(1))
        #expect(Self.layout(Self.header, Self.salt, Self.batteryShown) == .unexpectedFirstField(1))
        #expect(Self.layout(Self.header) == .unexpectedFirstField(nil))
        #expect(Self.layout([0x00, 0x00, 0x00, 0x00]) == .repeatedField(0), "two empty filters")
        // Account keys need their salt.
        #expect(Self.layout(Self.header, Self.filterShown) == .missingSalt)
        #expect(Self.layout(Self.header, Self.filterShown, Self.batteryShown) == .missingSalt)
        #expect(Self.layout(Self.header, Self.filterShown, [0b0011_0001, 1, 2, 3]) == .saltLength(3))
        #expect(Self.layout(Self.header, Self.filterShown, [0b0000_0001]) == .saltLength(0))
        // Battery: exactly 3 values, each level 0...100 or 0x7F.
        #expect(Self.layout(Self.header, Self.filterShown, Self.salt, [0b0010_0011, 50, 50]) == .batteryLength(2))
        #expect(Self.layout(Self.header, Self.filterShown, Self.salt, [0b0100_0100, 50, 50, 50, 50]) == .batteryLength(4))
        #expect(Self.layout(Self.header, Self.filterShown, Self.salt, [0b0011_0011, 101, 50, 50]) == .batteryValue(101))
        #expect(Self.layout(Self.header, Self.filterShown, Self.salt, [0b0011_0011, 50, 0xE5, 50]) == .batteryValue(0xE5))
        #expect(Self.layout(Self.header, Self.filterShown, Self.salt, [0b0011_0011, 50, 50, 0x7E]) == .batteryValue(0x7E))
        // LE Audio fields and account data do not mix; the model ID is 3 bytes and comes first.
        #expect(Self.layout(Self.header, [0b0011_0111, 1, 2, 3], Self.filterShown, Self.salt) == .mixedFields)
        #expect(Self.layout(Self.header, Self.filterShown, Self.salt, [0b0001_1000, 0x01]) == .mixedFields)
        #expect(Self.layout(Self.header, [0b0010_0111, 1, 2]) == .modelIDLength(2))
        #expect(Self.layout(Self.header, [0b0001_1000, 0x01], [0b0011_0111, 1, 2, 3]) == .unexpectedFirstField(8))
        // (Four bytes: three would be a discoverable model ID.)
        #expect(Self.layout(Self.header, [0b0010_1000, 0x01, 0x02]) == .unexpectedFirstField(8))
    }

    @Test("the shipped example product's service data 00aabbcc is not a Fast Pair layout")
    func acmeExample() {
        // 0xAA: a field of 10 bytes (type 10) with 2 bytes left.
        #expect(Self.layout([0x00, 0xAA, 0xBB, 0xCC]) == .fieldOverrun(type: 0x0A, length: 10, available: 2))
        #expect(Self.layout([0x00, 0xAA, 0xBB, 0xCC])?.description == "field type 10 of 10 bytes runs past the end (2 left)")
    }

    // MARK: Any bytes

    @Test("any byte string of 0...40 bytes decodes or throws, and what decodes is within the specification")
    func anyBytes() {
        var generator = SplitMix64(seed: 0xFA57_9A12)
        let edges: [UInt8] = [0x00, 0x01, 0x0F, 0x10, 0x11, 0x21, 0x33, 0x34, 0x40, 0x64, 0x65, 0x7E, 0x7F, 0x80, 0xE4, 0xF0, 0xFF]
        var decoded = 0
        for length in 0...40 {
            var inputs: [[UInt8]] = edges.map { [UInt8](repeating: $0, count: length) }
            for _ in 0..<300 {
                inputs.append((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
                inputs.append((0..<length).map { _ in edges.randomElement(using: &generator) ?? 0 })
                // A valid prefix, then noise: exercises the fields after the filter and salt.
                let prefix = Self.header + Self.filterShown + Self.salt
                inputs.append(Array((prefix + (0..<length).map { _ in edges.randomElement(using: &generator) ?? 0 }).prefix(length)))
            }
            for input in inputs {
                guard let advertisement = try? FastPairAdvertisement(serviceData: input) else { continue }
                decoded += 1
                if case .modelID(let id) = advertisement { #expect(id <= 0xFF_FFFF) }
                guard let battery = advertisement.battery else { continue }
                for level in [battery.leftBattery, battery.rightBattery, battery.caseBattery] {
                    #expect(level.map { (0...100).contains($0) } ?? true, "\(input)")
                }
            }
        }
        #expect(decoded > 1000, "the generator reaches decodable layouts too")
    }
}
