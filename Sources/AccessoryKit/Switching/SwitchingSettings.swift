/// The `switching:` configuration section.
public struct SwitchingSettings: Hashable, Sendable {
    /// How long a raw placement must stay unchanged before it is committed; 0 = immediately.
    public var placementDebounceMilliseconds: Int64
    /// An accessory is available while some gateway heard it within this many seconds.
    public var availabilityTimeoutSeconds: Int64
    /// The `immediate` discovery range threshold in dBm.
    public var immediateRSSI: Int

    /// Creates settings; the defaults are the documented ones.
    public init(placementDebounceMilliseconds: Int64 = 500, availabilityTimeoutSeconds: Int64 = 120, immediateRSSI: Int = -50) {
        self.placementDebounceMilliseconds = placementDebounceMilliseconds
        self.availabilityTimeoutSeconds = availabilityTimeoutSeconds
        self.immediateRSSI = immediateRSSI
    }
}
