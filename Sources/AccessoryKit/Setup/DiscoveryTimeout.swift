/// How long the picker discovers before it dismisses with `discoveryTimeout`.
public enum DiscoveryTimeout: Hashable, Sendable {
    /// 30 s.
    case `default`
    /// 60 s.
    case short
    /// 120 s.
    case medium
    /// 300 s.
    case long
    /// Until `finishPickerDiscovery`, a selection or a dismiss.
    case unbounded
    /// A number of seconds.
    case seconds(Int)

    /// The duration in milliseconds, nil when unbounded.
    public var milliseconds: Int64? {
        switch self {
        case .default: 30_000
        case .short: 60_000
        case .medium: 120_000
        case .long: 300_000
        case .unbounded: nil
        case .seconds(let seconds): Int64(seconds) * 1000
        }
    }

    /// Parses the request's names; seconds are passed as `.seconds`.
    public init?(name: String) {
        switch name {
        case "default": self = .default
        case "short": self = .short
        case "medium": self = .medium
        case "long": self = .long
        case "unbounded": self = .unbounded
        default: return nil
        }
    }
}
