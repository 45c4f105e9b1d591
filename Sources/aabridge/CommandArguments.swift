import Configuration

/// A command's arguments as the one parser of the executable read them, against the options the
/// command declares (``CommandDeclaration``): the values, the flags, and the leading argument of
/// a command that takes one (`keys import-macos FILE`).
struct CommandArguments: Sendable {
    private(set) var values: [String: String] = [:]
    private(set) var flags: Set<String> = []
    private(set) var positional: String?

    /// The value given to `option`, or nil.
    subscript(_ option: String) -> String? { values[option] }

    /// Whether the flag `option` was given.
    func has(_ option: String) -> Bool { flags.contains(option) }

    /// The configuration file named by `--config`, or the default.
    var configurationPath: String { values["--config"] ?? ConfigurationLoader.defaultPath }

    /// Reads `arguments`, or says what is wrong with them: an option the command does not know
    /// (a typo must not silently fall back to the default file), an option without its value, an
    /// option given twice, or a stray argument.
    static func parse(
        _ arguments: [String], accepting options: [CommandOption], positional takesPositional: Bool = false
    ) -> Result<CommandArguments, UsageProblem> {
        var parsed = CommandArguments()
        var rest = arguments[...]
        if takesPositional, let first = rest.first, !first.hasPrefix("-") {
            parsed.positional = first
            rest = rest.dropFirst()
        }
        // The message lists the options that take a value first, as declared, then the flags.
        let known = options.filter(\.takesValue).map(\.name) + options.filter { !$0.takesValue }.map(\.name)
        var index = rest.startIndex
        while index < rest.endIndex {
            let argument = rest[index]
            guard argument.hasPrefix("-") else { return .failure(UsageProblem("unexpected argument '\(argument)'")) }
            guard let option = options.first(where: { $0.name == argument }) else {
                let list = known.isEmpty ? "it takes no options" : "known: \(known.joined(separator: ", "))"
                return .failure(UsageProblem("unknown option '\(argument)' (\(list))"))
            }
            guard parsed.values[argument] == nil, !parsed.flags.contains(argument) else {
                return .failure(UsageProblem("\(argument) is given twice"))
            }
            guard option.takesValue else {
                parsed.flags.insert(argument)
                index += 1
                continue
            }
            guard index + 1 < rest.endIndex, !rest[index + 1].hasPrefix("--") else {
                return .failure(UsageProblem("\(argument) needs a value"))
            }
            parsed.values[argument] = rest[index + 1]
            index += 2
        }
        return .success(parsed)
    }

    /// What is wrong with a command line, in one line (the usage follows it).
    struct UsageProblem: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }
}
