/// A durable AudioAccessoryKit registration: the configuration and whether the
/// system has invalidated it.
public struct Registration: Hashable, Sendable {
    /// The current configuration.
    public var configuration: AccessoryControlDevice.Configuration
    /// Set by invalidation (or removal of the accessory); cleared by registering again.
    public var isInvalidated: Bool

    /// Creates a registration.
    public init(configuration: AccessoryControlDevice.Configuration, isInvalidated: Bool = false) {
        self.configuration = configuration
        self.isInvalidated = isInvalidated
    }

    /// `active` or `invalidated`, as in the accessory state object.
    public var stateName: String { isInvalidated ? "invalidated" : "active" }
}
