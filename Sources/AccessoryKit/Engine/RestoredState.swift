/// What storage gives back at startup.
public struct RestoredState: Hashable, Sendable {
    public var accessories: [Accessory]
    public var registrations: [BluetoothAddress: Registration]
    /// Whether the configured migration already ran (it runs once).
    public var migrationComplete: Bool
    /// Each accessory's stored keys.
    public var keys: [BluetoothAddress: AccessoryKeys]
    /// The address each accessory was last followed to without a key.
    public var followedAddresses: [BluetoothAddress: BluetoothAddress]

    public init(
        accessories: [Accessory] = [], registrations: [BluetoothAddress: Registration] = [:], migrationComplete: Bool = false,
        keys: [BluetoothAddress: AccessoryKeys] = [:], followedAddresses: [BluetoothAddress: BluetoothAddress] = [:]
    ) {
        self.accessories = accessories
        self.registrations = registrations
        self.migrationComplete = migrationComplete
        self.keys = keys
        self.followedAddresses = followedAddresses
    }
}
