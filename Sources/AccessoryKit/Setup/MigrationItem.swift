/// A pre-authorized accessory from the configuration's `accessories:` section
/// (AccessorySetupKit's `ASMigrationDisplayItem`).
public struct MigrationItem: Hashable, Sendable {
    public var id: BluetoothAddress
    public var name: String
    public var product: String
    /// A full SSID; a prefix is not allowed for migration.
    public var ssid: String?
    /// Present only so that a configured prefix can be refused with a clear error.
    public var ssidPrefix: String?

    /// Creates a migration item.
    public init(id: BluetoothAddress, name: String, product: String, ssid: String? = nil, ssidPrefix: String? = nil) {
        self.id = id
        self.name = name
        self.product = product
        self.ssid = ssid
        self.ssidPrefix = ssidPrefix
    }

    /// The broken rules, all at once.
    public func validate(products: [Product]) -> [DescriptorError] {
        var errors: [DescriptorError] = []
        if ssidPrefix != nil {
            errors.append(
                .init(field: "ssid_prefix", rule: .migrationSSIDPrefix, message: "a migrated accessory needs a full ssid, not a prefix"))
        }
        if ssid?.isEmpty == true {
            errors.append(.init(field: "ssid", rule: .ssidEmpty, message: "ssid must not be empty"))
        }
        if !products.contains(where: { $0.name == product }) {
            errors.append(.init(field: "product", rule: .migrationUnknownProduct, message: "no product named '\(product)'"))
        }
        return errors
    }
}
