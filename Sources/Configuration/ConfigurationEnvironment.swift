/// `AABRIDGE_<SECTION>_<KEY>` environment overrides, applied to the parsed tree
/// before decoding so an overridden value goes through exactly the same checks.
enum ConfigurationEnvironment {
    /// The scalar keys of the mapping sections that may be overridden, as key paths.
    static let overridable: [[String]] = {
        var paths: [[String]] = []
        for key in ConfigurationDecoder.mqttKeys where key != "reconnect" { paths.append(["mqtt", key]) }
        paths.append(["mqtt", "reconnect", "min_s"])
        paths.append(["mqtt", "reconnect", "max_s"])
        for key in ConfigurationDecoder.homeAssistantKeys { paths.append(["homeassistant", key]) }
        for key in ConfigurationDecoder.storageKeys { paths.append(["storage", key]) }
        paths.append(["health", "interval_s"])
        paths.append(["log", "level"])
        paths.append(["log", "format"])
        for key in ["placement_debounce_ms", "availability_timeout_s", "immediate_rssi"] { paths.append(["switching", key]) }
        for key in ["follow", "reattach", "lookalike_window_s"] { paths.append(["identity", key]) }
        for key in ConfigurationDecoder.httpKeys { paths.append(["http", key]) }
        for key in ConfigurationDecoder.clusterKeys { paths.append(["cluster", key]) }
        return paths
    }()

    /// The secrets, taken literally from the environment.
    static let secrets: Set<[String]> = [["mqtt", "password"], ["http", "token"], ["storage", "password"]]

    /// The sections whose variables are checked for typos.
    static let sections = ["MQTT", "HOMEASSISTANT", "STORAGE", "HEALTH", "LOG", "SWITCHING", "IDENTITY", "HTTP", "CLUSTER"]

    /// The variable name for a key path: `AABRIDGE_MQTT_RECONNECT_MIN_S`.
    static func variable(for path: [String]) -> String {
        "AABRIDGE_" + path.joined(separator: "_").uppercased()
    }

    /// Applies the overrides present in `environment`; reports unknown `AABRIDGE_<SECTION>_…` variables.
    static func apply(_ environment: [String: String], to root: YAMLNode?, decoder: ConfigurationDecoder) -> YAMLNode? {
        var root = root
        let known = Dictionary(uniqueKeysWithValues: overridable.map { (variable(for: $0), $0) })
        for name in environment.keys.sorted() where name.hasPrefix("AABRIDGE_") {
            guard let path = known[name] else {
                let rest = name.dropFirst("AABRIDGE_".count)
                if sections.contains(where: { rest.hasPrefix($0 + "_") }) {
                    var message = "unknown configuration variable"
                    if let suggestion = ConfigurationDecoder.suggestion(for: name, among: Array(known.keys)) {
                        message += "; did you mean \(suggestion)?"
                    }
                    decoder.fail(name, message, at: nil)
                }
                continue
            }
            let value = environment[name] ?? ""
            // A secret is taken literally: "null" or "~" there is a password, not an absence.
            let style: YAMLNode.ScalarStyle = Self.secrets.contains(path) ? .doubleQuoted : .plain
            let node = YAMLNode(.scalar(.init(value: value, style: style)), origin: .environment(variable: name))
            root = set(node, at: path[...], in: root)
        }
        return root
    }

    /// Replaces or inserts the value at `path`; a section that is not a mapping is left for the decoder to report.
    private static func set(_ value: YAMLNode, at path: ArraySlice<String>, in node: YAMLNode?) -> YAMLNode? {
        guard let key = path.first else { return value }
        let origin = node?.origin ?? value.origin
        var entries: [YAMLNode.Entry]
        switch node?.content {
        case nil: entries = []
        case let .mapping(existing)?: entries = existing
        case let .scalar(scalar)? where scalar.isNull: entries = []
        default: return node
        }
        if let index = entries.lastIndex(where: { $0.key.scalar?.value == key }) {
            guard let replaced = set(value, at: path.dropFirst(), in: entries[index].value) else { return node }
            entries[index].value = replaced
        } else {
            let keyNode = YAMLNode(.scalar(.init(value: key)), origin: value.origin)
            guard let inserted = set(value, at: path.dropFirst(), in: nil) else { return node }
            entries.append(.init(key: keyNode, value: inserted))
        }
        return YAMLNode(.mapping(entries), origin: origin)
    }
}
