/// One entry of `gateways:`: where BLE telemetry arrives and in which payload format.
public struct GatewayConfiguration: Hashable, Sendable {
    /// The gateway firmware's payload format.
    public enum Format: String, CaseIterable, Hashable, Sendable {
        case openmqttgateway
        case theengs
        case espresense
        case tasmota
        /// aabridge's own telemetry format.
        case native

        /// The topic filter the firmware publishes advertisements on by default.
        /// - Parameter baseTopic: `mqtt.base_topic`, which the native format lives under.
        public func defaultTopic(baseTopic: String) -> String {
            switch self {
            case .openmqttgateway, .theengs: "home/+/BTtoMQTT/#"
            case .espresense: "espresense/devices/#"
            case .tasmota: "tele/+/BLE"
            case .native: "\(baseTopic)/telemetry/+/+"
            }
        }

        /// The firmware's availability (last will) topic filter by default; native has none.
        public var defaultStatusTopic: String? {
            switch self {
            case .openmqttgateway, .theengs: "home/+/LWT"
            case .espresense: "espresense/rooms/+/status"
            case .tasmota: "tele/+/LWT"
            case .native: nil
            }
        }
    }

    /// A label, unique among gateways.
    public var name: String
    public var format: Format
    /// The topic filter subscribed for telemetry.
    public var topic: String
    /// The topic filter for gateway availability; nil when the gateway has none.
    public var statusTopic: String?

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
