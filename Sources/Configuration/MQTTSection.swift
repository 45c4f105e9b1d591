import MQTT

/// The `mqtt:` section: how to reach the broker. What the client needs is kept in the MQTT
/// module's own settings (``client``, filled in as the section is read), so the runtime hands
/// it to the client as it is, adding only the bridge's last will. Beside it, what the bridge
/// alone uses: the server as written, the base topic, where the password came from. The other
/// properties read and write ``client`` under the section's own names and units.
public struct MQTTSection: Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
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

    /// The MQTT protocol version (`mqtt.version`): 4 is MQTT 3.1.1, 5 is MQTT 5.
    public typealias Version = MQTTConfiguration.ProtocolVersion

    /// The client's settings: host, port, client id, credentials, TLS files, keepalive,
    /// version, backoff, packet size, session.
    public var client: MQTTConfiguration
    /// `mqtt://host:port` or `mqtts://host:port`, as written.
    public var server: String
    /// Whether `server` is `mqtts://` (the client then uses TLS, with the files below if any).
    public var usesTLS: Bool {
        didSet { client.tls = usesTLS ? (client.tls ?? .init()) : nil }
    }
    public var baseTopic: String
    /// Where the password was read from, when it came from a file (the path, never the content).
    public var passwordFile: String?

    /// The documented defaults (`mqtt://localhost:1883`, base topic `aabridge`, client id `aabridge-<hostname>`).
    public init(hostname: String) {
        client = MQTTConfiguration(
            host: "localhost", port: 1883, clientID: "aabridge-\(hostname)", keepalive: 60, protocolVersion: .v5,
            reconnect: ReconnectBackoff(minimum: .seconds(1), maximum: .seconds(30)), cleanSession: false,
            maximumPacketSize: 262_144, sessionExpiryInterval: 3_600)
        server = "mqtt://localhost:1883"
        usesTLS = false
        baseTopic = "aabridge"
        passwordFile = nil
    }

    /// The broker host parsed from `server`.
    public var host: String { client.host }
    /// The port from `server`, or 1883 / 8883 by scheme.
    public var port: Int { client.port }
    public var clientID: String { client.clientID }
    public var user: String? { client.username }
    /// From `password`, `password_file` or `AABRIDGE_MQTT_PASSWORD`.
    public var password: Secret? {
        get { client.password.map(Secret.init) }
        set { client.password = newValue?.revealed }
    }
    /// CA file for `mqtts://`.
    public var ca: String? { client.tls?.caFile }
    /// Client certificate file.
    public var cert: String? { client.tls?.certificateFile }
    /// Client key file.
    public var key: String? { client.tls?.keyFile }
    /// Seconds.
    public var keepalive: Int { client.keepalive }
    public var version: Version { client.protocolVersion }
    public var reconnect: Reconnect {
        get {
            Reconnect(
                minimumSeconds: Int(client.reconnect.minimum.components.seconds),
                maximumSeconds: Int(client.reconnect.maximum.components.seconds))
        }
        set {
            client.reconnect = ReconnectBackoff(minimum: .seconds(newValue.minimumSeconds), maximum: .seconds(newValue.maximumSeconds))
        }
    }
    /// The largest MQTT packet the bridge accepts (bytes), announced to the broker on MQTT 5
    /// (Maximum Packet Size): larger messages are dropped by the broker, never allocated
    /// here. Telemetry and requests are refused above 64 KiB anyway.
    public var maxPacketSize: Int { client.maximumPacketSize ?? 0 }
    /// How long the broker keeps the bridge's session (its subscriptions and the QoS 1
    /// messages for it) after the connection drops, in seconds; 0 is a clean session at every
    /// connect. Requests sent while the bridge reconnects or restarts wait in that session.
    public var sessionExpirySeconds: Int {
        get { Int(client.sessionExpiryInterval) }
        set {
            client.sessionExpiryInterval = UInt32(newValue)
            client.cleanSession = newValue == 0
        }
    }

    /// Sets a TLS file (`ca`, `cert`, `key`) in the client's TLS settings, which a file given
    /// for an `mqtt://` server (refused by the decoder) creates; no file creates none.
    public mutating func setTLSFile(_ file: WritableKeyPath<MQTTConfiguration.TLS, String?>, to path: String?) {
        guard path != nil || client.tls != nil else { return }
        var tls = client.tls ?? .init()
        tls[keyPath: file] = path
        client.tls = tls
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
