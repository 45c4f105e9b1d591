/// A 48-bit Bluetooth device address (BD_ADDR), most significant byte first as people write it.
///
/// Gateways write addresses in every style: `AA:BB:CC:DD:EE:FF`, `aa:bb:...`, `AABBCCDDEEFF`.
/// All of them parse to the same value; ``description`` is the canonical upper-case colon form
/// used in aabridge payloads and ``hexID`` the 12-digit form used in topics.
public struct BluetoothAddress: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The address in the low 48 bits; the first written byte is the most significant.
    public let rawValue: UInt64

    /// Creates an address from its 48-bit value; higher bits are discarded.
    public init(rawValue: UInt64) {
        self.rawValue = rawValue & 0xFFFF_FFFF_FFFF
    }

    /// Creates an address from six bytes, most significant first.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 6 else { return nil }
        var value: UInt64 = 0
        for byte in bytes { value = value << 8 | UInt64(byte) }
        self.init(rawValue: value)
    }

    /// Parses `AA:BB:CC:DD:EE:FF` (any case) or 12 hex digits without separators.
    public init?(_ text: some StringProtocol) {
        var text = String(text)
        guard let value = text.withUTF8({ Self.parse(UnsafeRawBufferPointer($0)) }) else { return nil }
        self.init(rawValue: value)
    }

    /// Parses the UTF-8 bytes of `AA:BB:CC:DD:EE:FF` (any case) or of 12 hex digits.
    static func parse(_ utf8: UnsafeRawBufferPointer) -> UInt64? {
        let colon = UInt8(ascii: ":")
        let stride: Int
        switch utf8.count {
        case 17: stride = 3
        case 12: stride = 2
        default: return nil
        }
        var value: UInt64 = 0
        for group in 0..<6 {
            let start = group * stride
            guard let high = Hex.nibble(utf8[start]), let low = Hex.nibble(utf8[start + 1]) else { return nil }
            if stride == 3, group < 5, utf8[start + 2] != colon { return nil }
            value = value << 8 | UInt64(high << 4 | low)
        }
        return value
    }

    /// The six bytes, most significant first.
    public var bytes: [UInt8] {
        (0..<6).map { UInt8(truncatingIfNeeded: rawValue >> (40 - 8 * $0)) }
    }

    /// `A1:B2:C3:D4:E5:F6`: the form aabridge writes in payloads.
    public var description: String {
        bytes.map { Hex.encode([$0], uppercase: true) }.joined(separator: ":")
    }

    /// `A1B2C3D4E5F6`: the form aabridge uses in topics.
    public var hexID: String { Hex.encode(bytes, uppercase: true) }

    /// Whether a *random* address is a resolvable private address: its two most significant
    /// bits are `0b01` (Bluetooth Core Specification, Vol 6 Part B, 1.3.2.2).
    ///
    /// Only meaningful when the address is known to be random; a public address may have any bits.
    public var isResolvablePrivate: Bool { rawValue >> 46 == 0b01 }

    /// The top 24 bits of a resolvable private address, the random part (`prand`).
    public var prand: UInt32 { UInt32(truncatingIfNeeded: rawValue >> 24) }

    /// The low 24 bits of a resolvable private address, the hash of `prand` under the IRK.
    public var hash: UInt32 { UInt32(truncatingIfNeeded: rawValue & 0xFF_FFFF) }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}
