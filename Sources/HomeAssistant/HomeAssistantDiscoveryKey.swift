import AccessoryKit

/// Everything in an accessory's discovery payload that comes from its status.
///
/// Two statuses with the same key produce the same discovery message, so the runtime
/// republishes discovery only when the key changes, not on every RSSI or placement update.
public struct HomeAssistantDiscoveryKey: Hashable, Sendable {
    public var id: BluetoothAddress
    /// The device name (a rename must reach Home Assistant).
    public var name: String
    /// Model and manufacturer come from the product.
    public var product: String
    /// Which components exist.
    public var capabilities: AccessoryControlDevice.Capabilities
    /// Which battery sensors exist.
    public var batteryParts: Set<HomeAssistantBatteryPart>

    /// Creates a key.
    public init(
        id: BluetoothAddress, name: String, product: String, capabilities: AccessoryControlDevice.Capabilities,
        batteryParts: Set<HomeAssistantBatteryPart>
    ) {
        self.id = id
        self.name = name
        self.product = product
        self.capabilities = capabilities
        self.batteryParts = batteryParts
    }
}
