/// Everything the accessory state object (`accessory/<ID>`) shows.
public struct AccessoryStatus: Hashable, Sendable {
    public var accessory: Accessory
    public var registration: Registration?
    /// The last wear reading (raw, before debounce).
    public var worn: Bool?
    /// All connected sources, in order (the configuration holds the first two).
    public var sources: [BluetoothAddress]
    /// Sources whose audio goes to this accessory now, sorted.
    public var routes: [BluetoothAddress]
    public var available: Bool
    public var rssi: Int?
    public var gateway: String?
    public var battery: Battery?
    public var lastSeen: Timestamp?
    public var lastError: AccessoryControlDevice.Error?

    /// Creates a status (the engine builds these; the initializer is for serializer tests).
    public init(
        accessory: Accessory, registration: Registration? = nil, worn: Bool? = nil, sources: [BluetoothAddress] = [],
        routes: [BluetoothAddress] = [], available: Bool = false, rssi: Int? = nil, gateway: String? = nil,
        battery: Battery? = nil, lastSeen: Timestamp? = nil, lastError: AccessoryControlDevice.Error? = nil
    ) {
        self.accessory = accessory
        self.registration = registration
        self.worn = worn
        self.sources = sources
        self.routes = routes
        self.available = available
        self.rssi = rssi
        self.gateway = gateway
        self.battery = battery
        self.lastSeen = lastSeen
        self.lastError = lastError
    }

    /// `active`, `invalidated` or `none`.
    public var registrationState: String { registration?.stateName ?? "none" }
    /// The committed placement.
    public var placement: AccessoryControlDevice.Placement? { registration?.configuration.devicePlacement }
}
