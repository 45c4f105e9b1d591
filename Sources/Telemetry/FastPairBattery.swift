import AccessoryKit

/// The battery notification of a Fast Pair provider's account data: levels and charging for
/// the left bud, the right bud and the case, in that order on the air.
///
/// Layout ("Battery Notification",
/// https://developers.google.com/nearby/fast-pair/specifications/extensions/batterynotification):
/// a field of type 0b0011 (show the UI indication) or 0b0100 (hide it) and length 3, then one
/// byte per battery, `0bSVVVVVVV`: S = 1 while charging, V the level in percent (0...100), or
/// 0b1111111 when unknown. ``FastPairAdvertisement`` reads the field around it.
public struct FastPairBattery: Hashable, Sendable {
    /// Battery levels in whole percent, 0...100; `nil` when the provider reports it unknown
    /// (level bits 0x7F).
    public var leftBattery: Int?
    public var rightBattery: Int?
    public var caseBattery: Int?
    /// Charging flags, the S bit of each value. Kept even when the level is unknown: the
    /// specification writes "unknown" as 0bS1111111, so the status bit still says something.
    public var leftCharging: Bool
    public var rightCharging: Bool
    public var caseCharging: Bool
    /// Whether the provider asks seekers to show its battery indication (type 0b0011), e.g.
    /// while the case is open, rather than hide it (0b0100, e.g. buds out of the case).
    public var showsIndication: Bool

    /// Creates a battery notification from levels in whole percent and charging flags.
    public init(
        leftBattery: Int? = nil, rightBattery: Int? = nil, caseBattery: Int? = nil,
        leftCharging: Bool = false, rightCharging: Bool = false, caseCharging: Bool = false,
        showsIndication: Bool = true
    ) {
        self.leftBattery = leftBattery
        self.rightBattery = rightBattery
        self.caseBattery = caseBattery
        self.leftCharging = leftCharging
        self.rightCharging = rightCharging
        self.caseCharging = caseCharging
        self.showsIndication = showsIndication
    }

    /// Reads the three battery values that follow the field's length and type byte.
    /// - Throws: ``FastPairAdvertisement/UnknownLayout/batteryLength(_:)`` unless there are 3,
    ///   ``FastPairAdvertisement/UnknownLayout/batteryValue(_:)`` for a level of 101...126.
    init(values: ArraySlice<UInt8>, showsIndication: Bool) throws(FastPairAdvertisement.UnknownLayout) {
        guard values.count == 3 else { throw .batteryLength(values.count) }
        let bytes = (values[values.startIndex], values[values.startIndex + 1], values[values.startIndex + 2])
        self.init(
            leftBattery: try Self.level(bytes.0), rightBattery: try Self.level(bytes.1), caseBattery: try Self.level(bytes.2),
            leftCharging: bytes.0 & 0x80 != 0, rightCharging: bytes.1 & 0x80 != 0, caseCharging: bytes.2 & 0x80 != 0,
            showsIndication: showsIndication)
    }

    /// The level bits of one value: 0...100 percent, 0x7F unknown; anything else is not the
    /// specification's, so the whole payload is refused rather than a level guessed.
    private static func level(_ value: UInt8) throws(FastPairAdvertisement.UnknownLayout) -> Int? {
        let level = value & 0x7F
        if level == 0x7F { return nil }
        guard level <= 100 else { throw .batteryValue(value) }
        return Int(level)
    }

    /// The levels as the engine's battery (charging flags stay here: the contract does not
    /// publish them, as with ``ProximityPairing/battery``); `nil` when no level is known,
    /// so that a notification of three unknowns does not erase the levels last published.
    public var battery: Battery? {
        guard leftBattery != nil || rightBattery != nil || caseBattery != nil else { return nil }
        return Battery(left: leftBattery, right: rightBattery, chargingCase: caseBattery)
    }
}
