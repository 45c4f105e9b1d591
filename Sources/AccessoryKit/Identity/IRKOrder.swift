/// Which byte order of a given IRK resolves the accessory's addresses (household.md, "Keys
/// that users can actually get"): tools disagree on the order of the same key, and a key in
/// the other order silently never resolves.
public enum IRKOrder: String, Hashable, Sendable, CaseIterable {
    /// The bytes as given resolve it.
    case asGiven = "as_given"
    /// The bytes reversed resolve it.
    case reversed
    /// Not found yet: both orders are tried, and the first match from an address advertising
    /// the accessory's model decides.
    case notYet = "not_yet"

    /// The key bytes to resolve with in this order (both while not found yet).
    public func candidates(_ bytes: [UInt8]) -> [(order: IRKOrder, bytes: [UInt8])] {
        switch self {
        case .asGiven: [(.asGiven, bytes)]
        case .reversed: [(.reversed, bytes.reversed())]
        case .notYet: [(.asGiven, bytes), (.reversed, bytes.reversed())]
        }
    }
}
