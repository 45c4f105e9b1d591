/// How the picker recognises a product's accessories (AccessorySetupKit's
/// `ASDiscoveryDescriptor`), one per product.
public struct DiscoveryDescriptor: Hashable, Sendable {
    /// How `bluetoothNameSubstring` is compared.
    public enum NameCompare: String, Hashable, Sendable {
        /// Exact characters (the default).
        case literal
        /// Ignoring ASCII case.
        case caseInsensitive
    }

    /// How close the accessory must be.
    public enum Range: String, Hashable, Sendable {
        case `default`
        /// RSSI at or above `switching.immediate_rssi`.
        case immediate
    }

    /// `supportedOptions`.
    public struct SupportedOptions: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let bluetoothPairingLE = SupportedOptions(rawValue: 1 << 0)
        public static let bluetoothTransportBridging = SupportedOptions(rawValue: 1 << 1)
        public static let bluetoothHID = SupportedOptions(rawValue: 1 << 2)
    }

    /// The fields, in a storage that copies share: every accessory holds its product's
    /// descriptor (the restore decodes each product's once), and inline the fields took 129 of
    /// an accessory's 216 bytes (issue 53). A change makes a storage of its own.
    private var storage: Storage

    private struct Fields: Hashable, Sendable {
        var bluetoothCompanyIdentifier: UInt16?
        var bluetoothServiceUUID: BluetoothUUID?
        var bluetoothNameSubstring: String?
        var bluetoothNameCompare: NameCompare
        var bluetoothManufacturerDataBlob: [UInt8]?
        var bluetoothManufacturerDataMask: [UInt8]?
        var bluetoothServiceDataBlob: [UInt8]?
        var bluetoothServiceDataMask: [UInt8]?
        var bluetoothRange: Range
        var ssid: String?
        var ssidPrefix: String?
        var supportedOptions: SupportedOptions
    }

    private final class Storage: Sendable {
        let fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    /// Changes one field in a storage of its own.
    private mutating func change<Value>(_ field: WritableKeyPath<Fields, Value>, to value: Value) {
        var fields = storage.fields
        fields[keyPath: field] = value
        storage = Storage(fields)
    }

    public var bluetoothCompanyIdentifier: UInt16? {
        get { storage.fields.bluetoothCompanyIdentifier }
        set { change(\.bluetoothCompanyIdentifier, to: newValue) }
    }

    public var bluetoothServiceUUID: BluetoothUUID? {
        get { storage.fields.bluetoothServiceUUID }
        set { change(\.bluetoothServiceUUID, to: newValue) }
    }

    public var bluetoothNameSubstring: String? {
        get { storage.fields.bluetoothNameSubstring }
        set { change(\.bluetoothNameSubstring, to: newValue) }
    }

    public var bluetoothNameCompare: NameCompare {
        get { storage.fields.bluetoothNameCompare }
        set { change(\.bluetoothNameCompare, to: newValue) }
    }

    public var bluetoothManufacturerDataBlob: [UInt8]? {
        get { storage.fields.bluetoothManufacturerDataBlob }
        set { change(\.bluetoothManufacturerDataBlob, to: newValue) }
    }

    public var bluetoothManufacturerDataMask: [UInt8]? {
        get { storage.fields.bluetoothManufacturerDataMask }
        set { change(\.bluetoothManufacturerDataMask, to: newValue) }
    }

    public var bluetoothServiceDataBlob: [UInt8]? {
        get { storage.fields.bluetoothServiceDataBlob }
        set { change(\.bluetoothServiceDataBlob, to: newValue) }
    }

    public var bluetoothServiceDataMask: [UInt8]? {
        get { storage.fields.bluetoothServiceDataMask }
        set { change(\.bluetoothServiceDataMask, to: newValue) }
    }

    public var bluetoothRange: Range {
        get { storage.fields.bluetoothRange }
        set { change(\.bluetoothRange, to: newValue) }
    }

    public var ssid: String? {
        get { storage.fields.ssid }
        set { change(\.ssid, to: newValue) }
    }

    public var ssidPrefix: String? {
        get { storage.fields.ssidPrefix }
        set { change(\.ssidPrefix, to: newValue) }
    }

    public var supportedOptions: SupportedOptions {
        get { storage.fields.supportedOptions }
        set { change(\.supportedOptions, to: newValue) }
    }

    public static func == (left: Self, right: Self) -> Bool {
        left.storage === right.storage || left.storage.fields == right.storage.fields
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(storage.fields) }

    /// Creates a descriptor; everything defaults to unset.
    public init(
        bluetoothCompanyIdentifier: UInt16? = nil, bluetoothServiceUUID: BluetoothUUID? = nil,
        bluetoothNameSubstring: String? = nil, bluetoothNameCompare: NameCompare = .literal,
        bluetoothManufacturerDataBlob: [UInt8]? = nil, bluetoothManufacturerDataMask: [UInt8]? = nil,
        bluetoothServiceDataBlob: [UInt8]? = nil, bluetoothServiceDataMask: [UInt8]? = nil,
        bluetoothRange: Range = .default, ssid: String? = nil, ssidPrefix: String? = nil,
        supportedOptions: SupportedOptions = []
    ) {
        storage = Storage(
            Fields(
                bluetoothCompanyIdentifier: bluetoothCompanyIdentifier,
                bluetoothServiceUUID: bluetoothServiceUUID,
                bluetoothNameSubstring: bluetoothNameSubstring,
                bluetoothNameCompare: bluetoothNameCompare,
                bluetoothManufacturerDataBlob: bluetoothManufacturerDataBlob,
                bluetoothManufacturerDataMask: bluetoothManufacturerDataMask,
                bluetoothServiceDataBlob: bluetoothServiceDataBlob,
                bluetoothServiceDataMask: bluetoothServiceDataMask,
                bluetoothRange: bluetoothRange,
                ssid: ssid,
                ssidPrefix: ssidPrefix,
                supportedOptions: supportedOptions))
    }

    /// Whether any Bluetooth field is used.
    public var usesBluetooth: Bool {
        bluetoothCompanyIdentifier != nil || bluetoothServiceUUID != nil || bluetoothNameSubstring != nil
            || bluetoothManufacturerDataBlob != nil || bluetoothManufacturerDataMask != nil
            || bluetoothServiceDataBlob != nil || bluetoothServiceDataMask != nil
            || bluetoothRange != .default || !supportedOptions.isEmpty
    }

    /// Whether any Wi-Fi field is used.
    public var usesWiFi: Bool { ssid != nil || ssidPrefix != nil }
}
