import CYAML

/// Parses one YAML document into a `YAMLNode` tree with libyaml's event API.
///
/// The event API (rather than libyaml's document loader) lets us keep every
/// scalar's style, refuse duplicate documents, and bound alias expansion as we go.
public struct YAMLParser: Sendable {
    /// Inputs larger than this are refused before libyaml sees them.
    public var maximumInputSize: Int
    /// The most nodes the document may have, counting every alias as the nodes it
    /// stands for; this is what stops a "billion laughs" document.
    public var maximumNodeCount: Int
    /// The deepest nesting accepted; a configuration is a few levels deep, and the
    /// tree is built recursively.
    public var maximumDepth: Int

    /// Creates a parser with limits far above what a configuration needs.
    public init(maximumInputSize: Int = 1 << 20, maximumNodeCount: Int = 100_000, maximumDepth: Int = 64) {
        self.maximumInputSize = maximumInputSize
        self.maximumNodeCount = maximumNodeCount
        self.maximumDepth = maximumDepth
    }

    /// Parses UTF-8 (or UTF-16 with a BOM, as libyaml detects) bytes.
    /// - Returns: the document's root node, or nil for an empty document.
    public func parse(_ bytes: [UInt8]) throws(YAMLError) -> YAMLNode? {
        guard bytes.count <= maximumInputSize else {
            throw YAMLError(message: "the file has \(bytes.count) bytes; at most \(maximumInputSize) are accepted")
        }
        if bytes.contains(0) {
            // libyaml would stop at the NUL without saying so; a configuration never holds one.
            let line = bytes.prefix(while: { $0 != 0 }).filter { $0 == UInt8(ascii: "\n") }.count + 1
            throw YAMLError(message: "the file contains a NUL byte", line: line)
        }
        var state = EventReader(limits: self)
        defer { state.deallocate() }
        return try bytes.withUnsafeBufferPointer { (buffer) throws(YAMLError) -> YAMLNode? in
            try state.document(buffer)
        }
    }

    /// Parses a string.
    public func parse(_ text: String) throws(YAMLError) -> YAMLNode? {
        try parse(Array(text.utf8))
    }
}

/// The C-facing part: owns the libyaml parser for one parse and turns events into nodes.
private struct EventReader {
    /// One libyaml event, copied out so the C event can be freed at once.
    enum Event {
        case streamStart, streamEnd, documentStart, documentEnd
        case scalar(YAMLNode.Scalar, anchor: String?, origin: YAMLNode.Origin)
        case sequenceStart(anchor: String?, origin: YAMLNode.Origin)
        case sequenceEnd
        case mappingStart(anchor: String?, origin: YAMLNode.Origin)
        case mappingEnd
        case alias(String, origin: YAMLNode.Origin)
    }

    let limits: YAMLParser
    /// On the heap: libyaml keeps a pointer to the parser itself (its string reader's
    /// handler data), so the struct must never move while it is in use.
    let parser: UnsafeMutablePointer<yaml_parser_t>
    /// Anchored nodes with their expanded size.
    var anchors: [String: (node: YAMLNode, size: Int)] = [:]
    /// Nodes so far, aliases counted at their expanded size.
    var nodeCount = 0

    init(limits: YAMLParser) {
        self.limits = limits
        self.parser = .allocate(capacity: 1)
        parser.initialize(to: yaml_parser_t())
    }

    /// Frees the parser's memory; libyaml's own state is freed by `document`.
    func deallocate() {
        parser.deinitialize(count: 1)
        parser.deallocate()
    }

    mutating func document(_ buffer: UnsafeBufferPointer<UInt8>) throws(YAMLError) -> YAMLNode? {
        guard yaml_parser_initialize(parser) != 0 else { throw YAMLError(message: "libyaml could not start (out of memory)") }
        defer { yaml_parser_delete(parser) }
        if let base = buffer.baseAddress {
            yaml_parser_set_input_string(parser, base, buffer.count)
        } else {
            return nil
        }
        guard case .streamStart = try next() else { throw YAMLError(message: "expected the start of the stream") }
        var root: YAMLNode?
        switch try next() {
        case .streamEnd:
            return nil
        case .documentStart:
            let first = try next()
            root = try node(first, depth: 0).node
            guard case .documentEnd = try next() else { throw YAMLError(message: "expected the end of the document") }
        default:
            throw YAMLError(message: "expected a document")
        }
        switch try next() {
        case .streamEnd:
            return root
        default:
            let mark = parser.pointee.mark
            throw YAMLError(
                message: "the file holds more than one YAML document; give one", line: Int(mark.line) + 1, column: Int(mark.column) + 1)
        }
    }

    /// Builds the node that starts with `event`; returns it with its expanded size.
    mutating func node(_ event: Event, depth: Int) throws(YAMLError) -> (node: YAMLNode, size: Int) {
        let result: (node: YAMLNode, size: Int)
        let anchor: String?
        switch event {
        case let .scalar(scalar, a, origin):
            anchor = a
            result = (YAMLNode(.scalar(scalar), origin: origin), 1)
            try count(1, at: origin)
        case let .alias(name, origin):
            guard let target = anchors[name] else {
                throw error("unknown alias *\(name)", at: origin)
            }
            try count(target.size, at: origin)
            // The alias takes the anchored value; errors inside it then point at the anchor, which is where to fix them.
            return target
        case let .sequenceStart(a, origin):
            anchor = a
            guard depth < limits.maximumDepth else { throw error("nesting deeper than \(limits.maximumDepth) levels", at: origin) }
            try count(1, at: origin)
            var items: [YAMLNode] = []
            var size = 1
            while true {
                let next = try next()
                if case .sequenceEnd = next { break }
                let item = try node(next, depth: depth + 1)
                items.append(item.node)
                size += item.size
            }
            result = (YAMLNode(.sequence(items), origin: origin), size)
        case let .mappingStart(a, origin):
            anchor = a
            guard depth < limits.maximumDepth else { throw error("nesting deeper than \(limits.maximumDepth) levels", at: origin) }
            try count(1, at: origin)
            var entries: [YAMLNode.Entry] = []
            var size = 1
            while true {
                let next = try next()
                if case .mappingEnd = next { break }
                let key = try node(next, depth: depth + 1)
                let value = try node(try self.next(), depth: depth + 1)
                entries.append(.init(key: key.node, value: value.node))
                size += key.size + value.size
            }
            result = (YAMLNode(.mapping(entries), origin: origin), size)
        default:
            let mark = parser.pointee.mark
            throw YAMLError(message: "unexpected YAML event", line: Int(mark.line) + 1, column: Int(mark.column) + 1)
        }
        if let anchor { anchors[anchor] = result }
        return result
    }

    mutating func count(_ nodes: Int, at origin: YAMLNode.Origin) throws(YAMLError) {
        nodeCount += nodes
        if nodeCount > limits.maximumNodeCount {
            throw error("the document expands to more than \(limits.maximumNodeCount) nodes (too many aliases?)", at: origin)
        }
    }

    func error(_ message: String, at origin: YAMLNode.Origin) -> YAMLError {
        if case let .file(line, column) = origin { return YAMLError(message: message, line: line, column: column) }
        return YAMLError(message: message)
    }

    /// The next event, copied; a libyaml error becomes a `YAMLError` with its position.
    mutating func next() throws(YAMLError) -> Event {
        var event = yaml_event_t()
        guard yaml_parser_parse(parser, &event) != 0 else { throw parserError() }
        defer { yaml_event_delete(&event) }
        let origin = YAMLNode.Origin.file(line: Int(event.start_mark.line) + 1, column: Int(event.start_mark.column) + 1)
        switch event.type {
        case YAML_STREAM_START_EVENT: return .streamStart
        case YAML_STREAM_END_EVENT: return .streamEnd
        case YAML_DOCUMENT_START_EVENT: return .documentStart
        case YAML_DOCUMENT_END_EVENT: return .documentEnd
        case YAML_SCALAR_EVENT:
            let data = event.data.scalar
            let value = Self.string(data.value, length: Int(data.length)) ?? ""
            let style: YAMLNode.ScalarStyle =
                switch data.style {
                case YAML_SINGLE_QUOTED_SCALAR_STYLE: .singleQuoted
                case YAML_DOUBLE_QUOTED_SCALAR_STYLE: .doubleQuoted
                case YAML_LITERAL_SCALAR_STYLE: .literal
                case YAML_FOLDED_SCALAR_STYLE: .folded
                default: .plain
                }
            let tag = Self.string(data.tag)
            return .scalar(.init(value: value, style: style, tag: tag), anchor: Self.string(data.anchor), origin: origin)
        case YAML_SEQUENCE_START_EVENT:
            return .sequenceStart(anchor: Self.string(event.data.sequence_start.anchor), origin: origin)
        case YAML_SEQUENCE_END_EVENT: return .sequenceEnd
        case YAML_MAPPING_START_EVENT:
            return .mappingStart(anchor: Self.string(event.data.mapping_start.anchor), origin: origin)
        case YAML_MAPPING_END_EVENT: return .mappingEnd
        case YAML_ALIAS_EVENT:
            return .alias(Self.string(event.data.alias.anchor) ?? "", origin: origin)
        default:
            throw YAMLError(
                message: "unexpected YAML event", line: Int(event.start_mark.line) + 1, column: Int(event.start_mark.column) + 1)
        }
    }

    /// libyaml's problem and context, with the problem's position.
    func parserError() -> YAMLError {
        let parser = self.parser.pointee
        let problem = parser.problem.map { String(cString: $0) } ?? "invalid YAML"
        let context = parser.context.map { String(cString: $0) }
        let message = context.map { "\($0): \(problem)" } ?? problem
        let mark: yaml_mark_t
        switch parser.error {
        case YAML_READER_ERROR:
            // The reader reports a byte offset only; it is what a user needs for bad encodings.
            return YAMLError(message: "\(message) at byte \(parser.problem_offset) (the file must be UTF-8)")
        default:
            mark = parser.problem_mark
        }
        return YAMLError(message: message, line: Int(mark.line) + 1, column: Int(mark.column) + 1)
    }

    static func string(_ pointer: UnsafeMutablePointer<yaml_char_t>?, length: Int? = nil) -> String? {
        guard let pointer else { return nil }
        var count = 0
        if let length {
            count = length
        } else {
            while pointer[count] != 0 { count += 1 }
        }
        let buffer = UnsafeBufferPointer(start: pointer, count: count)
        // libyaml has already checked the encoding; decoding with repair keeps us crash-free regardless.
        return String(decoding: buffer, as: UTF8.self)
    }
}
