/// Battery levels in percent, as reported or decoded; any part may be unknown.
public struct Battery: Hashable, Sendable {
    /// A single battery (headphones).
    public var main: Int?
    /// The left bud.
    public var left: Int?
    /// The right bud.
    public var right: Int?
    /// The charging case.
    public var chargingCase: Int?

    /// Creates a battery value.
    public init(main: Int? = nil, left: Int? = nil, right: Int? = nil, chargingCase: Int? = nil) {
        self.main = main
        self.left = left
        self.right = right
        self.chargingCase = chargingCase
    }
}
