/// The system's part: which accessory gets a source device's audio.
public enum SwitchingPolicy {
    /// An accessory that could get a source's audio, with what the tie-break needs.
    public struct Contender: Hashable, Sendable {
        public var accessory: BluetoothAddress
        /// The source is this accessory's primary (not secondary) source.
        public var isPrimary: Bool
        /// When the accessory was last put on (or became available, without `placement`).
        public var wornSince: Timestamp

        public init(accessory: BluetoothAddress, isPrimary: Bool, wornSince: Timestamp) {
            self.accessory = accessory
            self.isPrimary = isPrimary
            self.wornSince = wornSince
        }
    }

    /// Whether an accessory may get a source's audio at all: registered with
    /// `audioSwitching`, not invalidated, available, has the source as primary or
    /// secondary, and worn (without `placement` it counts as worn while available).
    /// - Returns: nil when not eligible, else whether the source is its primary.
    public static func eligibility(of registration: Registration?, available: Bool, for source: BluetoothAddress) -> Bool? {
        guard let registration, !registration.isInvalidated, available else { return nil }
        let configuration = registration.configuration
        guard configuration.deviceCapabilities.contains(.audioSwitching) else { return nil }
        if configuration.deviceCapabilities.contains(.placement) {
            guard configuration.devicePlacement?.isWorn == true else { return nil }
        }
        if configuration.primaryAudioSourceDeviceIdentifier == source { return true }
        if configuration.secondaryAudioSourceDeviceIdentifier == source { return false }
        return nil
    }

    /// The winner among eligible accessories: primary beats secondary, then the most
    /// recently put on, then the lowest id. Nil means `fallback`.
    public static func choose(_ contenders: some Sequence<Contender>) -> BluetoothAddress? {
        var best: Contender?
        for contender in contenders {
            guard let current = best else {
                best = contender
                continue
            }
            if beats(contender, current) { best = contender }
        }
        return best?.accessory
    }

    /// Whether `a` wins over `b`.
    public static func beats(_ a: Contender, _ b: Contender) -> Bool {
        if a.isPrimary != b.isPrimary { return a.isPrimary }
        if a.wornSince != b.wornSince { return a.wornSince > b.wornSince }
        return a.accessory < b.accessory
    }
}
