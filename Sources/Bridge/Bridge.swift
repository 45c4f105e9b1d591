/// The runtime: configuration, topic map, request API, state publisher, Home Assistant discovery.
public enum BridgeModule {
    /// The version printed by `aabridge version` and published in `bridge/info`.
    public static let version = "0.1.0"
}
