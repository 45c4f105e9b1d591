/// Writes a ``YAMLNode`` tree back as block-style YAML that ``YAMLParser`` reads as the same
/// tree: the add-on's configuration is written from the shipped file's nodes (its products,
/// kept as written) and nodes made from the add-on's options.
///
/// A plain scalar is written as it was read (it was a valid plain scalar, so the loader reads
/// the same text and the same meaning: `0x004C`, `true`, `null`); every other scalar is
/// written double-quoted with JSON-style escapes, which YAML's double-quoted style shares, so
/// nothing a user typed (a `#`, a `: `, a quote, a newline) can change the document's shape.
public enum YAMLWriter {
    /// The document, ending with a newline.
    public static func document(_ node: YAMLNode) -> String {
        var lines: [String] = []
        switch node.content {
        case .mapping(let entries) where !entries.isEmpty: write(entries, indent: "", into: &lines)
        case .sequence(let items) where !items.isEmpty: write(items, indent: "", into: &lines)
        default: lines.append(inline(node) ?? "{}")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A scalar node made by the caller: double-quoted, so it is always a string.
    public static func string(_ value: String) -> YAMLNode {
        YAMLNode(.scalar(.init(value: value, style: .doubleQuoted)), origin: .file(line: 0, column: 0))
    }

    /// A plain scalar made by the caller (a number, `true`, `false`).
    public static func plain(_ value: String) -> YAMLNode {
        YAMLNode(.scalar(.init(value: value, style: .plain)), origin: .file(line: 0, column: 0))
    }

    /// A mapping made by the caller, keys as plain scalars (they are the loader's own key names
    /// or were checked by the caller).
    public static func mapping(_ entries: [(String, YAMLNode)]) -> YAMLNode {
        YAMLNode(.mapping(entries.map { .init(key: plain($0.0), value: $0.1) }), origin: .file(line: 0, column: 0))
    }

    /// A mapping of `entries`, then the keys of `base` (a mapping) that `entries` does not set,
    /// as written there: a section of which only some keys are replaced.
    public static func mapping(_ entries: [(String, YAMLNode)], over base: YAMLNode?) -> YAMLNode {
        var entries = entries
        if case .mapping(let own)? = base?.content {
            for entry in own {
                guard let key = entry.key.scalar?.value, !entries.contains(where: { $0.0 == key }) else { continue }
                entries.append((key, entry.value))
            }
        }
        return mapping(entries)
    }

    public static func sequence(_ items: [YAMLNode]) -> YAMLNode {
        YAMLNode(.sequence(items), origin: .file(line: 0, column: 0))
    }

    private static func write(_ entries: [YAMLNode.Entry], indent: String, into lines: inout [String]) {
        for entry in entries {
            let key = inline(entry.key) ?? quoted("")
            if let value = inline(entry.value) {
                lines.append("\(indent)\(key): \(value)")
            } else {
                lines.append("\(indent)\(key):")
                writeBlock(entry.value, indent: indent + "  ", into: &lines)
            }
        }
    }

    private static func write(_ items: [YAMLNode], indent: String, into lines: inout [String]) {
        for item in items {
            if let value = inline(item) {
                lines.append("\(indent)- \(value)")
                continue
            }
            // The item's block one level in, its first line after the dash.
            var nested: [String] = []
            writeBlock(item, indent: indent + "  ", into: &nested)
            guard let first = nested.first else { continue }
            lines.append("\(indent)- " + first.dropFirst(indent.count + 2))
            lines.append(contentsOf: nested.dropFirst())
        }
    }

    private static func writeBlock(_ node: YAMLNode, indent: String, into lines: inout [String]) {
        switch node.content {
        case .mapping(let entries): write(entries, indent: indent, into: &lines)
        case .sequence(let items): write(items, indent: indent, into: &lines)
        case .scalar: lines.append(indent + (inline(node) ?? quoted("")))
        }
    }

    /// A scalar or an empty collection on one line; nil for a collection with content.
    private static func inline(_ node: YAMLNode) -> String? {
        switch node.content {
        case .mapping(let entries): return entries.isEmpty ? "{}" : nil
        case .sequence(let items): return items.isEmpty ? "[]" : nil
        case .scalar(let scalar):
            let tag = scalar.tag.map { "!<\($0)> " } ?? ""
            if scalar.style == .plain, !scalar.value.contains("\n") { return tag + scalar.value }
            return tag + quoted(scalar.value)
        }
    }

    /// `value` double-quoted: `\` and `"` escaped, control characters as escapes.
    static func quoted(_ value: String) -> String {
        var text = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\t": text += "\\t"
            case "\r": text += "\\r"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F || (0x80...0x9F).contains(scalar.value) {
                    let hex = String(scalar.value, radix: 16)
                    text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    text.unicodeScalars.append(scalar)
                }
            }
        }
        return text + "\""
    }
}
