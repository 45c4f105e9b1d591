import AccessoryKit

/// Walks a parsed YAML tree into configuration values, collecting every issue
/// instead of stopping at the first: a user fixes a file in one pass.
///
/// Each reader returns nil after recording an issue, so callers keep the default
/// and carry on; the loader fails if any issue was recorded.
final class ConfigurationDecoder {
    /// A mapping's entries by key, with the path they live at.
    struct Fields {
        var path: String
        var values: [String: YAMLNode]

        subscript(key: String) -> YAMLNode? { values[key] }

        /// The key path of one key.
        func path(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }
    }

    private(set) var issues: [ConfigurationIssue] = []
    /// Every product name read, including products left out for other errors, so a migration
    /// naming one is not also reported as "no product named".
    var productNames: Set<String> = []
    /// For each decoded product, its index in the file (products with errors are left out).
    var productIndices: [Int] = []
    /// For each decoded accessory, its index in the file.
    var accessoryIndices: [Int] = []
    /// Where each key path's value was written, so rule issues found later can point at it.
    var origins: [String: YAMLNode.Origin] = [:]

    /// Records an issue.
    func fail(_ path: String, _ message: String, at node: YAMLNode?) {
        issues.append(ConfigurationIssue(path: path, message: message, origin: node?.origin))
    }

    // MARK: Structure

    /// Reads a mapping, reporting a wrong type, duplicate keys and unknown keys (with a suggestion).
    /// A null node (an empty section) reads as an empty mapping so that its defaults apply.
    func fields(_ node: YAMLNode?, at path: String, allowed: [String]) -> Fields? {
        guard let node else { return Fields(path: path, values: [:]) }
        if node.isNull { return Fields(path: path, values: [:]) }
        guard case .mapping = node.content else {
            fail(path, "expected a mapping, found \(node.kindName)", at: node)
            return nil
        }
        let entries = mergingKeys(of: node, at: path)
        var values: [String: YAMLNode] = [:]
        var firstKeys: [String: YAMLNode] = [:]
        for entry in entries {
            guard let key = entry.key.scalar, !key.isNull else {
                fail(path, "keys must be plain names, found \(entry.key.kindName)", at: entry.key)
                continue
            }
            let keyPath = path.isEmpty ? key.value : "\(path).\(key.value)"
            if let first = firstKeys[key.value] {
                fail(keyPath, "duplicate key (first given at \(first.origin))", at: entry.key)
                continue
            }
            firstKeys[key.value] = entry.key
            guard allowed.contains(key.value) else {
                var message = "unknown key"
                if let suggestion = Self.suggestion(for: key.value, among: allowed) {
                    message += "; did you mean '\(suggestion)'?"
                } else {
                    message += "; allowed here: \(allowed.joined(separator: ", "))"
                }
                fail(keyPath, message, at: entry.key)
                continue
            }
            values[key.value] = entry.value
            origins[keyPath] = entry.value.origin
        }
        return Fields(path: path, values: values)
    }

    /// The mapping's entries with YAML merge keys (`<<: *defaults` or `<<: [*a, *b]`) applied:
    /// keys written in the mapping win over merged ones, and earlier merged mappings over later ones.
    private func mergingKeys(of node: YAMLNode, at path: String) -> [YAMLNode.Entry] {
        guard case let .mapping(entries) = node.content else { return [] }
        var explicit: [YAMLNode.Entry] = []
        var sources: [YAMLNode] = []
        for entry in entries {
            guard let key = entry.key.scalar, key.style == .plain, key.tag == nil, key.value == "<<" else {
                explicit.append(entry)
                continue
            }
            switch entry.value.content {
            case .mapping: sources.append(entry.value)
            case let .sequence(items) where items.allSatisfy({ if case .mapping = $0.content { true } else { false } }):
                sources += items
            default:
                fail(path.isEmpty ? "<<" : "\(path).<<", "a merge key needs a mapping or a list of mappings", at: entry.value)
            }
        }
        guard !sources.isEmpty else { return explicit }
        var seen = Set(explicit.compactMap { $0.key.scalar?.value })
        var merged = explicit
        for source in sources {
            for entry in mergingKeys(of: source, at: path) {
                guard let key = entry.key.scalar?.value, !seen.contains(key) else { continue }
                seen.insert(key)
                merged.append(entry)
            }
        }
        return merged
    }

    /// Reads a list; null or missing reads as empty.
    func list(_ node: YAMLNode?, at path: String) -> [YAMLNode]? {
        guard let node, !node.isNull else { return [] }
        guard case let .sequence(items) = node.content else {
            fail(path, "expected a list, found \(node.kindName)", at: node)
            return nil
        }
        return items
    }

    // MARK: Scalars

    /// The text of a non-null scalar; nil for null or missing (no issue), nil with an issue for a list or mapping.
    /// The message never repeats the value, so it is safe for secrets.
    func string(_ node: YAMLNode?, at path: String) -> String? {
        guard let node else { return nil }
        switch node.content {
        case let .scalar(scalar): return scalar.isNull ? nil : scalar.value
        default:
            fail(path, "expected a string, found \(node.kindName)", at: node)
            return nil
        }
    }

    /// A string that must be present and not empty.
    func requiredString(_ fields: Fields, _ key: String) -> String? {
        guard let node = fields[key], !node.isNull else {
            fail(fields.path(key), "is required", at: fields[key])
            return nil
        }
        guard let text = string(node, at: fields.path(key)) else { return nil }
        guard !text.isEmpty else {
            fail(fields.path(key), "must not be empty", at: node)
            return nil
        }
        return text
    }

    /// An optional string that, when given, must not be empty.
    func optionalString(_ fields: Fields, _ key: String) -> String?? {
        guard let node = fields[key] else { return .some(nil) }
        if node.isNull { return .some(nil) }
        guard let text = string(node, at: fields.path(key)) else { return nil }
        guard !text.isEmpty else {
            fail(fields.path(key), "must not be empty (leave it out or write null)", at: node)
            return nil
        }
        return .some(text)
    }

    /// A decimal or `0x` hexadecimal integer within `range`.
    /// - Parameter hex: show the range in hex (company identifiers, bytes).
    func integer(_ node: YAMLNode?, at path: String, in range: ClosedRange<Int>, hex: Bool = false) -> Int? {
        guard let node, !node.isNull else { return nil }
        guard let text = scalarText(node, at: path, expected: "an integer") else { return nil }
        guard let value = Self.parseInteger(text) else {
            fail(path, "expected an integer (decimal or 0x hex), found '\(text)'", at: node)
            return nil
        }
        guard range.contains(value) else {
            let bounds =
                hex
                ? "0x\(String(range.lowerBound, radix: 16, uppercase: true)) and 0x\(String(range.upperBound, radix: 16, uppercase: true))"
                : "\(range.lowerBound) and \(range.upperBound)"
            fail(path, "must be between \(bounds), found \(text)", at: node)
            return nil
        }
        return value
    }

    /// `true`/`false` (also `yes`/`no`/`on`/`off`, any case).
    func bool(_ node: YAMLNode?, at path: String) -> Bool? {
        guard let node, !node.isNull else { return nil }
        guard let text = scalarText(node, at: path, expected: "true or false") else { return nil }
        switch text.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default:
            fail(path, "expected true or false, found '\(text)'", at: node)
            return nil
        }
    }

    /// One of an enumeration's raw values; an unknown value lists the allowed ones.
    func enumeration<Value: RawRepresentable & CaseIterable>(_ type: Value.Type, _ node: YAMLNode?, at path: String) -> Value?
    where Value.RawValue == String {
        guard let node, !node.isNull else { return nil }
        let allowed = Value.allCases.map(\.rawValue)
        guard let text = scalarText(node, at: path, expected: "one of \(allowed.joined(separator: ", "))") else { return nil }
        if let value = Value(rawValue: text) { return value }
        var message = "unknown value '\(text)'; allowed: \(allowed.joined(separator: ", "))"
        if let suggestion = Self.suggestion(for: text, among: allowed) { message += " (did you mean '\(suggestion)'?)" }
        fail(path, message, at: node)
        return nil
    }

    /// Hex bytes (`0719`, `0x0719`, spaces and colons allowed between bytes); `count` demands a length.
    func hexBytes(_ node: YAMLNode?, at path: String, count: Int? = nil) -> [UInt8]? {
        guard let node, !node.isNull else { return nil }
        guard let text = scalarText(node, at: path, expected: "hex bytes") else { return nil }
        guard let bytes = Self.parseHex(text), !bytes.isEmpty else {
            fail(path, "expected hex bytes such as \"0719\", found '\(text)'", at: node)
            return nil
        }
        if let count, bytes.count != count {
            fail(path, "must be \(count) bytes (\(count * 2) hex digits), found \(bytes.count)", at: node)
            return nil
        }
        return bytes
    }

    /// A Bluetooth address `AA:BB:CC:DD:EE:FF`.
    func address(_ node: YAMLNode?, at path: String) -> BluetoothAddress? {
        guard let node, !node.isNull else { return nil }
        guard let text = scalarText(node, at: path, expected: "a Bluetooth address") else { return nil }
        guard let address = BluetoothAddress(text) else {
            fail(path, "expected a Bluetooth address such as \"A1:B2:C3:D4:E5:F6\", found '\(text)'", at: node)
            return nil
        }
        return address
    }

    /// A 16-bit (`FE2C`) or 128-bit Bluetooth UUID.
    func uuid(_ node: YAMLNode?, at path: String) -> BluetoothUUID? {
        guard let node, !node.isNull else { return nil }
        guard let text = scalarText(node, at: path, expected: "a Bluetooth UUID") else { return nil }
        guard let uuid = BluetoothUUID(text) else {
            fail(path, "expected a Bluetooth UUID such as \"FE2C\" or a 128-bit UUID, found '\(text)'", at: node)
            return nil
        }
        return uuid
    }

    /// The scalar's text, or an issue saying what was expected.
    func scalarText(_ node: YAMLNode, at path: String, expected: String) -> String? {
        guard let scalar = node.scalar else {
            fail(path, "expected \(expected), found \(node.kindName)", at: node)
            return nil
        }
        return scalar.value
    }

    // MARK: Helpers

    /// Decimal (optionally signed) or `0x` hex.
    static func parseInteger(_ text: String) -> Int? {
        let trimmed = text.trimmingWhitespace
        let lower = trimmed.lowercased()
        if lower.hasPrefix("0x") {
            let digits = lower.dropFirst(2)
            guard !digits.isEmpty, digits.count <= 15 else { return nil }
            return Int(digits, radix: 16)
        }
        if lower.hasPrefix("-0x") {
            let digits = lower.dropFirst(3)
            guard !digits.isEmpty, digits.count <= 15, let value = Int(digits, radix: 16) else { return nil }
            return -value
        }
        return Int(trimmed)
    }

    /// Hex bytes with an optional `0x` and optional space, colon or dash separators.
    static func parseHex(_ text: String) -> [UInt8]? {
        let digits = text.utf8.filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: ":") && $0 != UInt8(ascii: "-") }
        return AccessoryKit.Hex.bytes(String(decoding: digits, as: UTF8.self))
    }

    /// The closest allowed word within a small edit distance, for "did you mean".
    static func suggestion(for word: String, among candidates: [String]) -> String? {
        let lowered = word.lowercased()
        let scored = candidates.map { ($0, editDistance(lowered, $0.lowercased())) }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
        let limit = max(1, min(3, best.0.count / 3))
        return best.1 <= limit ? best.0 : nil
    }

    /// Edit distance counting a swap of two neighbours as one edit (optimal string alignment),
    /// since `jsno` for `json` is the typo people make.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                }
            }
        }
        return d[a.count][b.count]
    }
}

extension String {
    /// Without leading and trailing spaces, tabs and newlines (no Foundation needed).
    var trimmingWhitespace: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let start = firstIndex(where: { !isSpace($0) }), let end = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[start...end])
    }
}
