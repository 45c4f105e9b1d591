/// Texts of JSON objects kept without their keys: the text around the values (`{"id":`,
/// `,"name":`, ... `}`) is stored once per key sequence (a template), and each text as the
/// template's number and its values' bytes; a value the same as in the text the template was
/// made from (`null`, `false`, `[]`, the same product, most of an accessory not heard yet) as
/// one byte. ``text(_:)`` gives back exactly the bytes
/// ``compact(_:)`` was given, whatever they were: a text that is not a compact object (or
/// whose key sequence would be one template too many) is kept whole.
///
/// What for: the Publisher keeps every accessory's state object as last published (the list
/// `bridge/accessories` is made of them), and about half of a state's 550 bytes are its 25
/// keys, the same for every accessory.
public struct ObjectTextTemplates: Sendable {
    private struct Template: Sendable {
        /// The literal pieces, one more than the values: `{"a":`, `,"b":`, `}`.
        var pieces: [[UInt8]]
        /// The values of the text it was made from: a value the same is stored as length 0
        /// (no JSON value is empty).
        var references: [[UInt8]]
    }

    private var templates: [Template] = []
    /// Built in, then copied out at its exact size.
    private var scratch: [UInt8] = []
    /// Key sequences kept; texts with others are stored whole. (A bridge's state objects have
    /// one, two in a cluster, which stamps the instance and the epoch.)
    public static let maximumTemplates = 16

    public init() {}

    /// The number of key sequences known.
    public var templateCount: Int { templates.count }

    /// `text` as stored: the first byte 0 and the text, or the template's number + 1 and each
    /// value as its length (LEB128) and bytes, or as 0 when it is the template's reference value.
    public mutating func compact(_ text: [UInt8]) -> [UInt8] {
        for (index, template) in templates.enumerated() {
            if let compacted = compact(text, with: template, tag: UInt8(index + 1)) { return compacted }
        }
        if templates.count < Self.maximumTemplates, let (pieces, values) = Self.pieces(of: text) {
            let template = Template(pieces: pieces, references: values)
            if let compacted = compact(text, with: template, tag: UInt8(templates.count + 1)) {
                templates.append(template)
                return compacted
            }
        }
        return [0] + text
    }

    /// The text ``compact(_:)`` was given.
    public func text(_ compacted: [UInt8]) -> [UInt8] {
        var text: [UInt8] = []
        text.reserveCapacity(count(compacted))
        append(compacted, to: &text)
        return text
    }

    /// The length of the text ``compact(_:)`` was given.
    public func count(_ compacted: [UInt8]) -> Int {
        guard let tag = compacted.first else { return 0 }
        guard tag > 0 else { return compacted.count - 1 }
        let template = templates[Int(tag) - 1]
        var total = template.pieces.reduce(0) { $0 + $1.count }
        var index = 1
        for reference in template.references {
            let length = Self.readLength(compacted, at: &index)
            total += length == 0 ? reference.count : length
            index += length
        }
        return total
    }

    /// Appends the text ``compact(_:)`` was given.
    public func append(_ compacted: [UInt8], to output: inout [UInt8]) {
        guard let tag = compacted.first else { return }
        guard tag > 0 else {
            output.append(contentsOf: compacted[1...])
            return
        }
        let template = templates[Int(tag) - 1]
        var index = 1
        for (piece, reference) in zip(template.pieces, template.references) {
            output.append(contentsOf: piece)
            let length = Self.readLength(compacted, at: &index)
            if length == 0 {
                output.append(contentsOf: reference)
            } else {
                output.append(contentsOf: compacted[index..<index + length])
                index += length
            }
        }
        output.append(contentsOf: template.pieces[template.pieces.count - 1])
    }

    // MARK: - Reading the text

    /// `text` through the template's pieces: nil unless each piece is there, in order, with one
    /// whole JSON value between two, and the last ends the text.
    private mutating func compact(_ text: [UInt8], with template: Template, tag: UInt8) -> [UInt8]? {
        let pieces = template.pieces
        scratch.removeAll(keepingCapacity: true)
        scratch.append(tag)
        var index = 0
        for (number, piece) in pieces.enumerated() {
            guard text.count - index >= piece.count, text[index..<index + piece.count].elementsEqual(piece) else { return nil }
            index += piece.count
            if number == pieces.count - 1 { break }
            guard let end = Self.endOfValue(text, from: index) else { return nil }
            if text[index..<end].elementsEqual(template.references[number]) {
                scratch.append(0)
                index = end
                continue
            }
            var length = end - index
            while length >= 0x80 {
                scratch.append(UInt8(truncatingIfNeeded: length) | 0x80)
                length >>= 7
            }
            scratch.append(UInt8(length))
            scratch.append(contentsOf: text[index..<end])
            index = end
        }
        guard index == text.count else { return nil }
        return scratch.withUnsafeBufferPointer { Array($0) }
    }

    /// The pieces around the values of a text `{"key":value,...}` (no white space), and the
    /// values, or nil.
    static func pieces(of text: [UInt8]) -> (pieces: [[UInt8]], values: [[UInt8]])? {
        guard text.count > 2, text[0] == UInt8(ascii: "{") else { return nil }
        var pieces: [[UInt8]] = []
        var values: [[UInt8]] = []
        var start = 0
        var index = 1
        while true {
            guard index < text.count, text[index] == UInt8(ascii: "\""), let afterKey = endOfString(text, from: index),
                afterKey < text.count, text[afterKey] == UInt8(ascii: ":")
            else { return nil }
            index = afterKey + 1
            pieces.append(Array(text[start..<index]))
            guard let end = endOfValue(text, from: index), end < text.count else { return nil }
            values.append(Array(text[index..<end]))
            index = end
            start = end
            if text[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard text[index] == UInt8(ascii: "}"), index == text.count - 1 else { return nil }
            pieces.append([UInt8(ascii: "}")])
            return (pieces, values)
        }
    }

    /// Just past the string that opens at `start` (a quote), or nil when it does not close.
    static func endOfString(_ text: [UInt8], from start: Int) -> Int? {
        var index = start + 1
        while index < text.count {
            switch text[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""): return index + 1
            default: index += 1
            }
        }
        return nil
    }

    /// Just past the JSON value that starts at `start`, or nil. A number or literal ends before
    /// the next `,`, `}` or `]`.
    static func endOfValue(_ text: [UInt8], from start: Int) -> Int? {
        guard start < text.count else { return nil }
        switch text[start] {
        case UInt8(ascii: "\""):
            return endOfString(text, from: start)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            var index = start
            while index < text.count {
                switch text[index] {
                case UInt8(ascii: "\""):
                    guard let end = endOfString(text, from: index) else { return nil }
                    index = end
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return index + 1 }
                default: break
                }
                index += 1
            }
            return nil
        case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"):
            return nil
        default:
            var index = start
            while index < text.count, text[index] != UInt8(ascii: ","), text[index] != UInt8(ascii: "}"),
                text[index] != UInt8(ascii: "]")
            {
                index += 1
            }
            return index
        }
    }

    private static func readLength(_ compacted: [UInt8], at index: inout Int) -> Int {
        var length = 0
        var shift = 0
        while true {
            let byte = compacted[index]
            index += 1
            length |= Int(byte & 0x7F) << shift
            if byte < 0x80 { return length }
            shift += 7
        }
    }
}
