/// Hexadecimal decoding and encoding, shared by addresses, UUIDs, descriptor blobs and gateway
/// payloads (the store, the configuration loader and the telemetry parsers all use this one).
///
/// Gateways write binary advertisement data as hex strings of either case; decoding is
/// table-driven because it runs on every telemetry message. No Foundation.
public enum Hex {
    /// 0...15 for a hex digit, 0xFF otherwise.
    @usableFromInline
    static let nibbleTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (offset, char) in "0123456789".utf8.enumerated() { table[Int(char)] = UInt8(offset) }
        for (offset, char) in "abcdef".utf8.enumerated() { table[Int(char)] = UInt8(10 + offset) }
        for (offset, char) in "ABCDEF".utf8.enumerated() { table[Int(char)] = UInt8(10 + offset) }
        return table
    }()

    /// The value of one ASCII hex digit, or `nil`.
    @inlinable
    public static func nibble(_ char: UInt8) -> UInt8? {
        let value = nibbleTable[Int(char)]
        return value == 0xFF ? nil : value
    }

    /// Decodes hex digits (no separators, no `0x` prefix) into bytes.
    /// - Returns: `nil` for an odd number of digits or any character that is not a hex digit.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var text = String(text)
        return text.withUTF8 { decode(UnsafeRawBufferPointer($0)) }
    }

    /// Decodes hex digits given as UTF-8 bytes.
    /// - Returns: `nil` for an odd number of digits or any byte that is not a hex digit.
    public static func decode(_ utf8: UnsafeRawBufferPointer) -> [UInt8]? {
        guard utf8.count % 2 == 0 else { return nil }
        let count = utf8.count / 2
        var valid = true
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            nibbleTable.withUnsafeBufferPointer { table in
                for index in 0..<count {
                    let high = table[Int(utf8[2 * index])]
                    let low = table[Int(utf8[2 * index + 1])]
                    if (high | low) & 0xF0 != 0 { valid = false; break }
                    buffer[index] = high << 4 | low
                }
            }
            // Every slot must count as initialised for the array; zero the rest on failure.
            if !valid { for index in 0..<count { buffer[index] = 0 } }
            initialized = count
        }
        return valid ? bytes : nil
    }

    /// Decodes hex digits with an optional `0x` prefix, as people write them in the
    /// configuration (descriptor blobs and masks).
    /// - Returns: `nil` for an odd number of digits or any character that is not a hex digit.
    public static func bytes(_ text: some StringProtocol) -> [UInt8]? {
        var digits = Substring(text)
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits = digits.dropFirst(2) }
        return decode(digits)
    }

    /// Hex digits for the bytes, no separators; lower case unless `uppercase`.
    public static func encode(_ bytes: some Sequence<UInt8>, uppercase: Bool = false) -> String {
        let digits: [UInt8] = Array((uppercase ? "0123456789ABCDEF" : "0123456789abcdef").utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
