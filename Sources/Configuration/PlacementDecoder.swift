/// How a product's placement is read from its advertisements (`placement_decoder`).
public enum PlacementDecoder: Hashable, Sendable {
    /// A generic byte/mask rule: the accessory is worn when `(byte & mask) == wornWhen`.
    public struct Rule: Hashable, Sendable {
        /// Which advertisement bytes the rule reads.
        public enum Source: String, CaseIterable, Hashable, Sendable {
            /// The manufacturer data after the company identifier.
            case manufacturer
            /// The service data of the descriptor's service UUID.
            case service
        }

        public var source: Source
        /// The byte's index in the source bytes.
        public var offset: Int
        public var mask: UInt8
        public var wornWhen: UInt8

        /// Creates a rule.
        public init(source: Source, offset: Int, mask: UInt8, wornWhen: UInt8) {
            self.source = source
            self.offset = offset
            self.mask = mask
            self.wornWhen = wornWhen
        }
    }

    /// Apple proximity-pairing advertisements (manufacturer data `4c00 07 ...`).
    case appleProximity
    /// Placement comes only from telemetry that states it (or a wear sensor).
    case none
    case rule(Rule)

    /// The configuration spelling, for `bridge/info`.
    public var name: String {
        switch self {
        case .appleProximity: "apple_proximity"
        case .none: "none"
        case .rule: "rule"
        }
    }
}
