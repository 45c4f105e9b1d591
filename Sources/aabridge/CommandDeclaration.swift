/// One command of the executable, declared once: its name (`run`, `keys import-bluez`), the
/// options it takes with their help, its own usage, and what runs it. ``Command/main(arguments:)``
/// finds it in ``Command/table``, answers `--help`, checks the options with the one parser
/// (``CommandArguments``) and hands them to `run`.
struct CommandDeclaration: Sendable {
    /// What it is called, with any other spelling (`version`, `--version`).
    let names: [String]
    let options: [CommandOption]
    /// Whether it takes a leading argument before its options (`keys import-macos FILE`).
    let positional: Bool
    /// Its own usage, for its `--help` and its usage errors; nil: the general one.
    let usage: String?
    let run: @Sendable (CommandArguments) async -> Int32

    init(
        _ names: String..., options: [CommandOption], positional: Bool = false, usage: String? = nil,
        run: @escaping @Sendable (CommandArguments) async -> Int32
    ) {
        self.names = names
        self.options = options
        self.positional = positional
        self.usage = usage
        self.run = run
    }

    var name: String { names[0] }
}
