/// The runtime: configuration, topic map, request API, state publisher.
public enum BridgeModule {
    public static let version = "0.1.0"
}
