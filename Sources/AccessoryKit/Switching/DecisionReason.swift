/// Why a route changed, with the exact strings of mqtt-api.md: the change that caused it.
/// A route to an accessory names why that accessory got the source; a release names the
/// change that took it away (which may be another accessory's, e.g. one put on).
public enum DecisionReason: Hashable, Sendable, CustomStringConvertible {
    /// The accessory's committed placement changed.
    case placement(AccessoryControlDevice.Placement)
    /// A source connected to the accessory, or the accessory was heard again with its sources.
    case sourceConnected
    case sourceDisconnected
    /// No gateway heard the accessory within the availability timeout.
    case unavailable
    case invalidated
    case removed
    /// The accessory was told to prefer a source (`preferred_source`, or a `sources` order).
    case preferredSource
    /// The container registered the accessory (with its placement and sources).
    case registered
    /// The accessory that had the source released it (taken off, unavailable, invalidated,
    /// removed, source moved), and this one was next in line.
    case otherAccessoryReleased
    case startup
    /// The accessory came back with no connected source and nobody said which it plays from:
    /// its home sources became its connected sources (household.md, "Home sources").
    case homeSource

    /// `placement:inEar`, `source_connected`, ...
    public var description: String {
        switch self {
        case .placement(let placement): "placement:\(placement.rawValue)"
        case .sourceConnected: "source_connected"
        case .sourceDisconnected: "source_disconnected"
        case .unavailable: "unavailable"
        case .invalidated: "invalidated"
        case .removed: "removed"
        case .preferredSource: "preferred_source"
        case .registered: "registered"
        case .otherAccessoryReleased: "other_accessory_released"
        case .startup: "startup"
        case .homeSource: "home_source"
        }
    }
}
