/// One node of a parsed YAML document, as the configuration loader sees it.
///
/// Scalars keep their source text and style: the loader decides what a scalar
/// means from the key it belongs to, so `0719` stays the four characters a blob
/// needs, while `null`, `~` and an empty plain value can still be told apart from
/// the quoted strings `"null"` and `""`.
public struct YAMLNode: Hashable, Sendable {
    /// Where a node came from, for error messages.
    public enum Origin: Hashable, Sendable, CustomStringConvertible {
        /// A position in the file, 1-based.
        case file(line: Int, column: Int)
        /// An `AABRIDGE_<SECTION>_<KEY>` environment variable.
        case environment(variable: String)

        public var description: String {
            switch self {
            case let .file(line, column): "line \(line), column \(column)"
            case let .environment(variable): "from environment variable \(variable)"
            }
        }
    }

    /// How a scalar was written.
    public enum ScalarStyle: Hashable, Sendable {
        case plain
        case singleQuoted
        case doubleQuoted
        case literal
        case folded
    }

    /// A scalar's text and how it was written.
    public struct Scalar: Hashable, Sendable {
        public var value: String
        public var style: ScalarStyle
        /// An explicit tag such as `!!str`, expanded (`tag:yaml.org,2002:str`); nil when none.
        public var tag: String?

        /// Creates a scalar.
        public init(value: String, style: ScalarStyle = .plain, tag: String? = nil) {
            self.value = value
            self.style = style
            self.tag = tag
        }

        /// YAML 1.2 core-schema null: a plain `null`/`Null`/`NULL`/`~`/empty value, or an explicit `!!null`.
        public var isNull: Bool {
            if let tag { return tag == "tag:yaml.org,2002:null" }
            return style == .plain && ["", "~", "null", "Null", "NULL"].contains(value)
        }
    }

    /// One `key: value` pair of a mapping, in file order.
    public struct Entry: Hashable, Sendable {
        public var key: YAMLNode
        public var value: YAMLNode

        /// Creates an entry.
        public init(key: YAMLNode, value: YAMLNode) {
            self.key = key
            self.value = value
        }
    }

    /// What the node holds.
    public enum Content: Hashable, Sendable {
        case scalar(Scalar)
        case sequence([YAMLNode])
        /// Entries in file order; duplicates are kept so the loader can report them with their path.
        case mapping([Entry])
    }

    public var content: Content
    public var origin: Origin

    /// Creates a node.
    public init(_ content: Content, origin: Origin) {
        self.content = content
        self.origin = origin
    }

    /// The value under `key` when this is a mapping (the first entry with that key), else nil.
    public func value(forKey key: String) -> YAMLNode? {
        guard case .mapping(let entries) = content else { return nil }
        return entries.first { $0.key.scalar?.value == key }?.value
    }

    /// The scalar, when this node is one.
    public var scalar: Scalar? {
        if case let .scalar(scalar) = content { return scalar }
        return nil
    }

    /// Whether this node is a YAML null.
    public var isNull: Bool { scalar?.isNull == true }

    /// A short name of the node's kind for "expected X, found Y" messages.
    public var kindName: String {
        switch content {
        case let .scalar(scalar): scalar.isNull ? "null" : "a scalar"
        case .sequence: "a list"
        case .mapping: "a mapping"
        }
    }
}
