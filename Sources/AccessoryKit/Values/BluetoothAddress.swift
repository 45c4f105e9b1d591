/// A 48-bit Bluetooth device address (BD_ADDR), most significant byte first as people write it.
///
/// One grammar everywhere (configuration, requests, topics, gateway payloads): six hex pairs,
/// any case, separated all by `:` or all by `-` (`A1:B2:C3:D4:E5:F6`, `a1-b2-c3-d4-e5-f6`,
/// the latter as Windows and some tools write addresses), or 12 hex digits without separators
/// (`A1B2C3D4E5F6`, the topic form). ``description`` is the canonical upper-case colon form
/// aabridge writes in payloads and ``topicID`` the 12-digit form it uses in topics.
///
/// Stored as one integer so that hashing and comparing it on the sighting hot path costs
/// no allocation.
public struct BluetoothAddress: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The address in the low 48 bits; the first written byte is the most significant.
    public let rawValue: UInt64

    /// Creates an address from its 48-bit value; higher bits are discarded.
    public init(rawValue: UInt64) {
        self.rawValue = rawValue & 0xFFFF_FFFF_FFFF
    }

    /// Creates an address from exactly six bytes, most significant first, or `nil` for any
    /// other length (AudioAccessoryKit refuses source identifiers that are not 6 bytes).
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 6 else { return nil }
        var value: UInt64 = 0
        for byte in bytes { value = value << 8 | UInt64(byte) }
        self.init(rawValue: value)
    }

    /// Parses an address written in the grammar above.
    public init?(_ text: some StringProtocol) {
        var text = String(text)
        guard let address = text.withUTF8({ Self.parse(UnsafeRawBufferPointer($0)) }) else { return nil }
        self = address
    }

    /// Parses the UTF-8 bytes of an address written in the grammar above (the telemetry
    /// parsers read addresses straight from the payload's bytes).
    public static func parse(_ utf8: UnsafeRawBufferPointer) -> BluetoothAddress? {
        let stride: Int
        switch utf8.count {
        case 17: stride = 3
        case 12: stride = 2
        default: return nil
        }
        let separator = stride == 3 ? utf8[2] : 0
        guard stride == 2 || separator == UInt8(ascii: ":") || separator == UInt8(ascii: "-") else { return nil }
        var value: UInt64 = 0
        for group in 0..<6 {
            let start = group * stride
            guard let high = Hex.nibble(utf8[start]), let low = Hex.nibble(utf8[start + 1]) else { return nil }
            if stride == 3, group < 5, utf8[start + 2] != separator { return nil }
            value = value << 8 | UInt64(high << 4 | low)
        }
        return BluetoothAddress(rawValue: value)
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
    public var topicID: String { Hex.encode(bytes, uppercase: true) }

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
