/// The `mqtt:` section: how to reach the broker.
public struct MQTTConfiguration: Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// `mqtt.reconnect`: backoff bounds with jitter, in seconds.
    public struct Reconnect: Hashable, Sendable {
        public var minimumSeconds: Int
        public var maximumSeconds: Int

        /// Creates bounds; the defaults are the documented ones.
        public init(minimumSeconds: Int = 1, maximumSeconds: Int = 30) {
            self.minimumSeconds = minimumSeconds
            self.maximumSeconds = maximumSeconds
        }
    }

    /// The MQTT protocol version (`mqtt.version`).
    public enum Version: Int, CaseIterable, Hashable, Sendable {
        /// MQTT 3.1.1.
        case v311 = 4
        /// MQTT 5.
        case v5 = 5
    }

    /// `mqtt://host:port` or `mqtts://host:port`, as written.
    public var server: String
    /// The broker host parsed from `server`.
    public var host: String
    /// The port from `server`, or 1883 / 8883 by scheme.
    public var port: Int
    /// Whether `server` is `mqtts://`.
    public var usesTLS: Bool
    public var baseTopic: String
    public var clientID: String
    public var user: String?
    /// From `password`, `password_file` or `AABRIDGE_MQTT_PASSWORD`.
    public var password: Secret?
    /// Where the password was read from, when it came from a file (the path, never the content).
    public var passwordFile: String?
    /// CA file for `mqtts://`.
    public var ca: String?
    /// Client certificate file.
    public var cert: String?
    /// Client key file.
    public var key: String?
    /// Seconds.
    public var keepalive: Int
    public var version: Version
    public var reconnect: Reconnect
    /// The largest MQTT packet the bridge accepts (bytes), announced to the broker on MQTT 5
    /// (Maximum Packet Size): larger messages are dropped by the broker, never allocated
    /// here. Telemetry and requests are refused above 64 KiB anyway.
    public var maxPacketSize: Int
    /// How long the broker keeps the bridge's session (its subscriptions and the QoS 1
    /// messages for it) after the connection drops, in seconds; 0 is a clean session at every
    /// connect. Requests sent while the bridge reconnects or restarts wait in that session.
    public var sessionExpirySeconds: Int

    /// The documented defaults (`mqtt://localhost:1883`, base topic `aabridge`, client id `aabridge-<hostname>`).
    public init(hostname: String) {
        self.server = "mqtt://localhost:1883"
        self.host = "localhost"
        self.port = 1883
        self.usesTLS = false
        self.baseTopic = "aabridge"
        self.clientID = "aabridge-\(hostname)"
        self.user = nil
        self.password = nil
        self.passwordFile = nil
        self.ca = nil
        self.cert = nil
        self.key = nil
        self.keepalive = 60
        self.version = .v5
        self.reconnect = Reconnect()
        self.maxPacketSize = 262_144
        self.sessionExpirySeconds = 3_600
    }

    /// The settings without the password (it shows as `<redacted>` when set).
    public var description: String {
        var parts = ["server: \(server)", "base_topic: \(baseTopic)", "client_id: \(clientID)"]
        if let user { parts.append("user: \(user)") }
        if password != nil { parts.append("password: <redacted>") }
        if let passwordFile { parts.append("password_file: \(passwordFile)") }
        if let ca { parts.append("ca: \(ca)") }
        if let cert { parts.append("cert: \(cert)") }
        if let key { parts.append("key: \(key)") }
        parts.append("keepalive: \(keepalive)")
        parts.append("version: \(version.rawValue)")
        parts.append("session_expiry_s: \(sessionExpirySeconds)")
        parts.append("reconnect: {min_s: \(reconnect.minimumSeconds), max_s: \(reconnect.maximumSeconds)}")
        return "MQTTConfiguration(" + parts.joined(separator: ", ") + ")"
    }

    public var debugDescription: String { description }
}
