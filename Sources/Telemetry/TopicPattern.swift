/// An MQTT topic filter (`+` one level, `#` the rest) that matches topics and returns what the
/// wildcards stood for, so a gateway's name can be read from its position in the topic.
public struct TopicPattern: Hashable, Sendable, CustomStringConvertible {
    /// One level of the filter. A literal is a range of ``literalBytes``: levels hold no
    /// array of their own, so matching (for every incoming message) copies and retains nothing.
    struct Level: Hashable, Sendable {
        enum Kind: Hashable, Sendable { case literal, single, multi }
        var kind: Kind
        var start = 0
        var end = 0
    }

    /// The filter as written.
    public let filter: String
    let levels: [Level]
    /// The literal levels' bytes, one after the other.
    let literalBytes: [UInt8]
    /// How many `+` levels the filter has (computed once: it is consulted per message).
    public let singleLevelWildcards: Int

    /// Parses a filter.
    /// - Returns: `nil` when it is empty, or `+` / `#` share a level with other characters,
    ///   or `#` is not the last level (MQTT 3.1.1, 4.7.1).
    public init?(_ filter: String) {
        guard !filter.isEmpty else { return nil }
        var levels: [Level] = []
        var literalBytes: [UInt8] = []
        let parts = filter.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        for (index, part) in parts.enumerated() {
            if part.elementsEqual("+".utf8) {
                levels.append(Level(kind: .single))
            } else if part.elementsEqual("#".utf8) {
                guard index == parts.count - 1 else { return nil }
                levels.append(Level(kind: .multi))
            } else {
                guard !part.contains(UInt8(ascii: "+")), !part.contains(UInt8(ascii: "#")) else { return nil }
                let start = literalBytes.count
                literalBytes.append(contentsOf: part)
                levels.append(Level(kind: .literal, start: start, end: literalBytes.count))
            }
        }
        self.filter = filter
        self.levels = levels
        self.literalBytes = literalBytes
        self.singleLevelWildcards = levels.filter { $0.kind == .single }.count
    }

    public var description: String { filter }

    /// Whether the filter has any wildcard.
    public var hasWildcards: Bool { levels.contains { $0.kind != .literal } }

    /// Matches a topic.
    /// - Returns: the texts of the wildcard levels in order (`#` gives the remaining levels joined
    ///   by `/`, possibly empty), or `nil` when the topic does not match. As MQTT requires, a
    ///   wildcard at the first level does not match a topic starting with `$`.
    public func match(_ topic: String) -> [String]? {
        match(topic, keepingAtMost: .max)
    }

    /// ``match(_:)`` keeping only the first `limit` captures: the others are matched but no
    /// `String` is made of them (a gateway's parser reads its name from the first `+` and never
    /// looks at the address level after it: one allocation less per message).
    public func match(_ topic: String, keepingAtMost limit: Int) -> [String]? {
        var topic = topic
        return topic.withUTF8 { match(utf8: UnsafeRawBufferPointer($0), keepingAtMost: limit) }
    }

    /// Whether the filter matches a topic (``match(_:)`` without the captures, which cost an
    /// allocation: the router asks this for every message).
    public func matches(_ topic: String) -> Bool {
        var topic = topic
        return topic.withUTF8 { match(utf8: UnsafeRawBufferPointer($0), capturing: false) != nil }
    }

    /// - Parameter capturing: false returns an empty array for a match, allocating nothing.
    func match(utf8 topic: UnsafeRawBufferPointer, capturing: Bool = true) -> [String]? {
        match(utf8: topic, keepingAtMost: capturing ? .max : 0)
    }

    /// - Parameter limit: how many captures to make, from the first; 0 allocates nothing.
    func match(utf8 topic: UnsafeRawBufferPointer, keepingAtMost limit: Int) -> [String]? {
        levels.withUnsafeBufferPointer { levels in
            literalBytes.withUnsafeBufferPointer { literals in
                match(topic, levels: levels, literals: literals, limit: limit)
            }
        }
    }

    private func match(
        _ topic: UnsafeRawBufferPointer, levels: UnsafeBufferPointer<Level>, literals: UnsafeBufferPointer<UInt8>, limit: Int
    ) -> [String]? {
        if let first = levels.first, first.kind != .literal, topic.first == UInt8(ascii: "$") { return nil }
        var captures: [String] = []
        if limit > 0 { captures.reserveCapacity(min(limit, singleLevelWildcards + 1)) } // one allocation, no regrowth
        var position = 0 // start of the current topic level
        var atEnd = false // the previous level ended at the end of the topic
        for level in levels {
            if level.kind == .multi {
                // `a/#` also matches `a` itself.
                if captures.count < limit {
                    captures.append(atEnd ? "" : String(decoding: UnsafeRawBufferPointer(rebasing: topic[position...]), as: UTF8.self))
                }
                return captures
            }
            if atEnd { return nil }
            var end = position
            while end < topic.count, topic[end] != UInt8(ascii: "/") { end += 1 }
            switch level.kind {
            case .literal:
                guard end - position == level.end - level.start else { return nil }
                var offset = 0
                while offset < level.end - level.start {
                    guard literals[level.start + offset] == topic[position + offset] else { return nil }
                    offset += 1
                }
            case .single:
                if captures.count < limit {
                    captures.append(String(decoding: UnsafeRawBufferPointer(rebasing: topic[position..<end]), as: UTF8.self))
                }
            case .multi:
                break
            }
            if end == topic.count { atEnd = true } else { position = end + 1 }
        }
        return atEnd ? captures : nil
    }
}
