/// What an accessory says about itself: native telemetry relayed by a gateway, or
/// an `accessory/<ID>/set` payload. Both are the extension role's `update(_:)`.
public struct AccessoryReport: Hashable, Sendable {
    /// One statement in the report, applied in order.
    public enum Change: Hashable, Sendable {
        /// A direct placement.
        case placement(AccessoryControlDevice.Placement)
        /// A wear-sensor reading; the hardware type overrides the product's when given.
        case worn(Bool, hardware: HardwareType?)
        /// The full ordered list of connected source devices.
        case sources([BluetoothAddress])
        /// A source device connected (appended).
        case sourceConnected(BluetoothAddress)
        /// A source device disconnected (removed, the rest shift up).
        case sourceDisconnected(BluetoothAddress)
        /// A source device moved to the front.
        case preferredSource(BluetoothAddress)
        /// Signal strength in dBm.
        case rssi(Int)
        /// Battery levels.
        case battery(Battery)
        /// One IMU frame for the spatial audio renderer (`Session.sendDataToAudioExtension`),
        /// as the relay sent it: its size is the engine's to judge (1-70 bytes).
        case sensorFrame([UInt8])
        /// Content the bridge could not parse (an unknown placement, a malformed
        /// address): answered with `invalidRequest` naming the field; nothing changes.
        case invalid(field: String, message: String)
    }

    /// The accessory the report is about.
    public var accessory: BluetoothAddress
    /// The relaying gateway for native telemetry (the accessory was heard), nil for `/set`.
    public var gateway: String?
    /// The statements, in payload order.
    public var changes: [Change]

    /// Creates a report.
    public init(accessory: BluetoothAddress, gateway: String?, changes: [Change]) {
        self.accessory = accessory
        self.gateway = gateway
        self.changes = changes
    }
}
