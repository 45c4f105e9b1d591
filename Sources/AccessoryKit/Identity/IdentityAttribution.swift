/// How the last sighting of an accessory was attributed to it (`"identity"` in its state).
public enum IdentityAttribution: String, Hashable, Sendable, CaseIterable {
    /// Heard from its own id.
    case address
    /// A resolvable private address that its IRK resolves.
    case irk
    /// A rotation followed without a key: same model and colour, consistent battery, same
    /// gateways, the old address silent (identity.md, Following a rotation without keys).
    case followed
}
