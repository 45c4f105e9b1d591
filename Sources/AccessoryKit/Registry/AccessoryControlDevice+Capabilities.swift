extension AccessoryControlDevice {
    /// What an accessory registers for (an option set, as in AudioAccessoryKit).
    public struct Capabilities: OptionSet, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: UInt8

        public init(rawValue: UInt8) {
            self.rawValue = rawValue
        }

        /// The system may switch audio routes to and from the accessory.
        public static let audioSwitching = Capabilities(rawValue: 1 << 0)
        /// The accessory reports its placement.
        public static let placement = Capabilities(rawValue: 1 << 1)
        /// The accessory tracks the wearer's head for spatial audio (iOS 27): what a
        /// head-tracking session needs.
        public static let headTracking = Capabilities(rawValue: 1 << 2)
        /// The accessory renders spatialized audio (iOS 27).
        public static let audioSpatialization = Capabilities(rawValue: 1 << 3)

        /// Every API name, in the stable order `names` uses (configuration messages list them).
        public static let allNames = ["audioSwitching", "placement", "headTracking", "audioSpatialization"]

        /// The API names, in a stable order.
        public var names: [String] {
            var names: [String] = []
            if contains(.audioSwitching) { names.append("audioSwitching") }
            if contains(.placement) { names.append("placement") }
            if contains(.headTracking) { names.append("headTracking") }
            if contains(.audioSpatialization) { names.append("audioSpatialization") }
            return names
        }

        /// The capability with this API name.
        public init?(name: String) {
            switch name {
            case "audioSwitching": self = .audioSwitching
            case "placement": self = .placement
            case "headTracking": self = .headTracking
            case "audioSpatialization": self = .audioSpatialization
            default: return nil
            }
        }

        public var description: String { "[" + names.joined(separator: ",") + "]" }
    }
}
