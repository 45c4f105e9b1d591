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
    /// The address it was last heard from (published as `address`; the accessory's own is its
    /// id); `nil` before any sighting.
    public var heardFrom: BluetoothAddress?
    /// How the last sighting was attributed to it.
    public var identity: IdentityAttribution
    /// Which keys it has (never the keys).
    public var keys: KeyPresence
    /// The decoded model's marketing name.
    public var model: String?
    /// The gateway that hears it best (identity.md, Rooms).
    public var room: String?
    /// The sources the user named for it, in order (restored when it comes back).
    public var homeSources: [BluetoothAddress]
    /// The public address phones and desktops know it by (`accessory/alias`).
    public var alias: BluetoothAddress?
    /// The head-tracking session: nil without one (not registered with `headTracking`, or
    /// invalidated).
    public var headTracking: HeadTrackingState?

    /// Creates a status (the engine builds these; the initializer is for serializer tests).
    public init(
        accessory: Accessory, registration: Registration? = nil, worn: Bool? = nil, sources: [BluetoothAddress] = [],
        routes: [BluetoothAddress] = [], available: Bool = false, rssi: Int? = nil, gateway: String? = nil,
        battery: Battery? = nil, lastSeen: Timestamp? = nil, lastError: AccessoryControlDevice.Error? = nil,
        heardFrom: BluetoothAddress? = nil, identity: IdentityAttribution = .address,
        keys: KeyPresence = KeyPresence(irk: false, encryptionKey: false), model: String? = nil,
        room: String? = nil, homeSources: [BluetoothAddress] = [], alias: BluetoothAddress? = nil,
        headTracking: HeadTrackingState? = nil
    ) {
        self.headTracking = headTracking
        self.room = room
        self.homeSources = homeSources
        self.alias = alias
        self.heardFrom = heardFrom
        self.identity = identity
        self.keys = keys
        self.model = model
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
