/// The BLE-to-MQTT gateway software whose messages a gateway entry parses.
public enum GatewayFormat: String, Hashable, Sendable, CaseIterable {
    case openmqttgateway
    case theengs
    case espresense
    case tasmota
    /// Accessory firmware relayed by a gateway, in aabridge's own report format.
    case native

    /// The default subscription for telemetry (configuration.md `gateways[].topic`).
    public func defaultTopic(baseTopic: String = "aabridge") -> String {
        switch self {
        case .openmqttgateway, .theengs: "home/+/BTtoMQTT/#"
        case .espresense: "espresense/devices/#"
        case .tasmota: "tele/+/BLE"
        case .native: "\(baseTopic)/telemetry/+/+"
        }
    }

    /// The default subscription for gateway availability, or `nil` when the format has none.
    public var defaultStatusTopic: String? {
        switch self {
        case .openmqttgateway, .theengs: "home/+/LWT"
        case .espresense: "espresense/rooms/+/status"
        case .tasmota: "tele/+/LWT"
        case .native: nil
        }
    }
}
