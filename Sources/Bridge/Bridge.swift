/// The runtime: MQTT in and out, the request API, the state publisher, storage and the engine
/// wired together. Configuration, JSON and Home Assistant discovery are modules of their own.
public enum BridgeModule {
    /// The version printed by `aabridge version` and published in `bridge/info`.
    public static let version = "0.1.0"
}
