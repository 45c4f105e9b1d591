/// One option a command takes: `--config PATH` (with a value) or `--dry-run` (a flag), with its
/// help line. Declared once, for the parser (what is accepted) and the usage (what it says).
struct CommandOption: Sendable {
    let name: String
    /// The value's placeholder (`PATH`), or nil for a flag.
    let value: String?
    /// The usage's line for it; nil for an option accepted but not shown.
    let help: String?

    init(_ name: String, value: String? = nil, help: String?) {
        self.name = name
        self.value = value
        self.help = help
    }

    var takesValue: Bool { value != nil }

    /// `--config PATH`, as the usage shows it.
    var label: String { value.map { "\(name) \($0)" } ?? name }

    static let config = CommandOption("--config", value: "PATH", help: "the bridge's configuration (default config/aabridge.yaml)")

    /// The usage's option lines: each label, padded to the longest one and two spaces, then its help.
    static func helpLines(_ options: [CommandOption]) -> String {
        let shown = options.filter { $0.help != nil }
        let width = (shown.map(\.label.count).max() ?? 0) + 2
        return shown.map { option in
            "  " + option.label + String(repeating: " ", count: width - option.label.count) + (option.help ?? "")
        }.joined(separator: "\n")
    }
}
