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

        /// The API names, in a stable order.
        public var names: [String] {
            var names: [String] = []
            if contains(.audioSwitching) { names.append("audioSwitching") }
            if contains(.placement) { names.append("placement") }
            return names
        }

        /// The capability with this API name.
        public init?(name: String) {
            switch name {
            case "audioSwitching": self = .audioSwitching
            case "placement": self = .placement
            default: return nil
            }
        }

        public var description: String { "[" + names.joined(separator: ",") + "]" }
    }
}
