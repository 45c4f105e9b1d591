import Bridge
import Configuration
import MQTT

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The command line: a subcommand, then options. Exit status 0 on success, 2 for an invalid
/// configuration or usage (as configuration.md says; an unknown option or one without its
/// value is a usage error), 3 when another aabridge already uses the database, 4 when `run`
/// could not store the session's first commit (a restart retries it), 1 for anything else.
enum Command {
    static let usage = """
        usage: aabridge <command> [options]

        commands:
          run          run the bridge (--config PATH, default config/aabridge.yaml)
          validate     check the configuration and exit (--config PATH)
          simulate     publish a scenario of gateway messages (--config PATH --scenario FILE)
          healthcheck  exit 0 when the running bridge is online and healthy (--config PATH)
          keys import-bluez  set accessories' IRKs from BlueZ's pairings through the running bridge
          keys fetch-airpods read AirPods' IRK and encryption key over Bluetooth, set them the same way
          keys import-macos  set an accessory's keys from a Mac's Keychain export, the same way
                       (--config PATH --bluetooth-dir DIR --adapter ADDR --device ADDR --id ID --dry-run)
          report-sources  on a Linux desktop: tell the running bridge which accessories are connected to it
                       (--config PATH --source ADDR --interval S --bluetoothctl PATH --once)
          addon-config write the Home Assistant add-on's configuration from its options (--options --mqtt --template --output)
          version      print the version

        options:
          --config PATH   the YAML configuration (default config/aabridge.yaml)
          -h, --help      this help
        """

    /// Every command, each declared once.
    static let table: [CommandDeclaration] = [
        CommandDeclaration("run", options: [.config]) { await RunCommand.run(options: $0) },
        CommandDeclaration("validate", options: [.config]) { ValidateCommand.run(options: $0) },
        CommandDeclaration("simulate", options: [.config, SimulateCommand.scenario]) { await SimulateCommand.run(options: $0) },
        CommandDeclaration("healthcheck", options: [.config]) { await HealthcheckCommand.run(options: $0) },
        CommandDeclaration("report-sources", options: ReportSourcesCommand.options, usage: ReportSourcesCommand.usage) {
            await ReportSourcesCommand.run(options: $0)
        },
        CommandDeclaration("addon-config", options: AddonConfigCommand.options, usage: AddonConfigCommand.usage) {
            AddonConfigCommand.run(options: $0)
        },
        CommandDeclaration("version", "--version", options: []) { _ in
            print("aabridge \(BridgeModule.version) (libmosquitto \(libMosquittoVersion))")
            return 0
        },
        CommandDeclaration("keys import-bluez", options: KeysCommand.options, usage: KeysCommand.usage) {
            await KeysCommand.run(options: $0)
        },
        CommandDeclaration("keys fetch-airpods", options: KeysFetchCommand.fetchOptions, usage: KeysFetchCommand.fetchUsage) {
            await KeysFetchCommand.run("fetch-airpods", options: $0)
        },
        CommandDeclaration(
            "keys import-macos", options: KeysFetchCommand.macOptions, positional: true, usage: KeysFetchCommand.macUsage
        ) { await KeysFetchCommand.run("import-macos", options: $0) },
    ]

    static func main(arguments: [String]) async -> Int32 {
        guard var name = arguments.first else {
            printError(usage)
            return 2
        }
        var options = Array(arguments.dropFirst())
        // `keys` has subcommands: `keys import-bluez` is the command's name.
        if name == "keys" {
            guard let subcommand = options.first, !subcommand.hasPrefix("-") else {
                if options.contains("--help") || options.contains("-h") {
                    print(KeysCommand.usage)
                    return 0
                }
                printError("aabridge keys: name a subcommand (\(KeysCommand.subcommands))\n\n\(KeysCommand.usage)")
                return 2
            }
            guard table.contains(where: { $0.names.contains("keys \(subcommand)") }) else {
                printError(
                    "aabridge keys: unknown subcommand '\(subcommand)' (known: \(KeysCommand.subcommands))\n\n\(KeysCommand.usage)")
                return 2
            }
            name = "keys \(subcommand)"
            options.removeFirst()
        }
        let command = table.first { $0.names.contains(name) }
        if options.contains("--help") || options.contains("-h") {
            print(command?.usage ?? usage)
            return 0
        }
        guard let command else {
            if ["--help", "-h", "help"].contains(name) {
                print(usage)
                return 0
            }
            printError("aabridge: unknown command '\(name)'\n\n\(usage)")
            return 2
        }
        switch CommandArguments.parse(options, accepting: command.options, positional: command.positional) {
        case .success(let parsed):
            return await command.run(parsed)
        case .failure(let problem):
            printError("aabridge \(name): \(problem.message)\n\n\(command.usage ?? usage)")
            return 2
        }
    }

    /// Loads the configuration named by `--config`; on failure prints every error with its key
    /// path and returns nil (the caller exits with `ConfigurationErrors.exitStatus`).
    static func loadConfiguration(_ options: CommandArguments) -> BridgeConfiguration? {
        switch ConfigurationLoader.load(path: options.configurationPath) {
        case .success(let configuration): return configuration
        case .failure(let errors):
            printError(errors.description)
            return nil
        }
    }
}

func printError(_ message: String) {
    StandardStream.error.writeLine(message)
}
