/// Standard base64 decoding (RFC 4648, section 4), for keys pasted from the macOS Keychain and
/// Home Assistant. AccessoryKit has no Foundation, and this is all it needs of it.
enum Base64 {
    /// 0...63 for a base64 character, 0xFF otherwise.
    private static let table: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, char) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(char)] = UInt8(value)
        }
        return table
    }()

    /// Decodes base64, with or without `=` padding.
    /// - Returns: `nil` for a character outside the alphabet, misplaced padding, a length no
    ///   encoding produces, or leftover bits that are not zero (not a canonical encoding).
    static func decode(_ text: Substring) -> [UInt8]? {
        var characters = Array(text.utf8)
        var padding = 0
        while characters.last == UInt8(ascii: "=") {
            characters.removeLast()
            padding += 1
        }
        guard !characters.isEmpty, padding <= 2, (characters.count + padding) % 4 == 0 || padding == 0,
            characters.count % 4 != 1
        else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(characters.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for character in characters {
            let value = table[Int(character)]
            guard value != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        guard accumulator & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return bytes
    }
}
