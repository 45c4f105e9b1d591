import AccessoryKit

/// One entry of `accessories:`: a pre-authorized accessory migrated on first start.
public struct AccessoryConfiguration: Hashable, Sendable, CustomStringConvertible {
    public var migration: MigrationItem
    /// The 16-byte identity resolving key, for accessories with rotating addresses.
    /// Treated as a secret: it identifies the accessory wherever it goes.
    public var irk: [UInt8]?

    /// Creates an entry.
    public init(migration: MigrationItem, irk: [UInt8]? = nil) {
        self.migration = migration
        self.irk = irk
    }

    public var description: String {
        "AccessoryConfiguration(id: \(migration.id), name: \(migration.name), product: \(migration.product)"
            + (irk == nil ? ")" : ", irk: <redacted>)")
    }
}
