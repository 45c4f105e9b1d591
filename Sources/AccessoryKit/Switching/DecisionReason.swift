/// Why a route changed, with the exact strings of mqtt-api.md.
public enum DecisionReason: Hashable, Sendable, CustomStringConvertible {
    case placement(AccessoryControlDevice.Placement)
    case sourceConnected
    case sourceDisconnected
    case unavailable
    case invalidated
    case removed
    case preferredSource
    case startup

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
        case .startup: "startup"
        }
    }
}
