/// A source's route changed (published retained on `source/<ID>/route`).
public struct RouteChange: Hashable, Sendable {
    public var source: BluetoothAddress
    public var previous: RouteTarget
    public var target: RouteTarget
    public var reason: DecisionReason

    public init(source: BluetoothAddress, previous: RouteTarget, target: RouteTarget, reason: DecisionReason) {
        self.source = source
        self.previous = previous
        self.target = target
        self.reason = reason
    }
}
