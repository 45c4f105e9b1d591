/// What storage gives back at startup.
public struct RestoredState: Hashable, Sendable {
    public var accessories: [Accessory]
    public var registrations: [BluetoothAddress: Registration]
    /// Whether the configured migration already ran (it runs once).
    public var migrationComplete: Bool

    public init(accessories: [Accessory] = [], registrations: [BluetoothAddress: Registration] = [:], migrationComplete: Bool = false) {
        self.accessories = accessories
        self.registrations = registrations
        self.migrationComplete = migrationComplete
    }
}
