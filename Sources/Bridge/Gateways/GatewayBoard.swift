import Configuration

/// The heard gateways of every source (``GatewayTracker``), shared by the sources of one
/// configuration: `bridge/gateways` is one list, whichever source heard each gateway, and
/// each source counts on it what it heard. Only the loop's task touches it.
final class GatewayBoard {
    var tracker: GatewayTracker

    init(configuration: BridgeConfiguration) {
        tracker = GatewayTracker(configured: configuration.gateways.map { ($0.name, $0.format) })
    }
}
