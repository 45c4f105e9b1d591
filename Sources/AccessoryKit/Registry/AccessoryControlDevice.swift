/// The AudioAccessoryKit handle: a registered accessory and its current configuration,
/// as `AccessoryControlDevice.current(for:)` returns it.
public struct AccessoryControlDevice: Hashable, Sendable {
    /// The role a caller plays, as in Apple's split between the container app and its extension.
    public enum Role: String, Hashable, Sendable {
        /// The management API (`bridge/request/...`): pairing and `register`.
        case container
        /// The telemetry path (gateway telemetry, `accessory/<ID>/set`): `update`.
        case `extension`
    }

    /// The operation an error belongs to, as published on `accessory/<ID>/error`.
    public enum Operation: String, Hashable, Sendable {
        case register
        case update
        case current
        /// The head-tracking session (iOS 27): `accessory/head_tracking` and the sensor frames.
        case headTracking
    }

    /// The paired accessory.
    public var accessory: Accessory
    /// Its configuration as the system knows it.
    public var configuration: Configuration

    /// Creates a handle.
    public init(accessory: Accessory, configuration: Configuration) {
        self.accessory = accessory
        self.configuration = configuration
    }
}
