/// How the last sighting of an accessory was attributed to it (`"identity"` in its state).
public enum IdentityAttribution: String, Hashable, Sendable, CaseIterable {
    /// Heard from its own id.
    case address
    /// A resolvable private address that its IRK resolves.
    case irk
    /// A rotation followed without a key: same model and colour, consistent battery, same
    /// gateways, the old address silent (identity.md, Following a rotation without keys).
    case followed
    /// A look-alike re-attached to an accessory that had been away (household.md, "Found again
    /// after a night"), by the rules or by `accessory/reattach`.
    case reattached
}
