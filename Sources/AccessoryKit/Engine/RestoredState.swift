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
    /// Each accessory's home sources, in order (household.md, "Home sources").
    public var homeSources: [BluetoothAddress: [BluetoothAddress]]
    /// Each accessory's alias: the public address phones and desktops know it by.
    public var aliases: [BluetoothAddress: BluetoothAddress]
    /// Names given to source devices at run time (`source/name`).
    public var sourceNames: [BluetoothAddress: String]
    /// What re-attaching each accessory needs (its profile, its last room).
    public var traces: [BluetoothAddress: AccessoryTrace]

    public init(
        accessories: [Accessory] = [], registrations: [BluetoothAddress: Registration] = [:], migrationComplete: Bool = false,
        keys: [BluetoothAddress: AccessoryKeys] = [:], followedAddresses: [BluetoothAddress: BluetoothAddress] = [:],
        homeSources: [BluetoothAddress: [BluetoothAddress]] = [:], aliases: [BluetoothAddress: BluetoothAddress] = [:],
        sourceNames: [BluetoothAddress: String] = [:], traces: [BluetoothAddress: AccessoryTrace] = [:]
    ) {
        self.traces = traces
        self.homeSources = homeSources
        self.aliases = aliases
        self.sourceNames = sourceNames
        self.accessories = accessories
        self.registrations = registrations
        self.migrationComplete = migrationComplete
        self.keys = keys
        self.followedAddresses = followedAddresses
    }
}
