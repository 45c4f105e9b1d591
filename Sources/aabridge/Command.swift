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

    static func main(arguments: [String]) async -> Int32 {
        guard let name = arguments.first else {
            printError(usage)
            return 2
        }
        let options = Array(arguments.dropFirst())
        // `keys` has subcommands, and its own usage and options.
        if name == "keys" { return await KeysCommand.run(arguments: options) }
        if options.contains("--help") || options.contains("-h") {
            print(commandUsage[name] ?? usage)
            return 0
        }
        if let accepted = acceptedOptions[name],
            let problem = usageProblem(options, accepted: accepted, flags: acceptedFlags[name] ?? [])
        {
            printError("aabridge \(name): \(problem)\n\n\(commandUsage[name] ?? usage)")
            return 2
        }
        switch name {
        case "--help", "-h", "help":
            print(usage)
            return 0
        case "version", "--version":
            print("aabridge \(BridgeModule.version) (libmosquitto \(libMosquittoVersion))")
            return 0
        case "run":
            return await RunCommand.run(options: options)
        case "validate":
            return ValidateCommand.run(options: options)
        case "simulate":
            return await SimulateCommand.run(options: options)
        case "healthcheck":
            return await HealthcheckCommand.run(options: options)
        case "report-sources":
            return await ReportSourcesCommand.run(options: options)
        case "addon-config":
            return AddonConfigCommand.run(options: options)
        default:
            printError("aabridge: unknown command '\(name)'\n\n\(usage)")
            return 2
        }
    }

    /// The options each command accepts that take a value.
    static let acceptedOptions: [String: [String]] = [
        "run": ["--config"], "validate": ["--config"], "simulate": ["--config", "--scenario"], "healthcheck": ["--config"],
        "report-sources": ReportSourcesCommand.valueOptions, "addon-config": AddonConfigCommand.valueOptions, "version": [],
        "--version": [],
    ]

    /// The options each command accepts that take no value.
    static let acceptedFlags: [String: [String]] = ["report-sources": ReportSourcesCommand.flags]

    /// A command's own usage, printed instead of the general one for its `--help` and its usage errors.
    static let commandUsage: [String: String] = ["report-sources": ReportSourcesCommand.usage, "addon-config": AddonConfigCommand.usage]

    /// What is wrong with a command's options, or nil: an option the command does not know
    /// (a typo must not silently fall back to the default file), an option without its value,
    /// an option given twice, or a stray argument. `flags` are options that take no value.
    static func usageProblem(_ options: [String], accepted: [String], flags: [String] = []) -> String? {
        var seen: Set<String> = []
        var index = 0
        while index < options.count {
            let option = options[index]
            guard option.hasPrefix("-") else { return "unexpected argument '\(option)'" }
            guard accepted.contains(option) || flags.contains(option) else {
                let known =
                    accepted.isEmpty && flags.isEmpty ? "it takes no options" : "known: \((accepted + flags).joined(separator: ", "))"
                return "unknown option '\(option)' (\(known))"
            }
            guard seen.insert(option).inserted else { return "\(option) is given twice" }
            if flags.contains(option) {
                index += 1
                continue
            }
            guard index + 1 < options.count, !options[index + 1].hasPrefix("--") else { return "\(option) needs a value" }
            index += 2
        }
        return nil
    }

    /// The configuration file named by `--config`, or the default.
    static func configurationPath(_ options: [String]) -> String {
        value(of: "--config", in: options) ?? ConfigurationLoader.defaultPath
    }

    /// Loads the configuration named by `--config`; on failure prints every error with its key
    /// path and returns nil (the caller exits with `ConfigurationErrors.exitStatus`).
    static func loadConfiguration(_ options: [String]) -> BridgeConfiguration? {
        switch ConfigurationLoader.load(path: configurationPath(options)) {
        case .success(let configuration): return configuration
        case .failure(let errors):
            printError(errors.description)
            return nil
        }
    }

    /// The value after `--flag`, or nil.
    static func value(of flag: String, in options: [String]) -> String? {
        guard let index = options.firstIndex(of: flag), index + 1 < options.count else { return nil }
        return options[index + 1]
    }
}

func printError(_ message: String) {
    StandardStream.error.writeLine(message)
}
