import AccessoryKit
import JSON

extension BridgeConfiguration {
    /// The configuration for `bridge/info`'s `config` object, without any secret: the
    /// password shows only as whether one is set, irks only as whether one is set.
    /// Keys are sorted at every level, so the published text is stable.
    public var summary: JSONValue {
        let mqtt = Self.object([
            ("server", .string(self.mqtt.server)),
            ("base_topic", .string(self.mqtt.baseTopic)),
            ("client_id", .string(self.mqtt.clientID)),
            ("user", .string(self.mqtt.user)),
            ("password_set", .bool(self.mqtt.password != nil)),
            ("keepalive", .int(self.mqtt.keepalive)),
            ("version", .int(self.mqtt.version.rawValue)),
            ("max_packet_size", .int(self.mqtt.maxPacketSize)),
            ("session_expiry_s", .int(self.mqtt.sessionExpirySeconds)),
            (
                "reconnect",
                Self.object([
                    ("min_s", .int(self.mqtt.reconnect.minimumSeconds)), ("max_s", .int(self.mqtt.reconnect.maximumSeconds)),
                ])
            ),
            // File paths are not secrets; their contents are never read into the summary.
            ("password_file", .string(self.mqtt.passwordFile)),
            ("ca", .string(self.mqtt.ca)),
            ("cert", .string(self.mqtt.cert)),
            ("key", .string(self.mqtt.key)),
        ])
        return Self.object([
            ("mqtt", mqtt),
            (
                "homeassistant",
                Self.object([
                    ("enabled", .bool(homeAssistant.enabled)), ("discovery_prefix", .string(homeAssistant.discoveryPrefix)),
                    ("status_topic", .string(homeAssistant.statusTopic)),
                    ("picker_timeout_s", .int(homeAssistant.pickerTimeoutSeconds)),
                ])
            ),
            ("rooms", Self.object(rooms.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.string($0.value)) })),
            ("storage", storageSummary),
            ("health", Self.object([("interval_s", .int(health.intervalSeconds))])),
            ("log", Self.object([("level", .string(log.level.rawValue)), ("format", .string(log.format.rawValue))])),
            (
                "setup",
                Self.object([
                    ("supports", Self.strings(setup.supports.map(\.rawValue).sorted())),
                    (
                        "bluetooth",
                        Self.object([
                            ("company_identifiers", Self.strings(setup.bluetoothCompanyIdentifiers.sorted().map(Self.hex16))),
                            ("services", Self.strings(setup.bluetoothServices.map(\.description).sorted())),
                            ("names", Self.strings(setup.bluetoothNames.sorted())),
                        ])
                    ),
                ])
            ),
            (
                "products",
                .array(
                    products.map { entry in
                        Self.object([
                            ("name", .string(entry.name)), ("hardware", .string(entry.product.hardware.rawValue)),
                            ("capabilities", Self.strings(entry.product.capabilities.names)),
                            ("auto_register", .bool(entry.product.autoRegister)),
                            ("placement_decoder", .string(entry.placementDecoder.name)),
                        ])
                    })
            ),
            (
                "gateways",
                .array(
                    gateways.map { gateway in
                        Self.object([
                            ("name", .string(gateway.name)), ("format", .string(gateway.format.rawValue)),
                            ("topic", .string(gateway.topic)),
                            ("status_topic", .string(gateway.statusTopic)),
                        ])
                    })
            ),
            (
                "accessories",
                .array(
                    accessories.map { entry in
                        Self.object([
                            ("id", .string(entry.migration.id.description)), ("name", .string(entry.migration.name)),
                            ("product", .string(entry.migration.product)), ("irk_set", .bool(entry.keys.irk != nil)),
                            ("encryption_key_set", .bool(entry.keys.encryptionKey != nil)),
                        ])
                    })
            ),
            ("sources", .array(sources.map { Self.object([("address", .string($0.address.description)), ("name", .string($0.name))]) })),
            (
                "switching",
                Self.object([
                    ("placement_debounce_ms", .int(Int(switching.placementDebounceMilliseconds))),
                    ("availability_timeout_s", .int(Int(switching.availabilityTimeoutSeconds))),
                    ("immediate_rssi", .int(switching.immediateRSSI)),
                ])
            ),
            (
                "identity",
                Self.object([
                    ("follow", .bool(identity.follow)), ("reattach", .string(identity.reattach.rawValue)),
                    ("lookalike_window_s", .int(identity.lookalikeWindowSeconds)),
                ])
            ),
            (
                "http",
                Self.object([
                    ("listen", .string(http.listen?.description)), ("token_set", .bool(http.token != nil)),
                    ("token_file", .string(http.tokenFile)), ("connection_limit", .int(http.connectionLimit)),
                    ("timeout_s", .int(http.timeoutSeconds)), ("connections_per_client", .int(http.connectionsPerClient)),
                    ("header_timeout_s", .int(http.headerTimeoutSeconds)), ("allowed_hosts", Self.strings(http.allowedHosts)),
                    ("allowed_clients", Self.strings(http.allowedClients.map(\.description))),
                ])
            ),
            (
                "cluster",
                Self.object([
                    ("enabled", .bool(cluster.enabled)), ("instance", .string(cluster.instance)),
                    ("partitions", .int(cluster.partitions)),
                ])
            ),
        ])
    }

    /// An object with its keys sorted.
    private static func object(_ pairs: [(String, JSONValue)]) -> JSONValue {
        .object(pairs.sorted { $0.0 < $1.0 })
    }

    /// SQLite's as it always was (the path); PostgreSQL's with the URL stripped of a password
    /// written into it and the password only as whether one is set.
    private var storageSummary: JSONValue {
        switch storage.backend {
        case .sqlite: Self.object([("path", .string(storage.path))])
        case .postgresql:
            Self.object([
                ("backend", .string(storage.backend.rawValue)), ("url", .string(storage.redactedURL)),
                ("password_set", .bool(storage.password != nil)), ("password_file", .string(storage.passwordFile)),
            ])
        }
    }

    private static func strings(_ values: [String]) -> JSONValue { .array(values.map(JSONValue.string)) }

    private static func hex16(_ value: UInt16) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: 4 - digits.count) + digits
    }
}
