/// Battery levels as fractions 0...1 and charging flags; any part may be unknown (`nil`).
///
/// A headphone has one ``level``; earbuds have ``left``, ``right`` and ``case``.
public struct BatteryStatus: Hashable, Sendable {
    /// The single battery of a headphone.
    public var level: Double?
    /// The left bud.
    public var left: Double?
    /// The right bud.
    public var right: Double?
    /// The charging case.
    public var `case`: Double?
    /// Whether the single battery charges.
    public var charging: Bool?
    /// Whether the left bud charges.
    public var leftCharging: Bool?
    /// Whether the right bud charges.
    public var rightCharging: Bool?
    /// Whether the case charges.
    public var caseCharging: Bool?

    /// Creates a status; every part defaults to unknown.
    public init(
        level: Double? = nil, left: Double? = nil, right: Double? = nil, case: Double? = nil,
        charging: Bool? = nil, leftCharging: Bool? = nil, rightCharging: Bool? = nil, caseCharging: Bool? = nil
    ) {
        self.level = level
        self.left = left
        self.right = right
        self.case = `case`
        self.charging = charging
        self.leftCharging = leftCharging
        self.rightCharging = rightCharging
        self.caseCharging = caseCharging
    }
}
