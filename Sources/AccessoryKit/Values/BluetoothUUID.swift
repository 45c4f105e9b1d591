/// A Bluetooth UUID, 16-, 32- or 128-bit.
///
/// Short forms are expanded on the Bluetooth base UUID
/// (`0000xxxx-0000-1000-8000-00805F9B34FB`) so that `FE2C` and its 128-bit
/// spelling compare equal, as they do on the air.
public struct BluetoothUUID: Hashable, Sendable, CustomStringConvertible {
    /// The most significant 64 bits.
    public let high: UInt64
    /// The least significant 64 bits.
    public let low: UInt64

    static let baseHigh: UInt64 = 0x0000_0000_0000_1000
    static let baseLow: UInt64 = 0x8000_0080_5F9B_34FB

    /// Creates a UUID from its two halves.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// A 16-bit assigned UUID expanded on the base UUID.
    public init(shortValue: UInt16) {
        self.init(high: UInt64(shortValue) << 32 | Self.baseHigh, low: Self.baseLow)
    }

    /// Parses `FE2C`, `0xfe2c`, `0000FE2C` or a 128-bit UUID with or without dashes.
    public init?(_ text: some StringProtocol) {
        var hex: [UInt8] = []
        var utf8 = Array(text.utf8)
        if utf8.count >= 2, utf8[0] == UInt8(ascii: "0"), utf8[1] | 0x20 == UInt8(ascii: "x") {
            utf8.removeFirst(2)
        }
        let dashed = utf8.count == 36
        for (position, c) in utf8.enumerated() {
            if dashed && [8, 13, 18, 23].contains(position) {
                guard c == UInt8(ascii: "-") else { return nil }
                continue
            }
            guard let nibble = Hex.nibble(c) else { return nil }
            hex.append(nibble)
        }
        func value(_ digits: ArraySlice<UInt8>) -> UInt64 {
            digits.reduce(0) { $0 << 4 | UInt64($1) }
        }
        switch hex.count {
        case 4, 8:
            self.init(high: value(hex[...]) << 32 | Self.baseHigh, low: Self.baseLow)
        case 32:
            self.init(high: value(hex[0..<16]), low: value(hex[16..<32]))
        default:
            return nil
        }
    }

    /// The 16-bit value when this UUID is a 16-bit one on the base UUID.
    public var shortValue: UInt16? {
        guard low == Self.baseLow, high & 0xFFFF_FFFF == Self.baseHigh, high >> 48 == 0 else { return nil }
        return UInt16(truncatingIfNeeded: high >> 32)
    }

    /// `FE2C` for 16-bit UUIDs, the upper-case dashed form otherwise.
    public var description: String {
        if let short = shortValue {
            return Hex.string([UInt8(short >> 8), UInt8(short & 0xFF)])
        }
        return uuidString
    }

    /// The upper-case dashed 128-bit form.
    public var uuidString: String {
        var bytes: [UInt8] = []
        for half in [high, low] {
            for index in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: half >> UInt64(8 * (7 - index)))) }
        }
        let hex = Array(Hex.string(bytes))
        var text = ""
        for (index, character) in hex.enumerated() {
            if index == 8 || index == 12 || index == 16 || index == 20 { text.append("-") }
            text.append(character)
        }
        return text
    }
}
