/// Everything needed to reach a broker and to behave well on it: the one MQTT settings type,
/// which the bridge's configuration (`mqtt:`) fills in as it reads the file. Its password
/// mirrors as `<redacted>`, since the configuration holding it is logged and dumped.
public struct MQTTConfiguration: Sendable, Hashable {
    public enum ProtocolVersion: Int, CaseIterable, Sendable, Hashable {
        /// MQTT 3.1.1 (protocol level 4).
        case v311 = 4
        /// MQTT 5.
        case v5 = 5
    }

    /// TLS settings. Server verification is on unless `verifyHostname` is turned off;
    /// a client certificate is sent when `certificateFile` and `keyFile` are set.
    public struct TLS: Sendable, Hashable {
        public var caFile: String?
        public var caPath: String?
        public var certificateFile: String?
        public var keyFile: String?
        public var verifyHostname: Bool

        public init(
            caFile: String? = nil, caPath: String? = nil, certificateFile: String? = nil,
            keyFile: String? = nil, verifyHostname: Bool = true
        ) {
            self.caFile = caFile
            self.caPath = caPath
            self.certificateFile = certificateFile
            self.keyFile = keyFile
            self.verifyHostname = verifyHostname
        }
    }

    /// The last will: published by the broker when the connection drops without a DISCONNECT.
    public struct Will: Sendable, Hashable {
        public var topic: String
        public var payload: [UInt8]
        public var qos: MQTTQoS
        public var retain: Bool

        public init(topic: String, payload: [UInt8], qos: MQTTQoS = .atLeastOnce, retain: Bool = true) {
            self.topic = topic
            self.payload = payload
            self.qos = qos
            self.retain = retain
        }
    }

    public var host: String
    public var port: Int
    public var clientID: String
    public var keepalive: Int
    public var username: String?
    public var password: String? {
        get { redactedPassword.text }
        set { redactedPassword = Redacted(text: newValue) }
    }
    /// The password, stored where `dump` and `Mirror` see only `<redacted>`.
    private var redactedPassword: Redacted
    public var tls: TLS?
    public var protocolVersion: ProtocolVersion
    public var will: Will?
    public var reconnect: ReconnectBackoff
    /// false: the broker keeps the session (subscriptions, QoS 1 messages for this client)
    /// across disconnections; on MQTT 5 for ``sessionExpiryInterval`` seconds.
    public var cleanSession: Bool
    /// MQTT 5's Session Expiry Interval, sent in CONNECT when `cleanSession` is false (without
    /// it an MQTT 5 session ends with the connection). MQTT 3.1.1 has no such field: the broker
    /// keeps the session until its own limit (mosquitto's `persistent_client_expiration`).
    public var sessionExpiryInterval: UInt32
    /// Incoming messages waiting for the consumer, at most: beyond, new messages are dropped
    /// and counted, so a flood cannot exhaust memory, except those matching
    /// ``priorityFilters``. The consumer reports each message it takes
    /// (``MQTTClient/messagesTaken(_:)``). `nil` keeps every message.
    public var messageBufferLimit: Int?
    /// Topic filters whose messages are never dropped for ``messageBufferLimit``: messages
    /// said once (requests, statuses), which a flood must not crowd out.
    public var priorityFilters: [String] = []
    /// The largest packet this client accepts, announced in CONNECT as MQTT 5's Maximum Packet
    /// Size: the broker must not send a larger one (it drops it instead). libmosquitto
    /// itself reads any size whole, so this is the only limit before the allocation. MQTT
    /// 3.1.1 has no such field: `nil`, or the 3.1.1 protocol, announces nothing.
    public var maximumPacketSize: Int?

    public init(
        host: String = "localhost", port: Int = 1883, clientID: String, keepalive: Int = 60,
        username: String? = nil, password: String? = nil, tls: TLS? = nil,
        protocolVersion: ProtocolVersion = .v5, will: Will? = nil,
        reconnect: ReconnectBackoff = ReconnectBackoff(), cleanSession: Bool = true,
        messageBufferLimit: Int? = nil, maximumPacketSize: Int? = nil, sessionExpiryInterval: UInt32 = 0
    ) {
        self.sessionExpiryInterval = sessionExpiryInterval
        self.maximumPacketSize = maximumPacketSize
        self.host = host
        self.port = port
        self.clientID = clientID
        self.keepalive = keepalive
        self.username = username
        self.redactedPassword = Redacted(text: password)
        self.tls = tls
        self.protocolVersion = protocolVersion
        self.will = will
        self.reconnect = reconnect
        self.cleanSession = cleanSession
        self.messageBufferLimit = messageBufferLimit
    }

    /// Sets host, port and TLS from a server URL: `mqtt://host[:1883]` or `mqtts://host[:8883]`
    /// (a bare `host[:port]` means `mqtt://`). IPv6 literals go in brackets.
    public mutating func setServer(_ url: String) throws(MQTTError) {
        let server = try MQTTServerAddress(parsing: url)
        host = server.host
        port = server.port
        if server.usesTLS {
            if tls == nil { tls = TLS() }
        } else {
            tls = nil
        }
    }
}

extension MQTTConfiguration {
    /// A secret text that reflects as `<redacted>`.
    fileprivate struct Redacted: Sendable, Hashable, CustomReflectable {
        var text: String?
        var customMirror: Mirror { Mirror(reflecting: text == nil ? "nil" : "<redacted>") }
    }
}

/// A parsed `mqtt://` / `mqtts://` server URL.
public struct MQTTServerAddress: Sendable, Hashable {
    public var host: String
    public var port: Int
    public var usesTLS: Bool

    public init(parsing url: String) throws(MQTTError) {
        var rest = Substring(url)
        usesTLS = false
        if let range = rest.firstRange(of: "://") {
            let scheme = rest[..<range.lowerBound].lowercased()
            switch scheme {
            case "mqtt", "tcp": usesTLS = false
            case "mqtts", "ssl", "tls": usesTLS = true
            default:
                throw MQTTError(
                    code: .invalidConfiguration,
                    message: "unsupported scheme '\(scheme)' in server URL (use mqtt:// or mqtts://)")
            }
            rest = rest[range.upperBound...]
        }
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        var hostPart = rest
        var portPart: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else {
                throw MQTTError(code: .invalidConfiguration, message: "unclosed '[' in server URL '\(url)'")
            }
            hostPart = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") {
                portPart = after.dropFirst()
            } else if !after.isEmpty {
                throw MQTTError(code: .invalidConfiguration, message: "unexpected '\(after)' after host in server URL")
            }
        } else if let colon = rest.lastIndex(of: ":") {
            hostPart = rest[..<colon]
            portPart = rest[rest.index(after: colon)...]
        }
        guard !hostPart.isEmpty, !hostPart.contains("/") else {
            throw MQTTError(code: .invalidConfiguration, message: "no host in server URL '\(url)'")
        }
        host = String(hostPart)
        if let portPart {
            guard let value = Int(portPart), (1...65535).contains(value) else {
                throw MQTTError(code: .invalidConfiguration, message: "port '\(portPart)' in server URL is not 1-65535")
            }
            port = value
        } else {
            port = usesTLS ? 8883 : 1883
        }
    }
}
