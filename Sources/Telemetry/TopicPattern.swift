/// An MQTT topic filter (`+` one level, `#` the rest) that matches topics and returns what the
/// wildcards stood for, so a gateway's name can be read from its position in the topic.
public struct TopicPattern: Hashable, Sendable, CustomStringConvertible {
    enum Level: Hashable, Sendable {
        case literal([UInt8])
        case single
        case multi
    }

    /// The filter as written.
    public let filter: String
    let levels: [Level]
    /// How many `+` levels the filter has (computed once: it is consulted per message).
    public let singleLevelWildcards: Int

    /// Parses a filter.
    /// - Returns: `nil` when it is empty, or `+` / `#` share a level with other characters,
    ///   or `#` is not the last level (MQTT 3.1.1, 4.7.1).
    public init?(_ filter: String) {
        guard !filter.isEmpty else { return nil }
        var levels: [Level] = []
        let parts = filter.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        for (index, part) in parts.enumerated() {
            if part.elementsEqual("+".utf8) {
                levels.append(.single)
            } else if part.elementsEqual("#".utf8) {
                guard index == parts.count - 1 else { return nil }
                levels.append(.multi)
            } else {
                guard !part.contains(UInt8(ascii: "+")), !part.contains(UInt8(ascii: "#")) else { return nil }
                levels.append(.literal(Array(part)))
            }
        }
        self.filter = filter
        self.levels = levels
        self.singleLevelWildcards = levels.filter { $0 == .single }.count
    }

    public var description: String { filter }

    /// Whether the filter has any wildcard.
    public var hasWildcards: Bool { levels.contains { !Self.isLiteral($0) } }

    private static func isLiteral(_ level: Level) -> Bool {
        if case .literal = level { return true }
        return false
    }

    /// Matches a topic.
    /// - Returns: the texts of the wildcard levels in order (`#` gives the remaining levels joined
    ///   by `/`, possibly empty), or `nil` when the topic does not match. As MQTT requires, a
    ///   wildcard at the first level does not match a topic starting with `$`.
    public func match(_ topic: String) -> [String]? {
        var topic = topic
        return topic.withUTF8 { match(utf8: UnsafeRawBufferPointer($0)) }
    }

    /// Whether the filter matches a topic (``match(_:)`` without the captures, which cost an
    /// allocation: the router asks this for every message).
    public func matches(_ topic: String) -> Bool {
        var topic = topic
        return topic.withUTF8 { match(utf8: UnsafeRawBufferPointer($0), capturing: false) != nil }
    }

    /// - Parameter capturing: false returns an empty array for a match, allocating nothing.
    func match(utf8 topic: UnsafeRawBufferPointer, capturing: Bool = true) -> [String]? {
        if let first = levels.first, !Self.isLiteral(first), topic.first == UInt8(ascii: "$") { return nil }
        var captures: [String] = []
        if capturing { captures.reserveCapacity(singleLevelWildcards + 1) } // one allocation, no regrowth
        var position = 0 // start of the current topic level
        var atEnd = false // the previous level ended at the end of the topic
        for level in levels {
            if case .multi = level {
                // `a/#` also matches `a` itself.
                if capturing {
                    captures.append(atEnd ? "" : String(decoding: UnsafeRawBufferPointer(rebasing: topic[position...]), as: UTF8.self))
                }
                return captures
            }
            if atEnd { return nil }
            var end = position
            while end < topic.count, topic[end] != UInt8(ascii: "/") { end += 1 }
            let text = UnsafeRawBufferPointer(rebasing: topic[position..<end])
            switch level {
            case .literal(let literal):
                guard text.count == literal.count else { return nil }
                // Byte loop: the generic `elementsEqual` showed up in the parse profile.
                let equal = literal.withUnsafeBufferPointer { literalBytes in
                    for index in 0..<literalBytes.count where literalBytes[index] != text[index] { return false }
                    return true
                }
                guard equal else { return nil }
            case .single:
                if capturing { captures.append(String(decoding: text, as: UTF8.self)) }
            case .multi:
                break
            }
            if end == topic.count { atEnd = true } else { position = end + 1 }
        }
        return atEnd ? captures : nil
    }
}
