/// A switching decision for one accessory and one source (`accessory/<ID>/decision`).
public struct Decision: Hashable, Sendable {
    /// Route the source's audio to the accessory, or release it from the accessory.
    public enum Action: String, Hashable, Sendable {
        case route
        case release
    }

    public var action: Action
    public var accessory: BluetoothAddress
    public var source: BluetoothAddress
    public var reason: DecisionReason
    /// The accessory's placement at the time of the decision.
    public var placement: AccessoryControlDevice.Placement?

    public init(
        action: Action, accessory: BluetoothAddress, source: BluetoothAddress, reason: DecisionReason,
        placement: AccessoryControlDevice.Placement?
    ) {
        self.action = action
        self.accessory = accessory
        self.source = source
        self.reason = reason
        self.placement = placement
    }
}
