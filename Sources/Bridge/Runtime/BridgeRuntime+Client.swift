import Configuration
import MQTT

extension BridgeRuntime {
    /// The MQTT client's settings: server, credentials, TLS, and the retained `offline` will.
    public static func clientConfiguration(_ configuration: BridgeConfiguration, topics: Topics) throws -> MQTT.MQTTConfiguration {
        let broker = configuration.mqtt
        var client = MQTT.MQTTConfiguration(clientID: broker.clientID, keepalive: broker.keepalive)
        try client.setServer(broker.server)
        client.username = broker.user
        client.password = broker.password?.revealed
        if client.tls != nil || broker.ca != nil || broker.cert != nil {
            client.tls = .init(caFile: broker.ca, certificateFile: broker.cert, keyFile: broker.key)
        }
        client.protocolVersion = broker.version == .v5 ? .v5 : .v311
        client.reconnect = ReconnectBackoff(
            minimum: .seconds(broker.reconnect.minimumSeconds),
            maximum: .seconds(broker.reconnect.maximumSeconds))
        client.will = .init(topic: topics.bridgeState, payload: Array(#"{"state":"offline"}"#.utf8), qos: .atLeastOnce, retain: true)
        // An oversized message (48 MiB on a gateway topic) is dropped by the broker instead of
        // being read whole and copied here (MQTT 5; docs/configuration.md for 3.1.1).
        client.maximumPacketSize = broker.maxPacketSize
        // A persistent session: the broker keeps QoS 1 requests and `/set` updates sent while
        // the bridge reconnects or restarts, instead of dropping them (mqtt.session_expiry_s).
        client.cleanSession = broker.sessionExpirySeconds == 0
        client.sessionExpiryInterval = UInt32(broker.sessionExpirySeconds)
        return client
    }
}
