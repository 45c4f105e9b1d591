import AccessoryKit

#if canImport(Glibc)
    import Glibc
#endif

/// A small zero-copy JSON reader over UTF-8 bytes, for the flat objects gateways publish.
///
/// Why not `JSONSerialization`: it builds a whole `NSDictionary` of bridged objects for every
/// message, which dominates the cost of the telemetry hot path (see `aabridge-bench telemetry`).
/// This scanner validates the complete document (RFC 8259 grammar, UTF-8, escapes including
/// `\uXXXX` surrogate pairs, a nesting limit) while handing the top-level members to the caller as
/// byte ranges; strings are only decoded when the caller asks for them.
///
/// All offsets refer to the buffer the scanner was created over, which must outlive it.
struct JSONScanner {
    /// A string value or key: the byte range between the quotes, escapes not yet decoded.
    struct StringRef {
        /// First byte after the opening quote.
        var start: Int
        /// Offset of the closing quote.
        var end: Int
        /// Whether a backslash occurs; if not, the bytes are the string's UTF-8 as is.
        var hasEscapes: Bool
    }

    /// One JSON value; containers are given as their byte range including the brackets.
    enum Value {
        case string(StringRef)
        case number(Double)
        case bool(Bool)
        case null
        case array(Range<Int>)
        case object(Range<Int>)

        /// The JSON type name, for rejection messages.
        var typeName: String {
            switch self {
            case .string: "string"
            case .number: "number"
            case .bool: "boolean"
            case .null: "null"
            case .array: "array"
            case .object: "object"
            }
        }
    }

    /// A syntax error with the byte offset where it was found.
    struct SyntaxError: Error {
        var message: String
        var offset: Int
    }

    let bytes: UnsafeRawBufferPointer
    let maximumDepth: Int

    init(_ bytes: UnsafeRawBufferPointer, maximumDepth: Int = TelemetryLimits.maximumJSONDepth) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    // MARK: Public entry points

    /// Validates that the whole buffer is one JSON object and calls `body` for each member, in order.
    ///
    /// `body` may be called for early members before a syntax error later in the document is
    /// found; callers collect members and only build a result after this returns without throwing.
    func forEachMember(_ body: (StringRef, Value) -> Void) throws(SyntaxError) {
        var position = skipWhitespace(0)
        guard position < bytes.count, bytes[position] == UInt8(ascii: "{") else {
            throw SyntaxError(message: "not a JSON object", offset: position)
        }
        position = try scanObject(from: position, depth: 1, body: body)
        position = skipWhitespace(position)
        guard position == bytes.count else { throw SyntaxError(message: "trailing characters after the object", offset: position) }
    }

    /// Whether the whole buffer is one valid JSON value of any kind (used by the fuzz targets).
    func validateDocument() throws(SyntaxError) {
        var position = skipWhitespace(0)
        (_, position) = try scanValue(from: position, depth: 0)
        position = skipWhitespace(position)
        guard position == bytes.count else { throw SyntaxError(message: "trailing characters", offset: position) }
    }

    /// Calls `body` for each member of an object value already validated by a scan.
    func forEachMember(ofObject range: Range<Int>, _ body: (StringRef, Value) -> Void) {
        // The range was validated when it was skipped, so this cannot fail; depth 1 is safe
        // because the nested depth was also checked then.
        _ = try? scanObject(from: range.lowerBound, depth: 1, body: body)
    }

    /// Calls `body` for each element of an array value already validated by a scan.
    func forEachElement(ofArray range: Range<Int>, _ body: (Value) -> Void) {
        _ = try? scanArray(from: range.lowerBound, depth: 1, body: body)
    }

    /// Whether a string (a key, typically) equals an ASCII literal.
    func string(_ ref: StringRef, equals literal: StaticString) -> Bool {
        if ref.hasEscapes {
            return decodedBytes(ref).elementsEqual(UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
        }
        let count = literal.utf8CodeUnitCount
        guard ref.end - ref.start == count else { return false }
        guard count > 0, let base = bytes.baseAddress else { return true }
        // memcmp: a key is compared for every member of every message (issue 53).
        return memcmp(base + ref.start, literal.utf8Start, count) == 0
    }

    /// The string's bytes without quotes, escapes undecoded: valid only when `!hasEscapes`.
    func rawBytes(_ ref: StringRef) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[ref.start..<ref.end])
    }

    /// The decoded string.
    func string(_ ref: StringRef) -> String {
        if !ref.hasEscapes { return String(decoding: rawBytes(ref), as: UTF8.self) }
        return String(decoding: decodedBytes(ref), as: UTF8.self)
    }

    /// The decoded UTF-8 bytes of a string already validated by a scan.
    func decodedBytes(_ ref: StringRef) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(ref.end - ref.start)
        var index = ref.start
        while index < ref.end {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "\\") else { out.append(byte); index += 1; continue }
            let escape = bytes[index + 1]
            index += 2
            switch escape {
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = UInt32(hex4(at: index))
                index += 4
                if (0xD800...0xDBFF).contains(scalar) {
                    // Validated: a low surrogate escape follows.
                    let low = UInt32(hex4(at: index + 2))
                    index += 6
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                appendUTF8(Unicode.Scalar(scalar) ?? "\u{FFFD}", to: &out)
            default: out.append(escape) // `"`, `\`, `/`
            }
        }
        return out
    }

    // MARK: Scanning

    private func skipWhitespace(_ start: Int) -> Int {
        var position = start
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return position
            }
        }
        return position
    }

    /// Scans an object starting at its `{`; returns the offset after its `}`.
    private func scanObject(from start: Int, depth: Int, body: (StringRef, Value) -> Void) throws(SyntaxError) -> Int {
        guard depth <= maximumDepth else { throw SyntaxError(message: "nesting deeper than \(maximumDepth)", offset: start) }
        var position = skipWhitespace(start + 1)
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") { return position + 1 }
        while true {
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
                throw SyntaxError(message: "expected a string key", offset: position)
            }
            let key: StringRef
            (key, position) = try scanString(from: position)
            position = skipWhitespace(position)
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else {
                throw SyntaxError(message: "expected ':'", offset: position)
            }
            position = skipWhitespace(position + 1)
            let value: Value
            (value, position) = try scanValue(from: position, depth: depth)
            body(key, value)
            position = skipWhitespace(position)
            guard position < bytes.count else { throw SyntaxError(message: "unterminated object", offset: position) }
            if bytes[position] == UInt8(ascii: "}") { return position + 1 }
            guard bytes[position] == UInt8(ascii: ",") else { throw SyntaxError(message: "expected ',' or '}'", offset: position) }
            position = skipWhitespace(position + 1)
        }
    }

    /// Scans an array starting at its `[`; returns the offset after its `]`.
    private func scanArray(from start: Int, depth: Int, body: (Value) -> Void) throws(SyntaxError) -> Int {
        guard depth <= maximumDepth else { throw SyntaxError(message: "nesting deeper than \(maximumDepth)", offset: start) }
        var position = skipWhitespace(start + 1)
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") { return position + 1 }
        while true {
            let value: Value
            (value, position) = try scanValue(from: position, depth: depth)
            body(value)
            position = skipWhitespace(position)
            guard position < bytes.count else { throw SyntaxError(message: "unterminated array", offset: position) }
            if bytes[position] == UInt8(ascii: "]") { return position + 1 }
            guard bytes[position] == UInt8(ascii: ",") else { throw SyntaxError(message: "expected ',' or ']'", offset: position) }
            position = skipWhitespace(position + 1)
        }
    }

    /// Scans any value at `start` (whitespace already skipped); `depth` is that of the enclosing container.
    private func scanValue(from start: Int, depth: Int) throws(SyntaxError) -> (Value, Int) {
        guard start < bytes.count else { throw SyntaxError(message: "expected a value", offset: start) }
        switch bytes[start] {
        case UInt8(ascii: "\""):
            let (ref, end) = try scanString(from: start)
            return (.string(ref), end)
        case UInt8(ascii: "{"):
            let end = try scanObject(from: start, depth: depth + 1) { _, _ in }
            return (.object(start..<end), end)
        case UInt8(ascii: "["):
            let end = try scanArray(from: start, depth: depth + 1) { _ in }
            return (.array(start..<end), end)
        case UInt8(ascii: "t"):
            return (.bool(true), try expectLiteral("true", at: start))
        case UInt8(ascii: "f"):
            return (.bool(false), try expectLiteral("false", at: start))
        case UInt8(ascii: "n"):
            return (.null, try expectLiteral("null", at: start))
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try scanNumber(from: start)
        default:
            throw SyntaxError(message: "unexpected character", offset: start)
        }
    }

    private func expectLiteral(_ literal: StaticString, at start: Int) throws(SyntaxError) -> Int {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - start >= count else { throw SyntaxError(message: "truncated literal", offset: start) }
        for index in 0..<count where bytes[start + index] != literal.utf8Start[index] {
            throw SyntaxError(message: "invalid literal", offset: start)
        }
        return start + count
    }

    /// Scans a string starting at its opening quote, validating escapes and UTF-8.
    private func scanString(from start: Int) throws(SyntaxError) -> (StringRef, Int) {
        var position = start + 1
        var hasEscapes = false
        while position < bytes.count {
            // Eight bytes at a time while none of them needs a look (issue 53: the hex strings
            // gateways send are most of a message's bytes); the first that does is taken below.
            position = Self.skipPlainASCII(bytes, from: position)
            guard position < bytes.count else { break }
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                return (StringRef(start: start + 1, end: position, hasEscapes: hasEscapes), position + 1)
            }
            if byte == UInt8(ascii: "\\") {
                hasEscapes = true
                position = try scanEscape(at: position)
            } else if byte < 0x20 {
                throw SyntaxError(message: "control character in string", offset: position)
            } else if byte < 0x80 {
                position += 1
            } else {
                position = try scanUTF8Sequence(at: position)
            }
        }
        throw SyntaxError(message: "unterminated string", offset: start)
    }

    /// The offset of the first byte at or after `start` that is not plain ASCII inside a string
    /// (a quote, a backslash, a control character or a byte of 0x80 and above), or the offset of
    /// the first byte of the last incomplete block of eight, whichever comes first. Each block
    /// is tested as one 64-bit word with the "has a zero byte" / "has a byte less than n" tricks,
    /// which are exact for "any byte" (not for which one: the caller looks at it byte by byte).
    static func skipPlainASCII(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Int {
        guard let base = bytes.baseAddress else { return start }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        var position = start
        while position + 8 <= bytes.count {
            let word = base.loadUnaligned(fromByteOffset: position, as: UInt64.self)
            let quote = word ^ (ones &* 0x22)
            let backslash = word ^ (ones &* 0x5C)
            let special =
                ((quote &- ones) & ~quote) // a byte 0x22
                | ((backslash &- ones) & ~backslash) // a byte 0x5C
                | ((word &- ones &* 0x20) & ~word) // a byte below 0x20
                | word // a byte of 0x80 or above
            guard special & highs == 0 else { return position }
            position += 8
        }
        return position
    }

    /// Validates the escape at the backslash; returns the offset after it.
    private func scanEscape(at start: Int) throws(SyntaxError) -> Int {
        guard start + 1 < bytes.count else { throw SyntaxError(message: "truncated escape", offset: start) }
        switch bytes[start + 1] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
            UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            return start + 2
        case UInt8(ascii: "u"):
            guard let unit = checkedHex4(at: start + 2) else { throw SyntaxError(message: "invalid \\u escape", offset: start) }
            switch unit {
            case 0xD800...0xDBFF:
                // A high surrogate is only valid as the first half of an escaped pair.
                guard start + 7 < bytes.count, bytes[start + 6] == UInt8(ascii: "\\"), bytes[start + 7] == UInt8(ascii: "u"),
                    let low = checkedHex4(at: start + 8), (0xDC00...0xDFFF).contains(low)
                else { throw SyntaxError(message: "unpaired surrogate escape", offset: start) }
                return start + 12
            case 0xDC00...0xDFFF:
                throw SyntaxError(message: "unpaired surrogate escape", offset: start)
            default:
                return start + 6
            }
        default:
            throw SyntaxError(message: "invalid escape", offset: start)
        }
    }

    private func checkedHex4(at start: Int) -> UInt16? {
        guard start + 4 <= bytes.count else { return nil }
        var value: UInt16 = 0
        for index in start..<(start + 4) {
            guard let nibble = Hex.nibble(bytes[index]) else { return nil }
            value = value << 4 | UInt16(nibble)
        }
        return value
    }

    private func hex4(at start: Int) -> UInt16 { checkedHex4(at: start) ?? 0xFFFD }

    /// Validates one multi-byte UTF-8 sequence (no overlongs, no surrogates, at most U+10FFFF).
    private func scanUTF8Sequence(at start: Int) throws(SyntaxError) -> Int {
        let lead = bytes[start]
        let length: Int
        var lowerBound: UInt8 = 0x80, upperBound: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; lowerBound = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; upperBound = 0x9F
        case 0xF0: length = 4; lowerBound = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; upperBound = 0x8F
        default: throw SyntaxError(message: "invalid UTF-8", offset: start)
        }
        guard start + length <= bytes.count else { throw SyntaxError(message: "truncated UTF-8", offset: start) }
        let second = bytes[start + 1]
        guard second >= lowerBound, second <= upperBound else { throw SyntaxError(message: "invalid UTF-8", offset: start) }
        for index in (start + 2)..<(start + length) where bytes[index] & 0xC0 != 0x80 {
            throw SyntaxError(message: "invalid UTF-8", offset: start)
        }
        return start + length
    }

    /// Scans a number per the JSON grammar and converts it to `Double`.
    ///
    /// Up to 19 significant digits are exact; gateway numbers (RSSI, power, percentages) are far
    /// shorter, so no general correctly-rounded conversion is needed.
    private func scanNumber(from start: Int) throws(SyntaxError) -> (Value, Int) {
        var position = start
        var negative = false
        if bytes[position] == UInt8(ascii: "-") { negative = true; position += 1 }
        var mantissa: UInt64 = 0
        var digits = 0
        var exponent = 0
        func isDigit(_ at: Int) -> Bool { at < bytes.count && bytes[at] >= 0x30 && bytes[at] <= 0x39 }
        guard isDigit(position) else { throw SyntaxError(message: "invalid number", offset: start) }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
            if isDigit(position) { throw SyntaxError(message: "leading zero in number", offset: start) }
        } else {
            while isDigit(position) {
                if digits < 19 { mantissa = mantissa * 10 + UInt64(bytes[position] - 0x30); digits += 1 } else { exponent += 1 }
                position += 1
            }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            guard isDigit(position) else { throw SyntaxError(message: "invalid fraction", offset: start) }
            while isDigit(position) {
                if digits < 19 {
                    mantissa = mantissa * 10 + UInt64(bytes[position] - 0x30)
                    if mantissa != 0 { digits += 1 }
                    exponent -= 1
                }
                position += 1
            }
        }
        if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
            position += 1
            var exponentNegative = false
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                exponentNegative = bytes[position] == UInt8(ascii: "-")
                position += 1
            }
            guard isDigit(position) else { throw SyntaxError(message: "invalid exponent", offset: start) }
            var value = 0
            while isDigit(position) {
                value = min(value * 10 + Int(bytes[position] - 0x30), 100_000)
                position += 1
            }
            exponent += exponentNegative ? -value : value
        }
        var result = Double(mantissa)
        if result != 0 { result = Self.scale(result, byPowerOfTen: exponent) }
        // Found by the json-differential fuzz target: `1e400` overflowed to infinity where
        // JSONSerialization rejects the document. RFC 8259 lets a parser limit the range; a value
        // no Double can hold is rejected rather than passed on as infinity.
        guard result.isFinite else { throw SyntaxError(message: "number out of range", offset: start) }
        return (.number(negative ? -result : result), position)
    }

    private static let exactPowers: [Double] = (0...22).map { power in
        var value = 1.0
        for _ in 0..<power { value *= 10 }
        return value
    }

    private static func scale(_ value: Double, byPowerOfTen exponent: Int) -> Double {
        var result = value
        var remaining = exponent
        while remaining > 22 { result *= 1e22; remaining -= 22; if result.isInfinite { return result } }
        while remaining < -22 { result /= 1e22; remaining += 22; if result == 0 { return result } }
        return remaining >= 0 ? result * exactPowers[remaining] : result / exactPowers[-remaining]
    }

    private func appendUTF8(_ scalar: Unicode.Scalar, to out: inout [UInt8]) {
        out.append(contentsOf: UTF8.encode(scalar)!)
    }
}
