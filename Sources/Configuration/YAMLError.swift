/// A YAML file that could not be read or parsed, with the position libyaml reported.
public struct YAMLError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, in libyaml's words where it has them.
    public var message: String
    /// 1-based line, when known.
    public var line: Int?
    /// 1-based column, when known.
    public var column: Int?

    /// Creates an error.
    public init(message: String, line: Int? = nil, column: Int? = nil) {
        self.message = message
        self.line = line
        self.column = column
    }

    public var description: String {
        guard let line else { return message }
        if let column { return "line \(line), column \(column): \(message)" }
        return "line \(line): \(message)"
    }
}
