import JSON

/// Literals for the Jinja templates of the discovery payloads (Home Assistant renders them
/// with Jinja2), built from names a user chose: a name may hold quotes, backslashes or
/// braces, and must never end a string or a `{{ }}` block early.
enum JinjaLiteral {
    /// A double-quoted Jinja string for `text`.
    ///
    /// JSON's escapes (`\"`, `\\`, `\n`, `\uXXXX`) are the ones Jinja's string literals
    /// understand; `{` and `}` are written as `\u007b` / `\u007d` as well, so a name with
    /// `}}` or `{%` reads as text in every template parser (and in a delimiter count).
    static func string(_ text: String) -> String {
        var literal = ""
        for character in JSONValue.string(text).serialized {
            switch character {
            case "{": literal += "\\u007b"
            case "}": literal += "\\u007d"
            default: literal.append(character)
            }
        }
        return literal
    }

    /// A Jinja dict literal `{"key": "value", ...}` in the given order.
    static func dictionary(_ pairs: [(key: String, value: String)]) -> String {
        "{" + pairs.map { "\(string($0.key)): \(string($0.value))" }.joined(separator: ", ") + "}"
    }

    /// A Jinja list literal of strings.
    static func list(_ values: [String]) -> String {
        "[" + values.map(string).joined(separator: ", ") + "]"
    }
}
