import AccessoryKit

/// What the encrypted 16 bytes of an Apple proximity-pairing message say once decrypted with the
/// accessory's encryption key: battery levels in 1 % steps and charging flags, per bud and for
/// the case. ``AppleProximityPairing/decrypted(with:)`` builds it; the layout, its sources and
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

    /// Creates a status from levels in whole percent and charging flags.
    public init(
        leftBattery: Int? = nil, rightBattery: Int? = nil, caseBattery: Int? = nil,
        leftCharging: Bool? = nil, rightCharging: Bool? = nil, caseCharging: Bool? = nil
    ) {
        self.leftBattery = leftBattery
        self.rightBattery = rightBattery
        self.caseBattery = caseBattery
        self.leftCharging = leftCharging
        self.rightCharging = rightCharging
        self.caseCharging = caseCharging
    }

    /// The levels as the engine's battery, as ``AppleProximityPairing/battery`` builds it from the
    /// clear 10 % levels (charging flags stay here: the contract does not publish them); `nil`
    /// when no level is known.
    public var battery: Battery? {
        guard leftBattery != nil || rightBattery != nil || caseBattery != nil else { return nil }
        return Battery(left: leftBattery, right: rightBattery, chargingCase: caseBattery)
    }
}
