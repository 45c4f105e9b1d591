/// The BLE-to-MQTT gateway software whose messages a gateway entry parses.
public enum GatewayFormat: String, Hashable, Sendable, CaseIterable {
    case openmqttgateway
    case theengs
    case espresense
    case tasmota
    /// Accessory firmware relayed by a gateway, in aabridge's own report format.
    case native
    /// Home Assistant's Bluetooth scanners, forwarded by the `aabridge_relay` integration
    /// (custom_components/aabridge_relay): a node per scanner, OpenMQTTGateway's payload shape
    /// (docs/mqtt-api.md, "Home Assistant relay"). Its own format so the bridge can tell a silent
    /// relay and a stale scanner apart from a gateway that merely hears nothing.
    case haRelay = "ha_relay"
    /// The box's own Bluetooth adapter through BlueZ over D-Bus: heard without MQTT, so it
    /// has no topics (its entry names the adapter instead).
    case bluez

    /// Whether the format's messages arrive on MQTT topics (every format but `bluez`).
    public var isMQTT: Bool { self != .bluez }

    /// The default subscription for telemetry (configuration.md `gateways[].topic`).
    public func defaultTopic(baseTopic: String = "aabridge") -> String {
        switch self {
        case .openmqttgateway, .theengs: "home/+/BTtoMQTT/#"
        case .espresense: "espresense/devices/#"
        case .tasmota: "tele/+/BLE"
        case .native: "\(baseTopic)/telemetry/+/+"
        case .haRelay: "aabridge_relay/+/BTtoMQTT/+"
        // Never subscribed (the entry is heard over D-Bus); a filter no gateway publishes on.
        case .bluez: "$aabridge/none"
        }
    }

    /// The default subscription for gateway availability, or `nil` when the format has none.
    public var defaultStatusTopic: String? {
        switch self {
        case .openmqttgateway, .theengs: "home/+/LWT"
        case .espresense: "espresense/rooms/+/status"
        case .tasmota: "tele/+/LWT"
        case .native, .bluez: nil
        case .haRelay: "aabridge_relay/+/LWT"
        }
    }
}
