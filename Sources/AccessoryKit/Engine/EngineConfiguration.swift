/// Everything the engine takes from the configuration file.
public struct EngineConfiguration: Hashable, Sendable {
    /// One broken rule with its key path, e.g. `products[1].descriptor.bluetooth_manufacturer_data_mask`.
    public struct Issue: Hashable, Sendable, CustomStringConvertible {
        public var path: String
        public var error: DescriptorError
        public init(path: String, error: DescriptorError) {
            self.path = path
            self.error = error
        }

        public var description: String { "\(path): \(error.message)" }
    }

    public var products: [Product]
    public var declaration: SetupDeclaration
    public var switching: SwitchingSettings
    /// The `accessories:` section, migrated on first start.
    public var migrations: [MigrationItem]
    /// Keys from the configuration's `accessories:` entries, applied at every start (the file
    /// wins for the keys it gives).
    public var keys: [BluetoothAddress: AccessoryKeys]
    /// The configuration's names for source devices (`sources:`): they win over names given
    /// at run time (`source/name`).
    public var sourceNames: [BluetoothAddress: String]

    /// Creates a configuration.
    public init(
        products: [Product], declaration: SetupDeclaration, switching: SwitchingSettings = .init(), migrations: [MigrationItem] = [],
        keys: [BluetoothAddress: AccessoryKeys] = [:], sourceNames: [BluetoothAddress: String] = [:]
    ) {
        self.keys = keys
        self.sourceNames = sourceNames
        self.products = products
        self.declaration = declaration
        self.switching = switching
        self.migrations = migrations
    }

    /// Every broken descriptor and migration rule, all at once, with key paths.
    public func validate() -> [Issue] {
        var issues: [Issue] = []
        for (index, product) in products.enumerated() {
            for error in product.descriptor.validate(against: declaration) {
                issues.append(Issue(path: "products[\(index)].descriptor.\(error.field)", error: error))
            }
        }
        for (index, item) in migrations.enumerated() {
            for error in item.validate(products: products) {
                issues.append(Issue(path: "accessories[\(index)].\(error.field)", error: error))
            }
        }
        return issues
    }
}
