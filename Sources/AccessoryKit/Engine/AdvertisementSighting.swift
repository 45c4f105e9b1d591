/// One advertisement heard by one gateway, normalised by the Telemetry module's parsers
/// (`Advertisement.sighting(identity:decoder:hardware:)` builds it; AccessoryKit depends on
/// no other module).
public struct AdvertisementSighting: Hashable, Sendable {
    /// What the product's placement decoder (Telemetry's `PlacementDecoder`: Apple proximity
    /// pairing or a byte rule) read from the advertisement.
    public struct Decoded: Hashable, Sendable {
        /// A wear-sensor reading, mapped by hardware type.
        public var worn: Bool?
        /// A direct placement, when the advertisement carries one.
        public var placement: AccessoryControlDevice.Placement?
        /// Battery levels.
        public var battery: Battery?
        /// The model's marketing name, when the advertisement names a known model.
        public var model: String?
        /// Whether the model has a wear sensor: `false` for a known model without one (its
        /// advertisements never say worn), `nil` when unknown.
        public var wearSensor: Bool?

        /// Creates a decoded reading.
        public init(
            worn: Bool? = nil, placement: AccessoryControlDevice.Placement? = nil, battery: Battery? = nil, model: String? = nil,
            wearSensor: Bool? = nil
        ) {
            self.wearSensor = wearSensor
            self.worn = worn
            self.placement = placement
            self.battery = battery
            self.model = model
        }
    }

    /// The gateway's configured name.
    public var gateway: String
    /// The accessory the sighting counts for (its id): the advertiser's address, or the
    /// identity it was attributed to (``attribution``). Where it was heard is ``heardFrom``.
    public var accessoryID: BluetoothAddress
    /// The address the advertisement really came from.
    public var heardFrom: BluetoothAddress
    /// How ``accessoryID`` was found from ``heardFrom``.
    public var attribution: IdentityAttribution
    /// Received signal strength in dBm.
    public var rssi: Int
    /// Whether the gateway measured ``rssi``. A sighting without one (a decoded-only message)
    /// carries the floor value so that availability and descriptors still work, but it says
    /// nothing about distance, so it does not count for the room.
    public var rssiMeasured: Bool
    /// The advertised local name.
    public var name: String?
    /// Manufacturer-specific data.
    public var manufacturerData: ManufacturerData?
    /// Service data keyed by service UUID.
    public var serviceData: [BluetoothUUID: [UInt8]]
    /// Advertised service UUIDs.
    public var serviceUUIDs: [BluetoothUUID]
    /// The decoder's reading, if the product has a decoder and it matched.
    public var decoded: Decoded?
    /// The model and colour an Apple proximity-pairing advertisement names (what tells
    /// look-alikes apart).
    public var profile: ProximityProfile?
    /// The byte order in which the accessory's IRK, not matched before, resolved ``heardFrom``.
    public var irkOrder: IRKOrder?

    /// Creates a sighting.
    public init(
        gateway: String, accessoryID: BluetoothAddress, rssi: Int, name: String? = nil,
        manufacturerData: ManufacturerData? = nil, serviceData: [BluetoothUUID: [UInt8]] = [:],
        serviceUUIDs: [BluetoothUUID] = [], decoded: Decoded? = nil, heardFrom: BluetoothAddress? = nil,
        attribution: IdentityAttribution = .address, rssiMeasured: Bool = true
    ) {
        self.gateway = gateway
        self.accessoryID = accessoryID
        self.heardFrom = heardFrom ?? accessoryID
        self.attribution = attribution
        self.rssi = rssi
        self.rssiMeasured = rssiMeasured
        self.name = name
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
        self.serviceUUIDs = serviceUUIDs
        self.decoded = decoded
    }
}
