/// Limits applied to every gateway message.
public enum TelemetryLimits {
    /// Larger payloads are rejected before any parsing (64 KiB).
    public static let maximumPayloadSize = 64 * 1024
    /// Plausible received or transmitted power in dBm; anything else is a broken gateway.
    public static let rssiRange: ClosedRange<Int> = -127...20
    /// Deepest JSON nesting accepted.
    public static let maximumJSONDepth = 32
    /// Largest raw advertisement accepted (extended advertising data may be up to 1650 bytes).
    public static let maximumAdvertisementSize = 1650
}
