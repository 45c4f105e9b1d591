/// A paired accessory, as AccessorySetupKit's `ASAccessory` describes it.
public struct Accessory: Hashable, Sendable {
    /// Authorization state, with AccessorySetupKit's raw values.
    public enum State: Int, CaseIterable, Hashable, Sendable {
        case unauthorized = 0
        case awaitingAuthorization = 10
        case authorized = 20

        /// The API name.
        public var name: String {
            switch self {
            case .unauthorized: "unauthorized"
            case .awaitingAuthorization: "awaitingAuthorization"
            case .authorized: "authorized"
            }
        }
    }

    /// The longest name kept: a name given in a request is refused beyond it, an advertised
    /// one is cut to it (an advertisement can say anything, up to a payload's 64 KiB).
    public static let maximumNameLength = 128

    /// An advertised name as a candidate shows it: trimmed and cut to ``maximumNameLength``
    /// characters; `nil` when nothing is left.
    public static func displayable(_ advertised: String?) -> String? {
        guard let advertised else { return nil }
        let trimmed = advertised.trimmingWhitespace
        guard !trimmed.isEmpty else { return nil }
        return String(trimmed.prefix(maximumNameLength))
    }

    /// The identity Bluetooth address.
    public var id: BluetoothAddress
    /// The user-visible name.
    public var displayName: String
    /// The product (picker display item) it was set up through.
    public var product: String
    /// The descriptor it was discovered with.
    public var descriptor: DiscoveryDescriptor
    /// Authorization state.
    public var state: State
    /// A UUID stable per accessory (derived from the address, so it survives restarts).
    public var bluetoothIdentifier: BluetoothUUID
    /// The accessory's Wi-Fi network, for Wi-Fi descriptors.
    public var ssid: String?
    /// Exactly six bytes when the descriptor supports transport bridging.
    public var bluetoothTransportBridgingIdentifier: [UInt8]?

    /// Creates an accessory.
    public init(
        id: BluetoothAddress, displayName: String, product: String, descriptor: DiscoveryDescriptor,
        state: State, bluetoothIdentifier: BluetoothUUID? = nil, ssid: String? = nil,
        bluetoothTransportBridgingIdentifier: [UInt8]? = nil
    ) {
        self.id = id
        self.displayName = displayName
        self.product = product
        self.descriptor = descriptor
        self.state = state
        self.bluetoothIdentifier = bluetoothIdentifier ?? Accessory.bluetoothIdentifier(for: id)
        self.ssid = ssid
        self.bluetoothTransportBridgingIdentifier = bluetoothTransportBridgingIdentifier
    }

    /// A deterministic UUID for an address (a fixed namespace in the high half, the address in
    /// the low half, version and variant bits set), so no random source is needed.
    public static func bluetoothIdentifier(for id: BluetoothAddress) -> BluetoothUUID {
        BluetoothUUID(high: 0xAAB1_D6E0_0000_8000, low: 0x8000_0000_0000_0000 | id.rawValue)
    }
}
