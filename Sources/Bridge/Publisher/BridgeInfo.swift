import AccessoryKit
import Configuration
import JSON

/// `bridge/info`: what the bridge is and runs with. The configuration part (redacted) is
/// built once; the counts come from the engine each time.
struct BridgeInfo {
    private let baseTopic: String
    private let products: [String]
    private let gatewayCount: Int
    private let summary: JSONValue

    init(configuration: BridgeConfiguration, baseTopic: String) {
        self.baseTopic = baseTopic
        products = configuration.products.map(\.name)
        gatewayCount = configuration.gateways.count
        summary = configuration.summary
    }

    func payload(engine: BridgeEngine, registered: Int) -> JSONValue {
        [
            "version": .string(BridgeModule.version),
            "base_topic": .string(baseTopic),
            "session": .string(engine.session.state == .invalidated ? "invalidated" : "activated"),
            "products": .array(products.map { .string($0) }),
            "accessories": .int(engine.accessories.count),
            "registered": .int(registered),
            "gateways": .int(gatewayCount),
            "config": summary,
        ]
    }
}
