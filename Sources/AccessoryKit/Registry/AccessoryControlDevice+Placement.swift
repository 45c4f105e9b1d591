extension AccessoryControlDevice {
    /// Where the accessory is on its user (AudioAccessoryKit's four cases).
    public enum Placement: String, CaseIterable, Hashable, Sendable {
        case inEar
        case onHead
        case overTheEar
        case offHead

        /// Whether the accessory is being worn; only worn accessories get audio.
        public var isWorn: Bool { self != .offHead }
    }
}
