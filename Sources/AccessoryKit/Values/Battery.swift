/// Battery levels in percent, as reported or decoded, with the charging flags that go with
/// them; any part may be unknown.
///
/// A single-battery accessory (AirPods Max, Beats headphones, Beats Flex/X, Powerbeats 3/4)
/// has only ``main``; earbuds have ``left``, ``right`` and ``chargingCase``. A charging flag is
/// `nil` when nothing said it (an advertisement says it only with its level), never "not
/// charging".
public struct Battery: Hashable, Sendable {
    /// A single battery (headphones).
    public var main: Int?
    /// The left bud.
    public var left: Int?
    /// The right bud.
    public var right: Int?
    /// The charging case.
    public var chargingCase: Int?
    /// Whether the single battery is charging (`charging` in the contract).
    public var charging: Bool?
    /// Whether the left bud, the right bud, the case is charging.
    public var leftCharging: Bool?
    public var rightCharging: Bool?
    public var caseCharging: Bool?

    /// Creates a battery value.
    public init(
        main: Int? = nil, left: Int? = nil, right: Int? = nil, chargingCase: Int? = nil,
        charging: Bool? = nil, leftCharging: Bool? = nil, rightCharging: Bool? = nil, caseCharging: Bool? = nil
    ) {
        self.main = main
        self.left = left
        self.right = right
        self.chargingCase = chargingCase
        self.charging = charging
        self.leftCharging = leftCharging
        self.rightCharging = rightCharging
        self.caseCharging = caseCharging
    }

    /// Whether any level is known (a battery without one is no battery news).
    public var hasLevel: Bool { main != nil || left != nil || right != nil || chargingCase != nil }

    /// This reading with the case level (and its charging flag) of `previous` when this one
    /// lacks it (household.md): only the frames of the bud that is in the case carry the case's
    /// level, so a frame of the other bud must not erase it. A single battery has no case to keep.
    public func keepingCase(previous: Battery?) -> Battery {
        guard chargingCase == nil, main == nil, let previous, let level = previous.chargingCase else { return self }
        var kept = self
        kept.chargingCase = level
        kept.caseCharging = previous.caseCharging
        return kept
    }

    /// This battery without the case level and its charging flag: what is left of it once the
    /// accessory is no longer heard (the case may have been charged or emptied since).
    public var withoutCase: Battery? {
        var rest = self
        rest.chargingCase = nil
        rest.caseCharging = nil
        return rest.hasLevel ? rest : nil
    }
}
