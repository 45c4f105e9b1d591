/// Hexadecimal helpers shared by addresses, UUIDs and descriptor blobs (and by the store and
/// the configuration loader, which depend on this module); no Foundation.
public enum Hex {
    /// The value of one ASCII hex digit, or nil.
    @inline(__always)
    public static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c &- UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c &- UInt8(ascii: "a") &+ 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c &- UInt8(ascii: "A") &+ 10
        default: return nil
        }
    }

    /// Bytes from an even-length hex string (optional `0x` prefix), or nil when malformed.
    public static func bytes(_ text: some StringProtocol) -> [UInt8]? {
        var utf8 = Array(text.utf8)
        if utf8.count >= 2, utf8[0] == UInt8(ascii: "0"), utf8[1] | 0x20 == UInt8(ascii: "x") {
            utf8.removeFirst(2)
        }
        guard utf8.count % 2 == 0 else { return nil }
        var result: [UInt8] = []
        result.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
            result.append(high << 4 | low)
            index += 2
        }
        return result
    }

    private static let digits: [Character] = Array("0123456789ABCDEF")

    /// Upper-case hex of the bytes, no separators.
    public static func string(_ bytes: some Sequence<UInt8>) -> String {
        var text = ""
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return text
    }
}
