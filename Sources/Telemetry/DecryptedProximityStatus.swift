import AccessoryKit

/// What the encrypted 16 bytes of an Apple proximity-pairing message say once decrypted with the
/// accessory's encryption key: battery levels in 1 % steps and charging flags, per bud and for
/// the case. ``ProximityPairing/decrypted(with:)`` builds it; the layout, its sources and
/// what is uncertain about it are documented there.
///
/// A level (and its charging flag) is `nil` when the accessory reports it as unknown (level bits
/// 0x7F, seen e.g. for a bud out of range or a case that has just closed), so a `nil` never means
/// "not charging".
public struct DecryptedProximityStatus: Hashable, Sendable {
    /// Battery levels in whole percent, 0...100.
    public var leftBattery: Int?
    public var rightBattery: Int?
    public var caseBattery: Int?
    /// Charging flags; `nil` exactly when the matching level is unknown.
    public var leftCharging: Bool?
    public var rightCharging: Bool?
    public var caseCharging: Bool?
    /// Whether the broadcasting side (plaintext byte 1) is the left one (status bit 0x20): a
    /// single-battery model's one level is that side's.
    public var primaryIsLeft: Bool

    /// Creates a status from levels in whole percent and charging flags.
    public init(
        leftBattery: Int? = nil, rightBattery: Int? = nil, caseBattery: Int? = nil,
        leftCharging: Bool? = nil, rightCharging: Bool? = nil, caseCharging: Bool? = nil, primaryIsLeft: Bool = true
    ) {
        self.primaryIsLeft = primaryIsLeft
        self.leftBattery = leftBattery
        self.rightBattery = rightBattery
        self.caseBattery = caseBattery
        self.leftCharging = leftCharging
        self.rightCharging = rightCharging
        self.caseCharging = caseCharging
    }

    /// The levels as the engine's battery, laid out and flagged as
    /// ``ProximityPairing/battery(_:)`` lays out the clear 10 % levels (a single battery is
    /// the broadcasting side's); `nil` when no level is known.
    public func battery(_ layout: AppleModel.Batteries) -> Battery? {
        let battery: Battery
        switch layout {
        case .single:
            battery = Battery(
                main: primaryIsLeft ? leftBattery : rightBattery, charging: primaryIsLeft ? leftCharging : rightCharging)
        case .pods:
            battery = Battery(
                left: leftBattery, right: rightBattery, chargingCase: caseBattery, leftCharging: leftCharging,
                rightCharging: rightCharging, caseCharging: caseCharging)
        }
        return battery.hasLevel ? battery : nil
    }

    /// The levels laid out as earbuds' (``battery(_:)``).
    public var battery: Battery? { battery(.pods) }

    /// Whether the clear status's in-ear bits hold against these charging flags: a bud that
    /// charges is in its case, so the clear bytes saying it is in an ear are not believed
    /// (identity.md: what the encrypted part says wins where both speak). `nil` when they hold
    /// or the encrypted part says nothing about it; otherwise the corrected reading: worn only
    /// by a bud that is in an ear and not charging.
    public func correctedWorn(leftInEar: Bool, rightInEar: Bool) -> Bool? {
        let left = leftInEar && leftCharging != true
        let right = rightInEar && rightCharging != true
        return (left || right) == (leftInEar || rightInEar) ? nil : left || right
    }
}
