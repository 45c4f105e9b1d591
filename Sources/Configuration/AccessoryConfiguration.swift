import AccessoryKit

/// One entry of `accessories:`: a pre-authorized accessory migrated on first start, and the
/// keys it is known by, applied at every start (identity.md, Keys).
public struct AccessoryConfiguration: Hashable, Sendable, CustomStringConvertible {
    public var migration: MigrationItem
    /// Its IRK and proximity-pairing encryption key, when the file gives them. Secrets: they
    /// identify the accessory wherever it goes (``AccessoryKey`` never prints its bytes).
    public var keys: AccessoryKeys

    /// Creates an entry.
    public init(migration: MigrationItem, keys: AccessoryKeys = AccessoryKeys()) {
        self.migration = migration
        self.keys = keys
    }

    public var description: String {
        "AccessoryConfiguration(id: \(migration.id), name: \(migration.name), product: \(migration.product), "
            + "irk: \(keys.irk == nil ? "none" : "set"), encryption_key: \(keys.encryptionKey == nil ? "none" : "set"))"
    }
}
