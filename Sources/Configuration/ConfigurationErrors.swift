/// Every issue found in a configuration, all at once; the process exits with `exitStatus`.
public struct ConfigurationErrors: Error, Hashable, Sendable, CustomStringConvertible {
    /// The exit status for an invalid configuration.
    public static let exitStatus: Int32 = 2

    /// The file that was checked.
    public var file: String
    /// In file order, then the descriptor and declaration rules.
    public var issues: [ConfigurationIssue]

    /// Creates the error.
    public init(file: String, issues: [ConfigurationIssue]) {
        self.file = file
        self.issues = issues
    }

    /// A header line, then one issue per line.
    public var description: String {
        let count = issues.count == 1 ? "1 error" : "\(issues.count) errors"
        return (["\(file): \(count) in the configuration:"] + issues.map { "  \($0)" }).joined(separator: "\n")
    }
}
