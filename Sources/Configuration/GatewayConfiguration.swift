import Telemetry

/// One entry of `gateways:`: where BLE telemetry arrives and in which payload format.
public struct GatewayConfiguration: Hashable, Sendable {
    /// The gateway firmware's payload format, with its default topics: the Telemetry
    /// module's, so the parser and the configuration can never disagree about them.
    public typealias Format = GatewayFormat

    /// A label, unique among gateways.
    public var name: String
    public var format: Format
    /// The topic filter subscribed for telemetry.
    public var topic: String
    /// The topic filter for gateway availability; nil when the gateway has none.
    public var statusTopic: String?
    /// A `bluez` entry's adapter (`hci0`); nil for the first adapter BlueZ lists.
    public var adapter: String?
    /// A `bluez` entry's scanning: active discovery, or passive where BlueZ offers it.
    public var scanning: Scanning = .active

    /// How a `bluez` entry scans (docs/configuration.md, "The box's own adapter").
    public enum Scanning: String, Hashable, Sendable, CaseIterable {
        /// LE discovery with a discovery filter: every BlueZ since 5.x, scan requests sent.
        case active
        /// An advertisement monitor (`AdvertisementMonitorManager1`, `or_patterns`): BlueZ 5.56
        /// or later started with `--experimental`, Linux 5.10 or later; active where it is not offered.
        case passive
    }

    /// Creates a gateway; topics default per format.
    /// - Parameters:
    ///   - topic: nil for the format's default.
    ///   - statusTopic: nil for the format's default; `.some(nil)` for none (`status_topic: null`).
    ///   - baseTopic: `mqtt.base_topic`, for the native format's default topic.
    public init(name: String, format: Format, topic: String? = nil, statusTopic: String?? = nil, baseTopic: String = "aabridge") {
        self.name = name
        self.format = format
        self.topic = topic ?? format.defaultTopic(baseTopic: baseTopic)
        self.statusTopic = statusTopic ?? format.defaultStatusTopic
    }
}
