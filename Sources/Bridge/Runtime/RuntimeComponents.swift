import Configuration
import HomeAssistant

/// The components a configuration asks for, in the order their hooks run and their claims are
/// tried: adding a feature is its own type and a line here.
enum RuntimeComponents {
    /// - Parameter lookalikes: the board ``Ingest``'s attribution lists look-alikes on.
    static func make(for configuration: BridgeConfiguration, ownership: Ownership, lookalikes: LookalikeBoard) -> [any RuntimeComponent] {
        let topics = Topics(base: configuration.mqtt.baseTopic)
        var components: [any RuntimeComponent] = [
            StartupChecks(configuration: configuration),
            PairingFormComponent(topics: topics), ReattachFormComponent(topics: topics),
        ]
        if configuration.cluster.enabled { components.append(ClusterComponent(configuration: configuration, ownership: ownership)) }
        // One list of heard gateways (`bridge/gateways`) whichever source hears each.
        let gateways = GatewayBoard(configuration: configuration)
        components.append(MQTTGatewaySource(configuration: configuration, board: gateways))
        for (entry, gateway) in configuration.gateways.enumerated() where gateway.format == .bluez {
            components.append(BlueZSource(entry: entry, configuration: configuration, board: gateways))
        }
        if configuration.homeAssistant.enabled {
            components.append(
                HomeAssistantStatusComponent(
                    discovery: HomeAssistantDiscovery(configuration: configuration, version: BridgeModule.version),
                    statusTopic: configuration.homeAssistant.statusTopic))
        }
        components += [
            HealthComponent(intervalSeconds: configuration.health.intervalSeconds),
            LookalikesComponent(board: lookalikes),
            HeadTrackingComponent(),
        ]
        if let listen = configuration.http.listen {
            components.append(HTTPComponent(configuration: configuration.http, listen: listen, baseTopic: topics.base))
        }
        return components
    }
}
