import AccessoryKit

/// Everything in an accessory's discovery payload that comes from its status.
///
/// Two statuses with the same key produce the same discovery message, so the runtime
/// republishes discovery only when the key changes, not on every RSSI or placement update.
public struct HomeAssistantDiscoveryKey: Hashable, Sendable {
    public var id: BluetoothAddress
    /// The device name (a rename must reach Home Assistant).
    public var name: String
    /// Manufacturer comes from the product; the model from the product too until the
    /// accessory's advertisements name it (``model``).
    public var product: String
    /// The decoded model's marketing name, once known: Home Assistant shows it as the model.
    public var model: String?
    /// Which components exist.
    public var capabilities: AccessoryControlDevice.Capabilities
    /// Which battery sensors exist.
    public var batteryParts: Set<HomeAssistantBatteryPart>
    /// The options of the "Home source" select, in order (named sources, then the
    /// accessory's unnamed home sources): a source named or a home source set changes them.
    public var homeSourceOptions: [BluetoothAddress]
    /// The options of the "Look-alike" select: the look-alikes that could be the accessory.
    public var lookalikeOptions: [BluetoothAddress]

    /// Creates a key.
    public init(
        id: BluetoothAddress, name: String, product: String, capabilities: AccessoryControlDevice.Capabilities,
        batteryParts: Set<HomeAssistantBatteryPart>, model: String? = nil, homeSourceOptions: [BluetoothAddress] = [],
        lookalikeOptions: [BluetoothAddress] = []
    ) {
        self.lookalikeOptions = lookalikeOptions
        self.homeSourceOptions = homeSourceOptions
        self.id = id
        self.model = model
        self.name = name
        self.product = product
        self.capabilities = capabilities
        self.batteryParts = batteryParts
    }
}
