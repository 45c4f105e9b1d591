/// A Bluetooth service UUID, 16-, 32- or 128-bit.
///
/// Short UUIDs are aliases inside the Bluetooth base UUID `0000xxxx-0000-1000-8000-00805F9B34FB`
/// (Bluetooth Core Specification, Vol 3 Part B, 2.5.1), so every form is stored as its 128-bit
/// value: `FE2C`, `0xfe2c` and `0000fe2c-0000-1000-8000-00805f9b34fb` are equal, as on the air.
public struct BluetoothUUID: Hashable, Sendable, CustomStringConvertible {
    /// The most significant 64 bits of the 128-bit value.
    public let high: UInt64
    /// The least significant 64 bits of the 128-bit value.
    public let low: UInt64

    /// The low 64 bits of the base UUID, shared by every short UUID.
    static let baseLow: UInt64 = 0x8000_0080_5F9B_34FB
    /// The high 64 bits of the base UUID with the 32-bit alias field zeroed.
    static let baseHigh: UInt64 = 0x0000_0000_0000_1000

    /// Creates the 128-bit UUID from its two halves.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// The 128-bit form of a 16-bit UUID.
    public init(shortValue: UInt16) { self.init(uuid32: UInt32(shortValue)) }

    /// The 128-bit form of a 32-bit UUID.
    public init(uuid32: UInt32) {
        self.init(high: UInt64(uuid32) << 32 | Self.baseHigh, low: Self.baseLow)
    }

    /// Creates a UUID from 16 bytes, most significant first (the written order).
    public init?(bigEndianBytes bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        var high: UInt64 = 0, low: UInt64 = 0
        for (index, byte) in bytes.enumerated() {
            if index < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
        }
        self.init(high: high, low: low)
    }

    /// Parses `fe2c`, `0xFE2C`, 8 hex digits (32-bit), 32 hex digits, or the dashed 8-4-4-4-12 form.
    public init?(_ text: some StringProtocol) {
        var digits = Array(text.utf8)
        if digits.count >= 2, digits[0] == UInt8(ascii: "0"), digits[1] | 0x20 == UInt8(ascii: "x") { digits.removeFirst(2) }
        if digits.count == 36 {
            // Byte by byte: a stored accessory's descriptor is parsed at every start (10,000 at once).
            var dashes = 0
            for offset in [8, 13, 18, 23] where digits[offset] == UInt8(ascii: "-") { dashes += 1 }
            guard dashes == 4, digits.count(where: { $0 == UInt8(ascii: "-") }) == 4 else { return nil }
            digits.removeAll { $0 == UInt8(ascii: "-") }
        }
        guard let bytes = digits.withUnsafeBytes({ Hex.decode($0) }) else { return nil }
        switch bytes.count {
        case 2: self.init(shortValue: UInt16(bytes[0]) << 8 | UInt16(bytes[1]))
        case 4: self.init(uuid32: bytes.reduce(0) { $0 << 8 | UInt32($1) })
        case 16: self.init(bigEndianBytes: bytes)
        default: return nil
        }
    }

    /// The 16-bit alias when this UUID is one, else `nil`.
    public var shortValue: UInt16? {
        guard low == Self.baseLow, high & 0xFFFF_FFFF == Self.baseHigh, high >> 48 == 0 else { return nil }
        return UInt16(truncatingIfNeeded: high >> 32)
    }

    /// The 16 bytes, most significant first.
    public var bigEndianBytes: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) }
            + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * $0)) }
    }

    /// `FE2C` for a 16-bit alias, else ``uuidString``.
    public var description: String {
        if let short = shortValue { return Hex.encode([UInt8(short >> 8), UInt8(short & 0xFF)], uppercase: true) }
        return uuidString
    }

    /// The upper-case dashed 128-bit form.
    public var uuidString: String {
        let chars = Array(Hex.encode(bigEndianBytes, uppercase: true))
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(chars[$0]) }.joined(separator: "-")
    }
}
