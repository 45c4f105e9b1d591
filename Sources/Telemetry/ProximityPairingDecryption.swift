import AccessoryKit
import CCrypto

/// Decrypting the 16 bytes at the end of a proximity-pairing message (identity.md, Keys: "a
/// payload that does not decrypt consistently is treated as not this accessory's").
///
/// Apple does not document this either. The layout below follows the public decoders that read
/// it (consulted while writing; the byte order of the key and the AES mode are pinned by a
/// FIPS-197 known-answer test, the rest by vectors written from this layout):
/// - capod (github.com/d4rken-org/capod): `ProximityMessage.Decrypter.decrypt`
///   (`app/.../apple/ble/protocol/ProximityMessage.kt`) runs AES-128 ECB without padding over the
///   last 16 bytes with the profile's encryption key, neither key nor data reversed;
///   `ApplePods.asBatteryState` (`.../ble/devices/ApplePods.kt`) reads a level byte as bit 0x80
///   charging and bits 0x7F the percentage, ignoring anything above 100; `DualApplePods`
///   (`.../ble/devices/DualApplePods.kt`) takes byte 1 for the left bud when status bit 0x20 is set
///   and byte 2 otherwise, byte 3 for the case. The key is the one the accessory returns as type
///   0x04 ("ENC", type 0x01 being the IRK) to the key request `04 00 04 00 30 00 05 00` over the
///   Apple Accessory Protocol on L2CAP PSM 0x1001 (`DefaultAapDeviceProfile.decodePrivateKeyResponse`).
/// - LibrePods (github.com/kavishdevar/librepods): Android `BLEManager.decryptLastBytes` and
///   `parseProximityMessageWithDecryption` (same key, ENC_KEY; same bytes and flip; a case byte of
///   0xFF or level 127 is "unknown, keep the last value"); Linux `BLEUtils::decryptLastBytes`
///   (`linux/ble/bleutils.cpp`: the key "directly, no reversal"; one block of CBC with a zero IV,
///   which is ECB) and `Battery::parseEncryptedPacket` (`linux/battery.hpp`: level 127 = unknown).
///   Its author's plaintext sample in capod issue #287, `14 e3 e2 32 0d 2d 73 c2 05 5b 00 03 f2 b2
///   cb 4b` (both buds charging at 99 % and 98 %, case 50 %), is one of the test vectors.
/// - LinuxPods (github.com/mstroecker/LinuxPods): `internal/ble/decrypt.go`
///   `DecryptProximityPayload` and `docs/ble-proximity-pairing.md` (AES-128 ECB with ENC_KEY, not
///   the IRK; levels above 100 unknown).
///
/// Plaintext: byte 1 the broadcasting ("primary") bud, byte 2 the other bud, byte 3 the case; in
/// each, bit 0x80 is charging and bits 0x7F the level in percent, 0x7F meaning unknown. Bytes 0
/// and 4...15 are not understood. Whether the broadcasting bud is the left one is status bit 0x20,
/// exactly as for the clear battery nibbles (``ProximityPairing``).
///
/// Consistency (there is no checksum): every level byte must hold 0...100 or the unknown marker,
/// and a level must be within 10 points of the clear 10 % level where both are known. This is a
/// plausibility check, not authentication: a wrong key yields bytes that pass about half the time
/// when every clear level is unknown, and at most about 1 in 200 times when all three are known.
/// The IRK, not this, is what says whose advertisement it is.
///
/// Uncertain:
/// - Which bud byte 1 is: the three sources agree (the broadcasting bud, flipped by bit 0x20), but
///   all go back to the same observation (capod #287). capod and LibrePods flip the in-ear bits
///   again when the broadcasting bud is in the case (bit 0x40) but never the levels; nor does this.
/// - Fixed bytes: LinuxPods rejects a plaintext unless byte 0's high nibble is 0 and byte 4 is
///   0x2D ("not 100% verified"), but the LibrePods sample has byte 0 = 0x14 and 0x2D at byte 5;
///   capod and LibrePods check nothing. The sources disagree, so no fixed byte is checked.
/// - Levels 101...126: the sources ignore them as unknown; here they make the payload inconsistent.
/// - Single-battery accessories (AirPods Max, Beats headphones): capod reads byte 1 alone and asked
///   owners to confirm (capod issue #290); here too byte 1, the broadcasting side's, is the one
///   level (`main`), as the clear primary nibble is.
extension ProximityPairing {
    /// Bit 0x80 of a level byte: charging.
    private static let chargingBit: UInt8 = 0x80
    /// Level bits that mean "unknown".
    private static let unknownLevel: UInt8 = 0x7F
    /// How far a 1 % level may be from the clear 10 % level of the same battery.
    private static let maximumDisagreement = 10

    /// The status the encrypted payload carries, decrypted with the accessory's encryption key
    /// (its "ENC" key, not the IRK).
    /// - Returns: `nil` when the message has no encrypted payload, when AES fails, or when the
    ///   plaintext is not consistent (see the extension's documentation).
    public func decrypted(with key: AccessoryKey) -> DecryptedProximityStatus? {
        guard let encryptedPayload, let plaintext = Self.aes128ECB(encryptedPayload, key: key.bytes, encrypt: false) else {
            return nil
        }
        return decode(plaintext: plaintext)
    }

    /// Encrypts a plaintext block with a key as the accessory does; for building test vectors.
    static func encrypt(plaintext: [UInt8], with key: AccessoryKey) -> [UInt8]? {
        aes128ECB(plaintext, key: key.bytes, encrypt: true)
    }

    private func decode(plaintext: [UInt8]) -> DecryptedProximityStatus? {
        guard plaintext.count == 16, let primary = Self.reading(plaintext[1]), let secondary = Self.reading(plaintext[2]),
            let chargingCase = Self.reading(plaintext[3])
        else { return nil }
        let primaryIsLeft = status & 0x20 != 0
        let left = primaryIsLeft ? primary : secondary
        let right = primaryIsLeft ? secondary : primary
        guard Self.agree(left.level, leftBattery), Self.agree(right.level, rightBattery), Self.agree(chargingCase.level, caseBattery)
        else { return nil }
        return DecryptedProximityStatus(
            leftBattery: left.level, rightBattery: right.level, caseBattery: chargingCase.level,
            leftCharging: left.charging, rightCharging: right.charging, caseCharging: chargingCase.charging,
            primaryIsLeft: primaryIsLeft)
    }

    /// One level byte. The outer `nil` is an impossible level (101...126); an unknown level gives
    /// `nil` level and charging, since the charging bit of an unknown battery says nothing.
    private static func reading(_ byte: UInt8) -> (level: Int?, charging: Bool?)? {
        let level = byte & ~chargingBit
        if level == unknownLevel { return (nil, nil) }
        guard level <= 100 else { return nil }
        return (Int(level), byte & chargingBit != 0)
    }

    /// Whether a 1 % level and the clear 10 % level can describe the same battery.
    private static func agree(_ precise: Int?, _ coarse: Int?) -> Bool {
        guard let precise, let coarse else { return true }
        return abs(precise - coarse) <= maximumDisagreement
    }

    /// One AES-128 block in ECB mode without padding, through libcrypto's EVP interface (the
    /// low-level `AES_decrypt` is deprecated in OpenSSL 3).
    private static func aes128ECB(_ block: [UInt8], key: [UInt8], encrypt: Bool) -> [UInt8]? {
        guard key.count == 16, block.count == 16, let context = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(context) }
        guard EVP_CipherInit_ex(context, EVP_aes_128_ecb(), nil, key, nil, encrypt ? 1 : 0) == 1,
            EVP_CIPHER_CTX_set_padding(context, 0) == 1
        else { return nil }
        // Without padding libcrypto holds nothing back, so the whole block comes out of the update.
        var output = [UInt8](repeating: 0, count: 32)
        var written: Int32 = 0
        guard EVP_CipherUpdate(context, &output, &written, block, 16) == 1, written == 16 else { return nil }
        return Array(output.prefix(16))
    }
}
