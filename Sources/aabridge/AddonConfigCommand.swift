import Configuration
import Telemetry

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

/// `aabridge addon-config --options FILE --mqtt FILE --template FILE --output FILE [--data DIR]
/// [--listen HOST:PORT]`: the Home Assistant add-on's run script (ha-addon/aabridge/run) makes
/// the bridge's configuration with it from the add-on's options and the Supervisor's MQTT
/// service. In Swift rather than in the script, so that a bad option is reported as the
/// loader reports a bad key, with its path (`options.products[1]: unknown product ...`), and
/// exits 2 without starting anything.
enum AddonConfigCommand {
    static let options = [
        CommandOption("--options", value: "FILE", help: "the add-on's options (/data/options.json)"),
        CommandOption("--mqtt", value: "FILE", help: "the Supervisor's answer to GET http://supervisor/services/mqtt"),
        CommandOption("--template", value: "FILE", help: "the shipped configuration, whose products the options choose from"),
        CommandOption("--output", value: "FILE", help: "the configuration written (mode 0600: it holds the broker's password)"),
        CommandOption("--data", value: "DIR", help: "the persistent directory for the database (default /data)"),
        CommandOption("--listen", value: "ADDR", help: "the console's address, the add-on's ingress port (default 0.0.0.0:8099)"),
    ]

    static let usage = """
        usage: aabridge addon-config --options FILE --mqtt FILE --template FILE --output FILE [--data DIR] [--listen HOST:PORT]

        Writes the Home Assistant add-on's configuration (ha-addon/aabridge/DOCS.md):
        \(CommandOption.helpLines(options))
        Exit status 0, or 2 when an option is wrong (each printed with its path).
        """

    static func run(options: CommandArguments) -> Int32 {
        guard let optionsFile = options["--options"], let mqttFile = options["--mqtt"],
            let templateFile = options["--template"], let output = options["--output"]
        else {
            printError("aabridge addon-config: --options, --mqtt, --template and --output are required\n\n\(usage)")
            return 2
        }
        var settings = AddonConfiguration.Settings()
        if let data = options["--data"] { settings.dataDirectory = data }
        if let listen = options["--listen"] { settings.listen = listen }
        var inputs: [[UInt8]] = []
        for file in [optionsFile, mqttFile, templateFile] {
            // The options are the Supervisor's JSON (parsed up to 1 MiB), the template the
            // shipped YAML: bounded before reading, like every file a command names.
            switch BoundedFile.read(file, limit: 1 << 20) {
            case .success(let bytes): inputs.append(bytes)
            case .failure(let problem):
                printError("aabridge addon-config: cannot read \(file): \(problem)")
                return 2
            }
        }
        switch AddonConfiguration.yaml(
            options: inputs[0], optionsFile: optionsFile, mqtt: inputs[1], template: inputs[2], templateFile: templateFile,
            settings: settings)
        {
        case .failure(let errors):
            printError(errors.description)
            printError("aabridge addon-config: not started; correct the options in the add-on's Configuration tab, then start it again")
            return ConfigurationErrors.exitStatus
        case .success(let yaml):
            guard store(yaml, at: output) else {
                printError("aabridge addon-config: cannot write \(output): \(String(cString: strerror(errno)))")
                return 1
            }
            print("aabridge addon-config: wrote \(output)")
            return 0
        }
    }

    /// Written to a new file of mode 0600 beside `path`, then renamed over it: the password
    /// is never readable by others, not even for a moment, and a reader never sees half a file.
    private static func store(_ text: String, at path: String) -> Bool {
        let temporary = path + ".new"
        unlink(temporary)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_TRUNC, 0o600)
        guard descriptor >= 0 else { return false }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard close(descriptor) == 0, written == bytes.count else {
            unlink(temporary)
            return false
        }
        return rename(temporary, path) == 0
    }
}
