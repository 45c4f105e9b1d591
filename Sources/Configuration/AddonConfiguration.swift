import JSON
import Telemetry

/// The Home Assistant add-on's configuration file, made from what the Supervisor hands the
/// add-on: the user's options (`/data/options.json`, shaped by `ha-addon/aabridge/config.yaml`'s
/// schema) and the MQTT service's answer (`GET http://supervisor/services/mqtt`), on top of the
/// shipped configuration, whose products the options choose from by name.
///
/// Every problem is reported at once with the option's path (`options.products[1]`), as the
/// loader reports a file's keys, and the add-on then stops: a configuration the user must fix
/// is not retried. The file it makes is checked by ``ConfigurationLoader`` before it is
/// written, so what `aabridge run` reads is what was checked here.
public enum AddonConfiguration {
    /// Where the add-on keeps things, and how its console is reached.
    public struct Settings: Sendable {
        /// The persistent volume (`/data`): the database goes there.
        public var dataDirectory: String
        /// The console's listen address: every interface, on the ingress port.
        public var listen: String
        /// The only client besides loopback the console answers: the Supervisor's ingress proxy.
        public var ingressProxy: String

        public init(dataDirectory: String = "/data", listen: String = "0.0.0.0:8099", ingressProxy: String = "172.30.32.2") {
            self.dataDirectory = dataDirectory
            self.listen = listen
            self.ingressProxy = ingressProxy
        }
    }

    /// Connections the console holds from one address (`http.connections_per_client`). Under
    /// ingress every browser tab comes from the one proxy address, 172.30.32.2: a tab holds its
    /// event stream, up to three requests at once and the proxy's idle keep-alive connections
    /// (about 5), so the default 8 would refuse the second tab. 48 serves nine or ten tabs.
    public static let ingressConnectionsPerClient = 48
    /// All connections at once (`http.connection_limit`): the proxy's 48 and 16 more, so that
    /// loopback (`aabridge healthcheck`, a shell in the container) is never locked out by it.
    public static let ingressConnectionLimit = 64

    /// The option keys `config.yaml` declares.
    static let optionKeys = ["products", "gateways", "rooms", "identity", "log_level"]

    /// The configuration's YAML text, or every issue (exit status 2).
    /// - Parameters:
    ///   - options: `/data/options.json`'s bytes.
    ///   - mqtt: the Supervisor's `services/mqtt` answer (`{"result": "ok", "data": {...}}`), or its `data`.
    ///   - template: the shipped configuration's bytes (its products, its defaults).
    public static func yaml(
        options: [UInt8], optionsFile: String = "/data/options.json", mqtt: [UInt8], template: [UInt8], templateFile: String,
        settings: Settings = Settings()
    ) -> Result<String, ConfigurationErrors> {
        var issues: [ConfigurationIssue] = []
        let shipped: YAMLNode
        do {
            guard let root = try YAMLParser().parse(template), case .mapping = root.content else {
                return .failure(ConfigurationErrors(file: templateFile, issues: [ConfigurationIssue(path: "", message: "not a mapping")]))
            }
            shipped = root
        } catch {
            return .failure(ConfigurationErrors(file: templateFile, issues: [ConfigurationIssue(path: "", message: error.message)]))
        }
        let values = parse(options, what: "options", issues: &issues)
        let service = parse(mqtt, what: "services/mqtt", issues: &issues)
        var sections: [String: YAMLNode] = [:]
        if let values {
            var reader = AddonOptionsReader(options: values, shipped: shipped)
            sections = reader.sections()
            issues += reader.issues
        }
        if let service {
            var reader = AddonServiceReader(answer: service, shipped: shipped)
            if let section = reader.mqttSection() { sections["mqtt"] = section }
            issues += reader.issues
        }
        guard issues.isEmpty else { return .failure(ConfigurationErrors(file: optionsFile, issues: issues)) }

        sections["storage"] = YAMLWriter.mapping([("path", YAMLWriter.string(settings.dataDirectory + "/aabridge.sqlite3"))])
        sections["http"] = YAMLWriter.mapping([
            ("listen", YAMLWriter.string(settings.listen)),
            ("allowed_clients", YAMLWriter.sequence([YAMLWriter.string(settings.ingressProxy)])),
            ("connection_limit", YAMLWriter.plain(String(ingressConnectionLimit))),
            ("connections_per_client", YAMLWriter.plain(String(ingressConnectionsPerClient))),
        ])
        let document = YAMLWriter.document(merged(shipped, sections))
        // What the loader would refuse is reported by the option it came from.
        if case .failure(let errors) = ConfigurationLoader.load(yaml: document, file: "the add-on's configuration", hostname: "addon") {
            return .failure(ConfigurationErrors(file: optionsFile, issues: errors.issues.map(optionIssue)))
        }
        return .success(document)
    }

    private static func parse(_ bytes: [UInt8], what: String, issues: inout [ConfigurationIssue]) -> JSONValue? {
        do {
            return try JSONParser.parse(bytes, maximumSize: 1 << 20)
        } catch {
            issues.append(ConfigurationIssue(path: what, message: "\(error)"))
            return nil
        }
    }

    /// The shipped configuration with `sections` in place of its own (in its order, new ones
    /// after).
    private static func merged(_ shipped: YAMLNode, _ sections: [String: YAMLNode]) -> YAMLNode {
        guard case .mapping(let entries) = shipped.content else { return shipped }
        var seen: Set<String> = []
        var result: [YAMLNode.Entry] = []
        for entry in entries {
            guard let key = entry.key.scalar?.value else { continue }
            seen.insert(key)
            result.append(.init(key: entry.key, value: sections[key] ?? entry.value))
        }
        for key in ["mqtt", "storage", "http", "log", "products", "gateways", "identity", "rooms"] where !seen.contains(key) {
            if let section = sections[key] { result.append(.init(key: YAMLWriter.plain(key), value: section)) }
        }
        return YAMLNode(.mapping(result), origin: shipped.origin)
    }

    /// A loader issue on the made file, by the option it came from.
    private static func optionIssue(_ issue: ConfigurationIssue) -> ConfigurationIssue {
        var path = issue.path
        if path.hasPrefix("gateways") || path.hasPrefix("identity") {
            path = "options." + path
        } else if path.hasPrefix("rooms.") {
            path = "options.rooms (node '\(path.dropFirst("rooms.".count))')"
        } else if path.hasPrefix("log.level") {
            path = "options.log_level"
        } else {
            path = "the configuration made from the options: " + path
        }
        return ConfigurationIssue(path: path, message: issue.message)
    }
}
