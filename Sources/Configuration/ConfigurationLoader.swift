import AccessoryKit
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

/// Reads, overrides and validates the configuration file: every error at once, each with its key path.
public enum ConfigurationLoader {
    /// The file read when `--config` is not given.
    public static let defaultPath = "config/aabridge.yaml"

    /// Files larger than this are refused (a configuration is a few kilobytes).
    public static let maximumFileSize = 1 << 20

    /// Loads and validates a configuration file.
    /// - Parameters:
    ///   - path: the YAML file.
    ///   - environment: `AABRIDGE_<SECTION>_<KEY>` overrides are taken from here.
    ///   - hostname: for the default client id; the machine's host name when nil.
    /// - Returns: the configuration, or every issue found.
    public static func load(
        path: String, environment: [String: String] = ProcessInfo.processInfo.environment, hostname: String? = nil
    ) -> Result<BridgeConfiguration, ConfigurationErrors> {
        switch readFile(path) {
        case let .success(bytes):
            return load(bytes: bytes, file: path, environment: environment, hostname: hostname)
        case let .failure(issue):
            return .failure(ConfigurationErrors(file: path, issues: [issue]))
        }
    }

    /// Loads and validates YAML text (tests, `aabridge validate -`).
    /// - Parameter file: how to name the input in the error header.
    public static func load(
        yaml: String, file: String = "<string>", environment: [String: String] = [:], hostname: String? = nil
    ) -> Result<BridgeConfiguration, ConfigurationErrors> {
        load(bytes: Array(yaml.utf8), file: file, environment: environment, hostname: hostname)
    }

    /// Loads and validates YAML bytes.
    public static func load(
        bytes: [UInt8], file: String, environment: [String: String], hostname: String? = nil
    ) -> Result<BridgeConfiguration, ConfigurationErrors> {
        let root: YAMLNode?
        do {
            root = try YAMLParser(maximumInputSize: maximumFileSize).parse(bytes)
        } catch {
            let origin = error.line.map { YAMLNode.Origin.file(line: $0, column: error.column ?? 1) }
            return .failure(ConfigurationErrors(file: file, issues: [ConfigurationIssue(path: "", message: error.message, origin: origin)]))
        }
        let decoder = ConfigurationDecoder()
        let overridden = ConfigurationEnvironment.apply(environment, to: root, decoder: decoder)
        let configuration = decoder.configuration(overridden, hostname: hostname ?? machineHostname())
        let issues = ordered(decoder.issues + ruleIssues(configuration, decoder: decoder))
        guard issues.isEmpty else { return .failure(ConfigurationErrors(file: file, issues: issues)) }
        var advised = configuration
        advised.warnings = ordered(ConfigurationAdvice.warnings(configuration, decoder: decoder))
        advised.systemBusAddress = environment["DBUS_SYSTEM_BUS_ADDRESS"].flatMap { $0.isEmpty ? nil : $0 }
        return .success(advised)
    }

    /// `EngineConfiguration.validate()`'s descriptor, declaration and migration rules, with paths
    /// pointing at the entries' places in the file even when earlier entries were left out for errors.
    static func ruleIssues(_ configuration: BridgeConfiguration, decoder: ConfigurationDecoder) -> [ConfigurationIssue] {
        configuration.engine.validate().compactMap { issue in
            if issue.error.rule == .migrationUnknownProduct,
                let index = index(in: issue.path, prefix: "accessories["),
                index < configuration.accessories.count,
                decoder.productNames.contains(configuration.accessories[index].migration.product)
            {
                // The product exists but had errors of its own; those are already reported.
                return nil
            }
            var path = issue.path
            if let index = index(in: path, prefix: "products["), index < decoder.productIndices.count {
                path = replacing(index: index, with: decoder.productIndices[index], prefix: "products[", in: path)
            } else if let index = index(in: path, prefix: "accessories["), index < decoder.accessoryIndices.count {
                path = replacing(index: index, with: decoder.accessoryIndices[index], prefix: "accessories[", in: path)
            }
            // A rule about a key that is not in the file (e.g. a missing mask) points at the descriptor.
            let origin = decoder.origins[path] ?? decoder.origins[String(path[..<(path.lastIndex(of: ".") ?? path.endIndex)])]
            return ConfigurationIssue(path: path, message: issue.error.message, origin: origin)
        }
    }

    /// File issues top to bottom, as a user fixes them; then those from the environment.
    static func ordered(_ issues: [ConfigurationIssue]) -> [ConfigurationIssue] {
        func key(_ issue: ConfigurationIssue) -> (Int, Int, Int) {
            switch issue.origin {
            case let .file(line, column)?: (0, line, column)
            case .environment?, nil: (1, 0, 0)
            }
        }
        // enumerated() keeps the sort stable for issues at the same place.
        return issues.enumerated().sorted { lhs, rhs in
            let (a, b) = (key(lhs.element), key(rhs.element))
            return a != b ? a < b : lhs.offset < rhs.offset
        }.map(\.element)
    }

    private static func index(in path: String, prefix: String) -> Int? {
        guard path.hasPrefix(prefix) else { return nil }
        return Int(path.dropFirst(prefix.count).prefix { $0 != "]" })
    }

    private static func replacing(index: Int, with original: Int, prefix: String, in path: String) -> String {
        let old = "\(prefix)\(index)]"
        return "\(prefix)\(original)]" + path.dropFirst(old.count)
    }

    /// The file's bytes, refusing oversize files before reading them and special files
    /// (a FIFO would block, a device never end) by type (``BoundedFile``).
    static func readFile(_ path: String) -> Result<[UInt8], ConfigurationIssue> {
        switch BoundedFile.read(path, limit: maximumFileSize) {
        case .success(let bytes): return .success(bytes)
        case .failure(.missing):
            return .failure(
                ConfigurationIssue(path: "", message: "cannot read the configuration '\(path)': no such file (name it with --config PATH)"))
        case .failure(.tooLarge):
            return .failure(
                ConfigurationIssue(
                    path: "", message: "the file is larger than \(maximumFileSize) bytes; a configuration is a few kilobytes"))
        case .failure(let problem):
            return .failure(ConfigurationIssue(path: "", message: "cannot read the configuration '\(path)': \(problem)"))
        }
    }

    /// The short host name (before the first dot), or `localhost`.
    public static func machineHostname() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let short = name.split(separator: ".").first.map(String.init) ?? ""
        return short.isEmpty ? "localhost" : short
    }

    /// `aabridge validate --config PATH`: checks without connecting.
    /// - Returns: exit status 0 (valid, with any warnings listed) or 2 (invalid), and the text
    ///   to print (stdout when valid, stderr otherwise).
    public static func validate(
        path: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> (exitStatus: Int32, report: String) {
        switch load(path: path, environment: environment) {
        case let .success(configuration):
            let summary =
                "\(path): configuration is valid (\(configuration.products.count) products, "
                + "\(configuration.gateways.count) gateways, \(configuration.accessories.count) accessories, "
                + "\(configuration.sources.count) sources)"
            guard !configuration.warnings.isEmpty else { return (0, summary) }
            let count = configuration.warnings.count
            return (
                0,
                ([summary, "\(count) warning\(count == 1 ? "" : "s"):"] + configuration.warnings.map { "  \($0)" }).joined(separator: "\n")
            )
        case let .failure(errors):
            return (ConfigurationErrors.exitStatus, errors.description)
        }
    }
}
