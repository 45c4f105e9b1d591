import AccessoryKit
import Testing

@testable import Telemetry

/// Vectors are written from the layout documented in ProximityPairingDecryption.swift: a
/// plaintext, encrypted with a known key, inside a full proximity-pairing message.
@Suite struct ProximityPairingDecryptionTests {
    /// FIPS-197 Appendix C.1's key, which is also the key of the known-answer test.
    static let key = AccessoryKey(bytes: (0..<16).map { UInt8($0) })!
    static let otherKey = AccessoryKey(bytes: [UInt8](repeating: 0xA5, count: 16))!

    /// A plaintext: byte 0 unknown, level bytes 1...3, then bytes as observed on a device.
    static func plaintext(_ primary: UInt8, _ secondary: UInt8, _ chargingCase: UInt8) -> [UInt8] {
        [0x04, primary, secondary, chargingCase, 0x2D, 0x73, 0xC2, 0x05, 0x5B, 0x00, 0x03, 0xF2, 0xB2, 0xCB, 0x4B, 0x10]
    }

    /// Manufacturer data of AirPods Pro: type 0x07, length 25, prefix, model, status, battery
    /// nibbles (low = broadcasting bud), charging nibble + case nibble, lid, colour, 0x00, then
    /// the 16 encrypted bytes.
    static func message(status: UInt8, battery: UInt8, chargingAndCase: UInt8, ciphertext: [UInt8]) throws -> ProximityPairing {
        let raw: [UInt8] = [0x4C, 0x00, 0x07, 0x19, 0x01, 0x0E, 0x20, status, battery, chargingAndCase, 0x31, 0x00, 0x00] + ciphertext
        return try ProximityPairing(manufacturerData: try #require(ManufacturerData(raw: raw)))
    }

    static func message(
        status: UInt8 = 0x20, battery: UInt8 = 0x65, chargingAndCase: UInt8 = 0x0A, plaintext: [UInt8]
    ) throws -> ProximityPairing {
        let ciphertext = try #require(ProximityPairing.encrypt(plaintext: plaintext, with: key))
        return try message(status: status, battery: battery, chargingAndCase: chargingAndCase, ciphertext: ciphertext)
    }

    @Test("levels come in 1 % steps; byte 1 is the left bud when status bit 0x20 says the left bud broadcasts")
    func leftBroadcasting() throws {
        // Clear levels: left (broadcasting) 50, right 60, case 100.
        let pairing = try Self.message(status: 0x20, battery: 0x65, plaintext: Self.plaintext(57, 63, 100))
        let status = try #require(pairing.decrypted(with: Self.key))
        #expect(status.leftBattery == 57 && status.rightBattery == 63 && status.caseBattery == 100)
        #expect(
            status.battery
                == Battery(left: 57, right: 63, chargingCase: 100, leftCharging: false, rightCharging: false, caseCharging: false))
    }

    @Test("byte 1 is the right bud when status bit 0x20 is clear (the right bud broadcasts)")
    func rightBroadcasting() throws {
        // Clear levels: right (broadcasting) 50, left 60.
        let pairing = try Self.message(status: 0x00, battery: 0x65, plaintext: Self.plaintext(57, 63, 100))
        let status = try #require(pairing.decrypted(with: Self.key))
        #expect(status.rightBattery == 57 && status.leftBattery == 63 && status.caseBattery == 100)
    }

    @Test("a single battery is byte 1, the broadcasting side's, with its charging bit; flipped or not")
    func singleBattery() throws {
        let right = try Self.message(status: 0x00, battery: 0x65, plaintext: Self.plaintext(0x80 | 57, 63, 100))
        #expect(try #require(right.decrypted(with: Self.key)).battery(.single) == Battery(main: 57, charging: true))
        let left = try Self.message(status: 0x20, battery: 0x65, plaintext: Self.plaintext(43, 63, 100))
        #expect(try #require(left.decrypted(with: Self.key)).battery(.single) == Battery(main: 43, charging: false))
    }

    @Test("bit 0x80 of a level byte is its charging flag, and is not part of the level")
    func chargingFlags() throws {
        let left = try Self.message(status: 0x20, plaintext: Self.plaintext(0x80 | 57, 63, 0x80 | 100))
        let fromLeft = try #require(left.decrypted(with: Self.key))
        #expect(fromLeft.leftCharging == true && fromLeft.rightCharging == false && fromLeft.caseCharging == true)
        #expect(fromLeft.leftBattery == 57 && fromLeft.caseBattery == 100)
        let right = try Self.message(status: 0x00, plaintext: Self.plaintext(0x80 | 57, 63, 100))
        let fromRight = try #require(right.decrypted(with: Self.key))
        #expect(fromRight.rightCharging == true && fromRight.leftCharging == false && fromRight.caseCharging == false)
    }

    @Test("the key is used as given (most significant byte first) in one block of AES-128 ECB (FIPS-197 C.1)")
    func knownAnswer() throws {
        // FIPS-197 C.1: key 000102...0f, plaintext 00112233445566778899aabbccddeeff. Its bytes
        // 1...3 read as levels 17, 34 and 51; the clear nibbles say 10, 30 and 50.
        let ciphertext = try #require(Hex.decode("69c4e0d86a7b0430d8cdb78070b4c55a"))
        let pairing = try Self.message(status: 0x20, battery: 0x31, chargingAndCase: 0x05, ciphertext: ciphertext)
        #expect(
            pairing.decrypted(with: Self.key)
                == DecryptedProximityStatus(
                    leftBattery: 17, rightBattery: 34, caseBattery: 51, leftCharging: false, rightCharging: false, caseCharging: false))
        let reversed = try #require(AccessoryKey(bytes: Self.key.bytes.reversed()))
        #expect(pairing.decrypted(with: reversed)?.leftBattery != 17)
        #expect(
            ProximityPairing.encrypt(plaintext: try #require(Hex.decode("00112233445566778899aabbccddeeff")), with: Self.key)
                == ciphertext)
    }

    @Test("a payload encrypted with another key does not decrypt consistently")
    func wrongKey() throws {
        let pairing = try Self.message(plaintext: Self.plaintext(57, 63, 100))
        #expect(pairing.decrypted(with: Self.key) != nil)
        #expect(pairing.decrypted(with: Self.otherKey) == nil)
    }

    @Test("a payload altered on the way does not decrypt consistently")
    func tamperedByte() throws {
        var ciphertext = try #require(ProximityPairing.encrypt(plaintext: Self.plaintext(57, 63, 100), with: Self.key))
        ciphertext[7] ^= 0x01
        let pairing = try Self.message(status: 0x20, battery: 0x65, chargingAndCase: 0x0A, ciphertext: ciphertext)
        #expect(pairing.decrypted(with: Self.key) == nil)
    }

    @Test("a message without the 16 encrypted bytes has nothing to decrypt")
    func noEncryptedPayload() throws {
        let raw: [UInt8] = [0x4C, 0x00, 0x07, 0x09, 0x01, 0x0E, 0x20, 0x20, 0x65, 0x0A, 0x31, 0x00, 0x00]
        let pairing = try ProximityPairing(manufacturerData: try #require(ManufacturerData(raw: raw)))
        #expect(pairing.encryptedPayload == nil)
        #expect(pairing.decrypted(with: Self.key) == nil)
    }

    @Test("a level of 101...126 (with or without the charging bit) makes the payload inconsistent")
    func impossibleLevel() throws {
        // The clear left level is 100, so only the range rule can refuse 101.
        #expect(try Self.message(battery: 0x6A, plaintext: Self.plaintext(100, 63, 100)).decrypted(with: Self.key) != nil)
        #expect(try Self.message(battery: 0x6A, plaintext: Self.plaintext(101, 63, 100)).decrypted(with: Self.key) == nil)
        #expect(try Self.message(battery: 0x6A, plaintext: Self.plaintext(0x80 | 101, 63, 100)).decrypted(with: Self.key) == nil)
        #expect(try Self.message(chargingAndCase: 0x0F, plaintext: Self.plaintext(57, 63, 126)).decrypted(with: Self.key) == nil)
    }

    @Test("level bits 0x7F mean unknown: nil level and nil charging flag, the payload still consistent")
    func unknownMarker() throws {
        let some = try Self.message(plaintext: Self.plaintext(57, 0x7F, 0xFF)).decrypted(with: Self.key)
        #expect(some == DecryptedProximityStatus(leftBattery: 57, leftCharging: false))
        #expect(some?.battery == Battery(left: 57, leftCharging: false))
        let none = try Self.message(plaintext: Self.plaintext(0xFF, 0x7F, 0x7F)).decrypted(with: Self.key)
        #expect(none == DecryptedProximityStatus())
        #expect(none?.battery == nil)
    }

    @Test("a level more than 10 points from the clear 10 % level makes the payload inconsistent, where both are known")
    func disagreesWithClearLevel() throws {
        // Clear: left 50, right 60, case 50.
        func decrypted(
            _ primary: UInt8, _ secondary: UInt8, _ chargingCase: UInt8, battery: UInt8 = 0x65
        ) throws -> DecryptedProximityStatus? {
            try Self.message(battery: battery, chargingAndCase: 0x05, plaintext: Self.plaintext(primary, secondary, chargingCase))
                .decrypted(with: Self.key)
        }
        #expect(try decrypted(60, 63, 50)?.leftBattery == 60)
        #expect(try decrypted(40, 63, 50)?.leftBattery == 40)
        #expect(try decrypted(61, 63, 50) == nil)
        #expect(try decrypted(39, 63, 50) == nil)
        #expect(try decrypted(57, 71, 50) == nil)
        #expect(try decrypted(57, 63, 61) == nil)
        // The clear left level unknown (nibble 15): nothing to compare with.
        #expect(try decrypted(95, 63, 50, battery: 0x6F)?.leftBattery == 95)
    }

    @Test("a plaintext published from a device decodes: no fixed byte is required (capod issue #287)")
    func publishedSample() throws {
        // LibrePods' author's sample: byte 0 is 0x14 and 0x2D is byte 5, which LinuxPods' fixed
        // bytes (byte 0 < 0x10, byte 4 = 0x2D) would refuse.
        let sample = try #require(Hex.decode("14e3e2320d2d73c2055b0003f2b2cb4b"))
        // Clear: both buds 100 and charging (bits 0x01 and 0x02), case 50.
        let pairing = try Self.message(status: 0x20, battery: 0xAA, chargingAndCase: 0x35, plaintext: sample)
        #expect(
            pairing.decrypted(with: Self.key)
                == DecryptedProximityStatus(
                    leftBattery: 99, rightBattery: 98, caseBattery: 50, leftCharging: true, rightCharging: true, caseCharging: false))
    }
}
