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

    public var bluetoothCompanyIdentifier: UInt16?
    public var bluetoothServiceUUID: BluetoothUUID?
    public var bluetoothNameSubstring: String?
    public var bluetoothNameCompare: NameCompare
    public var bluetoothManufacturerDataBlob: [UInt8]?
    public var bluetoothManufacturerDataMask: [UInt8]?
    public var bluetoothServiceDataBlob: [UInt8]?
    public var bluetoothServiceDataMask: [UInt8]?
    public var bluetoothRange: Range
    public var ssid: String?
    public var ssidPrefix: String?
    public var supportedOptions: SupportedOptions

    /// Creates a descriptor; everything defaults to unset.
    public init(
        bluetoothCompanyIdentifier: UInt16? = nil, bluetoothServiceUUID: BluetoothUUID? = nil,
        bluetoothNameSubstring: String? = nil, bluetoothNameCompare: NameCompare = .literal,
        bluetoothManufacturerDataBlob: [UInt8]? = nil, bluetoothManufacturerDataMask: [UInt8]? = nil,
        bluetoothServiceDataBlob: [UInt8]? = nil, bluetoothServiceDataMask: [UInt8]? = nil,
        bluetoothRange: Range = .default, ssid: String? = nil, ssidPrefix: String? = nil,
        supportedOptions: SupportedOptions = []
    ) {
        self.bluetoothCompanyIdentifier = bluetoothCompanyIdentifier
        self.bluetoothServiceUUID = bluetoothServiceUUID
        self.bluetoothNameSubstring = bluetoothNameSubstring
        self.bluetoothNameCompare = bluetoothNameCompare
        self.bluetoothManufacturerDataBlob = bluetoothManufacturerDataBlob
        self.bluetoothManufacturerDataMask = bluetoothManufacturerDataMask
        self.bluetoothServiceDataBlob = bluetoothServiceDataBlob
        self.bluetoothServiceDataMask = bluetoothServiceDataMask
        self.bluetoothRange = bluetoothRange
        self.ssid = ssid
        self.ssidPrefix = ssidPrefix
        self.supportedOptions = supportedOptions
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
