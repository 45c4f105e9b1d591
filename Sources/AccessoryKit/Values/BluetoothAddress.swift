/// A 6-byte Bluetooth device address (`AA:BB:CC:DD:EE:FF`).
///
/// Stored as one integer so that hashing and comparing it on the sighting hot
/// path costs no allocation. The first byte written is the most significant.
public struct BluetoothAddress: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The address in the low 48 bits.
    public let rawValue: UInt64

    /// Creates an address from its 48-bit value; higher bits are ignored.
    public init(rawValue: UInt64) {
        self.rawValue = rawValue & 0xFFFF_FFFF_FFFF
    }

    /// Creates an address from exactly six bytes, or nil for any other length
    /// (AudioAccessoryKit refuses source identifiers that are not 6 bytes).
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 6 else { return nil }
        var value: UInt64 = 0
        for byte in bytes { value = value << 8 | UInt64(byte) }
        self.rawValue = value
    }

    /// Parses `AA:BB:CC:DD:EE:FF` (any case, `:` or `-` separators) or 12 hex digits.
    public init?(_ text: some StringProtocol) {
        var value: UInt64 = 0
        var digits = 0
        var position = 0
        let separated = text.utf8.count == 17
        guard separated || text.utf8.count == 12 else { return nil }
        for c in text.utf8 {
            if separated && position % 3 == 2 {
                guard c == UInt8(ascii: ":") || c == UInt8(ascii: "-") else { return nil }
            } else {
                guard let nibble = Hex.nibble(c) else { return nil }
                value = value << 4 | UInt64(nibble)
                digits += 1
            }
            position += 1
        }
        guard digits == 12 else { return nil }
        self.rawValue = value
    }

    /// The six bytes, most significant first.
    public var bytes: [UInt8] {
        (0..<6).map { UInt8(truncatingIfNeeded: rawValue >> UInt64(8 * (5 - $0))) }
    }

    /// Upper-case colon form, as used in payloads.
    public var description: String {
        bytes.map { Hex.string([$0]) }.joined(separator: ":")
    }

    /// 12 upper-case hex digits, as used in topics.
    public var topicID: String { Hex.string(bytes) }

    public static func < (lhs: BluetoothAddress, rhs: BluetoothAddress) -> Bool {
        lhs.rawValue < rhs.rawValue
    }
}
