/// What an accessory's own firmware reports about itself (native telemetry, or the
/// `<base>/accessory/<ID>/set` topic). Every field is optional; `nil` means "not reported".
public struct AccessoryReport: Hashable, Sendable {
    /// The accessory, from the topic.
    public var accessory: BluetoothAddress
    /// The gateway that relayed it, from the topic (`nil` for the `set` topic).
    public var gateway: String?
    /// A placement reported directly (`{"placement":"inEar"}`).
    public var placement: Placement?
    /// A wear sensor reading (`{"worn":true}`).
    public var worn: Bool?
    /// The hardware kind sent with `worn`, which decides the placement it means.
    public var hardware: AccessoryHardware?
    /// The complete list of connected sources in order (primary first).
    public var sources: [BluetoothAddress]?
    /// A source that just connected.
    public var sourceConnected: BluetoothAddress?
    /// A source that just disconnected.
    public var sourceDisconnected: BluetoothAddress?
    /// A source to move to the front of the list.
    public var preferredSource: BluetoothAddress?
    /// Battery state.
    public var battery: BatteryStatus?
    /// Signal strength the relaying gateway measured, dBm.
    public var rssi: Int?
    /// When aabridge received the message, milliseconds since the Unix epoch.
    public var receivedAt: Int64

    /// Creates an empty report for an accessory.
    public init(accessory: BluetoothAddress, gateway: String?, receivedAt: Int64) {
        self.accessory = accessory
        self.gateway = gateway
        self.receivedAt = receivedAt
    }

    /// The placement this report means: a direct placement wins; else a wear reading mapped by
    /// the reported hardware, or by `productHardware` (the configured product) when none was sent.
    /// - Returns: `nil` when the report says nothing about placement, or says `worn: true` without
    ///   any hardware to interpret it.
    public func effectivePlacement(productHardware: AccessoryHardware? = nil) -> Placement? {
        if let placement { return placement }
        guard let worn else { return nil }
        if !worn { return .offHead }
        guard let hardware = hardware ?? productHardware else { return nil }
        return Placement(worn: true, hardware: hardware)
    }
}
