import AccessoryKit

/// One Bluetooth LE advertisement as a gateway heard it, normalised across gateway formats.
///
/// Fields a gateway did not publish are `nil` or empty; nothing is guessed.
public struct Advertisement: Hashable, Sendable {
    /// The gateway (or ESPresense room) that heard it, taken from the topic.
    public var gateway: String
    /// The advertiser's address.
    public var address: BluetoothAddress
    /// Whether the address is random (`mac_type` 1) or public (0), when the gateway says.
    public var isRandomAddress: Bool?
    /// Received signal strength in dBm, rounded; always within ``TelemetryLimits/rssiRange``.
    public var rssi: Int?
    /// Advertised TX power level in dBm.
    public var txPower: Int?
    /// The local name (complete preferred over shortened).
    public var name: String?
    /// AD flags (type 0x01), only from raw advertisements.
    public var flags: UInt8?
    /// Manufacturer-specific data structures, in the order received.
    public var manufacturerData: [ManufacturerData]
    /// Service data structures, in the order received.
    public var serviceData: [ServiceData]
    /// Advertised service UUIDs (complete and incomplete lists, 16- and 128-bit).
    public var serviceUUIDs: [BluetoothUUID]
    /// When aabridge received the message, milliseconds since the Unix epoch.
    public var receivedAt: Int64
    /// The IRK the gateway resolved the address with itself, as it printed it (ESPresense's
    /// `irk:<hex>` id, from its `known_irks`). A secret: never logged or published.
    public var knownIRK: [UInt8]?
    /// The Home Assistant area of the scanner that heard it, as the relay sends it (format
    /// `ha_relay`): shown on `bridge/gateways` as the room to give that node, never used to
    /// place anything by itself.
    public var gatewayArea: String?

    /// Creates an advertisement; everything but gateway, address and time is optional.
    public init(
        gateway: String, address: BluetoothAddress, isRandomAddress: Bool? = nil, rssi: Int? = nil,
        txPower: Int? = nil, name: String? = nil, flags: UInt8? = nil,
        manufacturerData: [ManufacturerData] = [], serviceData: [ServiceData] = [],
        serviceUUIDs: [BluetoothUUID] = [], receivedAt: Int64
    ) {
        self.gateway = gateway
        self.address = address
        self.isRandomAddress = isRandomAddress
        self.rssi = rssi
        self.txPower = txPower
        self.name = name
        self.flags = flags
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
        self.serviceUUIDs = serviceUUIDs
        self.receivedAt = receivedAt
    }

    /// The first manufacturer data structure, which is the only one in nearly every advertisement.
    public var manufacturer: ManufacturerData? { manufacturerData.first }

    /// The data advertised for a service, if any.
    public func serviceData(for uuid: BluetoothUUID) -> [UInt8]? {
        serviceData.first { $0.uuid == uuid }?.data
    }

    /// The Apple proximity-pairing status when the advertisement carries one.
    public var appleProximityPairing: ProximityPairing? {
        manufacturerData.lazy.compactMap { try? ProximityPairing(manufacturerData: $0) }.first
    }

    /// The Apple proximity-pairing message of any variant a genuine accessory sends, with what it
    /// carries in clear (``ProximityPairingMessage``); `nil` when there is none, or it is refused.
    public var proximityPairingMessage: ProximityPairingMessage? {
        manufacturerData.lazy.compactMap { try? ProximityPairingMessage(manufacturerData: $0) }.first
    }

    /// Why the advertisement's Apple proximity-pairing message is refused, when it has one that
    /// is (``ProximityPairing/Malformation``); `nil` when it has none or a decodable one.
    public var proximityPairingMalformation: ProximityPairing.Malformation? {
        for data in manufacturerData where data.companyIdentifier == ProximityPairing.appleCompanyIdentifier {
            // The checks alone, without decoding: this runs for every advertisement.
            do throws(ProximityPairing.DecodingError) {
                _ = try ProximityPairing.message(in: data.payload)
            } catch {
                if case .malformed(let malformation) = error { return malformation }
            }
        }
        return nil
    }
}
