import AccessoryKit
import Storage
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

extension ConfigurationDecoder {
    /// The top-level keys.
    static let sections = [
        "mqtt", "homeassistant", "storage", "health", "log", "setup", "products", "gateways", "accessories", "sources", "switching",
        "identity", "http", "cluster", "rooms",
    ]

    /// The whole file.
    func configuration(_ root: YAMLNode?, hostname: String) -> BridgeConfiguration {
        var configuration = BridgeConfiguration(hostname: hostname)
        guard let top = fields(root, at: "", allowed: Self.sections) else { return configuration }
        mqtt(top["mqtt"], into: &configuration.mqtt)
        homeAssistant(top["homeassistant"], into: &configuration.homeAssistant)
        storage(top["storage"], into: &configuration.storage)
        if let health = fields(top["health"], at: "health", allowed: ["interval_s"]),
            let interval = integer(health["interval_s"], at: health.path("interval_s"), in: 1...86_400)
        {
            configuration.health.intervalSeconds = interval
        }
        if let log = fields(top["log"], at: "log", allowed: ["level", "format"]) {
            if let level = enumeration(LogConfiguration.Level.self, log["level"], at: log.path("level")) { configuration.log.level = level }
            if let format = enumeration(LogConfiguration.Format.self, log["format"], at: log.path("format")) {
                configuration.log.format = format
            }
        }
        http(top["http"], into: &configuration.http)
        cluster(top["cluster"], into: &configuration.cluster)
        if configuration.cluster.enabled && configuration.storage.backend != .postgresql {
            fail(
                "cluster.enabled",
                "a cluster shares its accessories through PostgreSQL: set storage.backend: postgresql and storage.url (docs/scaling.md)",
                at: top["cluster"])
        }
        if let setup = setup(top["setup"]) { configuration.setup = setup }
        configuration.products = products(top["products"])
        configuration.gateways = gateways(top["gateways"], baseTopic: configuration.mqtt.baseTopic)
        configuration.accessories = accessories(top["accessories"])
        configuration.sources = sources(top["sources"])
        configuration.rooms = rooms(top["rooms"])
        switching(top["switching"], into: &configuration.switching)
        if let section = fields(top["identity"], at: "identity", allowed: ["follow", "reattach", "lookalike_window_s"]) {
            if let node = section["follow"], !node.isNull, let follow = bool(node, at: section.path("follow")) {
                configuration.identity.follow = follow
            }
            if let node = section["reattach"], !node.isNull,
                let reattach = enumeration(IdentityConfiguration.Reattach.self, node, at: section.path("reattach"))
            {
                configuration.identity.reattach = reattach
            }
            if let node = section["lookalike_window_s"], !node.isNull,
                let seconds = integer(node, at: section.path("lookalike_window_s"), in: 60...86_400)
            {
                configuration.identity.lookalikeWindowSeconds = seconds
            }
        }
        return configuration
    }

    /// A string key with a default: missing or null keeps the default, empty is an error.
    func requiredOrDefault(_ fields: Fields, _ key: String) -> String? {
        guard let node = fields[key], !node.isNull else { return nil }
        guard let text = string(node, at: fields.path(key)) else { return nil }
        guard !text.isEmpty else {
            fail(fields.path(key), "must not be empty", at: node)
            return nil
        }
        return text
    }

    // MARK: storage

    static let storageKeys = ["backend", "path", "url", "password", "password_file"]

    func storage(_ node: YAMLNode?, into storage: inout StorageConfiguration) {
        guard let section = fields(node, at: "storage", allowed: Self.storageKeys) else { return }
        let backendGiven = section["backend"].map { !$0.isNull } == true
        let backend = enumeration(StorageConfiguration.Backend.self, section["backend"], at: section.path("backend"))
        if let backend { storage.backend = backend }
        if let path = requiredOrDefault(section, "path") {
            storage.path = path
            // The database may not exist yet (it is created), but whatever is there must be a file.
            var status = stat()
            if storage.backend == .sqlite, stat(path, &status) == 0, status.st_mode & S_IFMT != S_IFREG {
                let kind = status.st_mode & S_IFMT == S_IFDIR ? "a directory" : "not a regular file"
                fail(section.path("path"), "'\(path)' is \(kind); storage.path names the database file", at: section["path"])
            }
        }
        let url = requiredOrDefault(section, "url")
        // An unknown backend is reported once; what depends on it is not judged.
        guard backend != nil || !backendGiven else { return }
        switch storage.backend {
        case .sqlite:
            // A URL or password with the default backend is a file half-way to PostgreSQL: say so
            // rather than silently use SQLite.
            for key in ["url", "password", "password_file"] where section[key].map({ !$0.isNull }) == true {
                fail(
                    section.path(key), "storage.\(key) is only for backend postgresql; set storage.backend: postgresql or remove it",
                    at: section[key])
            }
        case .postgresql:
            if let url {
                if let problem = PostgresConnection.syntaxProblem(url) {
                    fail(section.path("url"), "is not a valid PostgreSQL connection string: \(problem)", at: section["url"])
                } else {
                    storage.url = url
                }
            } else if section["url"].map({ !$0.isNull }) != true {
                fail(
                    section.path("url"),
                    "is required with backend postgresql (a libpq connection string, e.g. postgresql://aabridge@db.example:5432/aabridge)",
                    at: section["backend"])
            }
            if let (password, file) = secret(section, "password", file: "password_file", refusingEmpty: false) {
                storage.password = password
                storage.passwordFile = file
            }
        }
    }

    // MARK: mqtt

    static let mqttKeys = [
        "server", "base_topic", "client_id", "user", "password", "password_file", "ca", "cert", "key", "keepalive", "version", "reconnect",
        "max_packet_size", "session_expiry_s",
    ]

    func mqtt(_ node: YAMLNode?, into mqtt: inout MQTTSection) {
        guard let section = fields(node, at: "mqtt", allowed: Self.mqttKeys) else { return }
        var serverIsValid = true
        if let server = requiredOrDefault(section, "server") {
            if let endpoint = Self.parseServer(server, report: { self.fail(section.path("server"), $0, at: section["server"]) }) {
                mqtt.server = server
                mqtt.client.host = endpoint.host
                mqtt.client.port = endpoint.port
                mqtt.usesTLS = endpoint.tls
            } else {
                serverIsValid = false
            }
        } else if section["server"].map({ !$0.isNull }) == true {
            serverIsValid = false
        }
        if let baseTopic = requiredOrDefault(section, "base_topic") {
            if let problem = Self.topicNameProblem(baseTopic) {
                fail(section.path("base_topic"), problem, at: section["base_topic"])
            } else {
                mqtt.baseTopic = baseTopic
            }
        }
        if let clientID = requiredOrDefault(section, "client_id") {
            if clientID.utf8.count > 65_535 {
                fail(section.path("client_id"), "is longer than MQTT allows (65535 bytes)", at: section["client_id"])
            } else {
                mqtt.client.clientID = clientID
            }
        }
        if case let .some(user) = optionalString(section, "user") { mqtt.client.username = user }
        for key in ["ca", "cert", "key"] {
            guard case let .some(value) = optionalString(section, key) else { continue }
            switch key {
            case "ca": mqtt.setTLSFile(\.caFile, to: value)
            case "cert": mqtt.setTLSFile(\.certificateFile, to: value)
            default: mqtt.setTLSFile(\.keyFile, to: value)
            }
            guard let value else { continue }
            if serverIsValid && !mqtt.usesTLS {
                fail(
                    section.path(key),
                    "a TLS file needs an mqtts:// server, but server is \(mqtt.server); use mqtts://host:port or remove \(key)",
                    at: section[key])
            } else if let problem = Self.fileProblem(path: value) {
                fail(section.path(key), problem.message, at: section[key])
            }
        }
        if (mqtt.cert == nil) != (mqtt.key == nil) {
            let missing = mqtt.cert == nil ? "cert" : "key"
            let given = mqtt.cert == nil ? "key" : "cert"
            fail(section.path(missing), "a client \(given) needs \(missing) as well", at: section[given])
        }
        password(section, into: &mqtt)
        if let keepalive = integer(section["keepalive"], at: section.path("keepalive"), in: 0...65_535) {
            // libmosquitto refuses 1-4 s at every connect: the bridge would retry forever.
            if (1...4).contains(keepalive) {
                fail(
                    section.path("keepalive"), "must be 0 (off) or 5-65535 seconds: the MQTT library refuses 1-4", at: section["keepalive"])
            } else {
                mqtt.client.keepalive = keepalive
            }
        }
        if let node = section["version"], !node.isNull,
            let number = integer(node, at: section.path("version"), in: Int.min...Int.max)
        {
            if let version = MQTTSection.Version(rawValue: number) {
                mqtt.client.protocolVersion = version
            } else {
                fail(section.path("version"), "unknown MQTT version \(number); allowed: 4 (MQTT 3.1.1), 5 (MQTT 5)", at: node)
            }
        }
        // At least 4 KiB (a gateway's message must fit); at most MQTT's own 256 MiB.
        if let size = integer(section["max_packet_size"], at: section.path("max_packet_size"), in: 4_096...268_435_455) {
            mqtt.client.maximumPacketSize = size
        }
        // MQTT 5's Session Expiry Interval is 32 bits (0xFFFFFFFF: never).
        if let expiry = integer(section["session_expiry_s"], at: section.path("session_expiry_s"), in: 0...4_294_967_295) {
            mqtt.sessionExpirySeconds = expiry
        }
        // MQTT 3.1.1 sends a password only after a user name; libmosquitto refuses the pair at
        // every connect, so the bridge would retry forever.
        if mqtt.version == .v311, mqtt.password != nil, mqtt.user == nil {
            let key = section["password"].map { $0.isNull ? "password_file" : "password" } ?? "password_file"
            fail(
                section.path(key), "MQTT 3.1.1 (version 4) sends a password only with a user: set user, or use version 5",
                at: section[key] ?? section["version"])
        }
        if let reconnect = fields(section["reconnect"], at: section.path("reconnect"), allowed: ["min_s", "max_s"]) {
            let minimum = integer(reconnect["min_s"], at: reconnect.path("min_s"), in: 1...3_600)
            let maximum = integer(reconnect["max_s"], at: reconnect.path("max_s"), in: 1...3_600)
            let candidate = MQTTSection.Reconnect(
                minimumSeconds: minimum ?? mqtt.reconnect.minimumSeconds, maximumSeconds: maximum ?? mqtt.reconnect.maximumSeconds)
            if candidate.minimumSeconds > candidate.maximumSeconds {
                fail(
                    reconnect.path("max_s"), "must be at least min_s (\(candidate.minimumSeconds)), found \(candidate.maximumSeconds)",
                    at: reconnect["max_s"] ?? reconnect["min_s"])
            } else {
                mqtt.reconnect = candidate
            }
        }
    }

    /// `password` or `password_file` (read here, trailing newline trimmed); never both.
    /// No message repeats the password or the file's content.
    private func password(_ section: Fields, into mqtt: inout MQTTSection) {
        guard let (password, file) = secret(section, "password", file: "password_file", refusingEmpty: false) else { return }
        mqtt.password = password
        if let file { mqtt.passwordFile = file }
    }

    /// A secret given as `key` or read from the file `file` names (trailing newline
    /// trimmed), never both; the MQTT password and the HTTP token. No message repeats the
    /// secret or the file's content.
    /// - Parameter refusingEmpty: an empty `key` is an error (a file's content is taken as it is).
    /// - Returns: the secret and the file it was read from; `nil` when neither is given or on
    ///   an error (reported).
    func secret(_ section: Fields, _ key: String, file fileKey: String, refusingEmpty: Bool) -> (Secret, file: String?)? {
        let valueNode = section[key].flatMap { $0.isNull ? nil : $0 }
        let fileNode = section[fileKey].flatMap { $0.isNull ? nil : $0 }
        if let valueNode, fileNode != nil {
            fail(section.path(key), "give \(key) or \(fileKey), not both", at: valueNode)
            return nil
        }
        if let valueNode {
            guard let value = string(valueNode, at: section.path(key)) else { return nil }
            guard !(refusingEmpty && value.isEmpty) else {
                fail(section.path(key), "must not be empty", at: valueNode)
                return nil
            }
            return (Secret(value), nil)
        }
        guard let fileNode, let path = string(fileNode, at: section.path(fileKey)) else { return nil }
        guard !path.isEmpty else {
            fail(section.path(fileKey), "must not be empty", at: fileNode)
            return nil
        }
        switch Self.readSecret(path: path) {
        case let .success(secret):
            return (Secret(secret), path)
        case let .failure(problem):
            fail(section.path(fileKey), problem.message, at: fileNode)
            return nil
        }
    }

    /// Why a secret file could not be used; never contains its content.
    struct SecretFileProblem: Error {
        var message: String
    }

    /// The file's text without its trailing newline(s). Read bounded (``BoundedFile``): the
    /// size is refused before a byte is read, and a device or FIFO by its type.
    static func readSecret(path: String) -> Result<String, SecretFileProblem> {
        let data: [UInt8]
        switch BoundedFile.read(path, limit: 64 * 1024) {
        case .success(let bytes): data = bytes
        case .failure(.tooLarge): return .failure(.init(message: "'\(path)' is larger than 64 KiB; is it the right file?"))
        case .failure(let problem): return .failure(.init(message: "cannot read '\(path)': \(problem)"))
        }
        guard var text = String(validating: data, as: UTF8.self) else { return .failure(.init(message: "'\(path)' is not UTF-8 text")) }
        while text.hasSuffix("\n") || text.hasSuffix("\r") { text.removeLast() }
        guard !text.isEmpty else { return .failure(.init(message: "'\(path)' is empty")) }
        return .success(text)
    }

    /// Why a file the configuration names cannot be used, or nil: it must exist, be a regular
    /// file (not a directory, device or FIFO) and be readable by this process, as the bridge
    /// will open it. Checked with `open` itself, so it holds for root and ACLs alike.
    static func fileProblem(path: String) -> SecretFileProblem? {
        var status = stat()
        guard stat(path, &status) == 0 else {
            let reason = errno == ENOENT || errno == ENOTDIR ? "no such file" : String(cString: strerror(errno))
            return .init(message: "cannot read '\(path)': \(reason)")
        }
        switch status.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: return .init(message: "cannot read '\(path)': it is a directory")
        default: return .init(message: "cannot read '\(path)': not a regular file")
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            let reason = errno == EACCES || errno == EPERM ? "permission denied" : String(cString: strerror(errno))
            return .init(message: "cannot read '\(path)': \(reason)")
        }
        close(descriptor)
        return nil
    }

    /// Splits `mqtt[s]://host[:port][/]`; reports through `report` and returns nil when malformed.
    static func parseServer(_ server: String, report: (String) -> Void) -> (host: String, port: Int, tls: Bool)? {
        let tls: Bool
        let rest: Substring
        if server.hasPrefix("mqtt://") {
            tls = false
            rest = server.dropFirst("mqtt://".count)
        } else if server.hasPrefix("mqtts://") {
            tls = true
            rest = server.dropFirst("mqtts://".count)
        } else {
            // Only the scheme is repeated: whatever follows it might hold a password.
            let scheme = server.firstRange(of: "://").map { "scheme '\(server[..<$0.lowerBound])'" } ?? "no scheme"
            report("expected mqtt://host:port or mqtts://host:port, found \(scheme)")
            return nil
        }
        var authority = rest
        if authority.hasSuffix("/") { authority = authority.dropLast() }
        if authority.contains("@") {
            // Never echo the URL here: the part before @ may hold a password.
            report("credentials do not belong in the URL; use user and password (or password_file)")
            return nil
        }
        guard !authority.contains("/"), !authority.contains("?") else {
            report("expected mqtt://host:port without a path, found '\(server)'")
            return nil
        }
        var host = String(authority)
        var port = tls ? 8883 : 1883
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else {
                report("unterminated IPv6 address in '\(server)'")
                return nil
            }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") {
                portText = after.dropFirst()
            } else if !after.isEmpty {
                report("unexpected text after the IPv6 address in '\(server)'")
                return nil
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            portText = authority[authority.index(after: colon)...]
        }
        if let portText {
            guard let value = Int(portText), (1...65_535).contains(value) else {
                report("port must be between 1 and 65535, found '\(portText)'")
                return nil
            }
            port = value
        }
        guard !host.isEmpty else {
            report("'\(server)' has no host")
            return nil
        }
        return (host, port, tls)
    }

    /// Why `topic` cannot be published to, or nil.
    static func topicNameProblem(_ topic: String) -> String? {
        if topic.contains("+") || topic.contains("#") { return "must not contain the wildcards + or #" }
        if topic.hasPrefix("/") || topic.hasSuffix("/") { return "must not start or end with /" }
        if topic.utf8.count > 65_535 { return "is longer than MQTT allows" }
        return nil
    }

    /// Why `filter` is not a valid MQTT topic filter, or nil.
    static func topicFilterProblem(_ filter: String) -> String? {
        let levels = filter.split(separator: "/", omittingEmptySubsequences: false)
        for (index, level) in levels.enumerated() {
            if level.contains("#") && (level != "#" || index != levels.count - 1) {
                return "# must be a whole level and the last one"
            }
            if level.contains("+") && level != "+" { return "+ must be a whole level" }
        }
        return nil
    }

    // MARK: homeassistant

    static let homeAssistantKeys = ["enabled", "discovery_prefix", "status_topic", "picker_timeout_s"]

    func homeAssistant(_ node: YAMLNode?, into settings: inout HomeAssistantConfiguration) {
        guard let section = fields(node, at: "homeassistant", allowed: Self.homeAssistantKeys) else { return }
        if let enabled = bool(section["enabled"], at: section.path("enabled")) { settings.enabled = enabled }
        // The same bounds as picker/show's number of seconds, so the button's request is never refused.
        if let timeout = integer(
            section["picker_timeout_s"], at: section.path("picker_timeout_s"), in: HomeAssistantConfiguration.pickerTimeoutRange)
        {
            settings.pickerTimeoutSeconds = timeout
        }
        for key in ["discovery_prefix", "status_topic"] {
            guard let topic = requiredOrDefault(section, key) else { continue }
            if let problem = Self.topicNameProblem(topic) {
                fail(section.path(key), problem, at: section[key])
            } else if key == "discovery_prefix" {
                settings.discoveryPrefix = topic
            } else {
                settings.statusTopic = topic
            }
        }
    }

    // MARK: switching

    func switching(_ node: YAMLNode?, into settings: inout SwitchingSettings) {
        guard let section = fields(node, at: "switching", allowed: ["placement_debounce_ms", "availability_timeout_s", "immediate_rssi"])
        else { return }
        if let debounce = integer(section["placement_debounce_ms"], at: section.path("placement_debounce_ms"), in: 0...600_000) {
            settings.placementDebounceMilliseconds = Int64(debounce)
        }
        if let timeout = integer(section["availability_timeout_s"], at: section.path("availability_timeout_s"), in: 1...86_400) {
            settings.availabilityTimeoutSeconds = Int64(timeout)
        }
        if let rssi = integer(section["immediate_rssi"], at: section.path("immediate_rssi"), in: -127...20) {
            settings.immediateRSSI = rssi
        }
    }
}
