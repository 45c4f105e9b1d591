import Configuration
import MQTT

extension BridgeRuntime {
    /// The MQTT client's settings: those of the `mqtt:` section as it was read (server,
    /// credentials, TLS, version, backoff, the maximum packet size that makes the broker drop an
    /// oversized message instead of it being read whole here, and the persistent session that
    /// keeps requests sent while the bridge reconnects or restarts), with the retained
    /// `offline` will. `throws` for the callers' sake: a configuration that loaded always has
    /// settings.
    public static func clientConfiguration(_ configuration: BridgeConfiguration, topics: Topics) throws -> MQTTConfiguration {
        var client = configuration.mqtt.client
        client.will = .init(topic: topics.bridgeState, payload: Array(#"{"state":"offline"}"#.utf8), qos: .atLeastOnce, retain: true)
        return client
    }
}
