/// The `identity:` section (identity.md, Following a rotation without keys).
public struct IdentityConfiguration: Hashable, Sendable {
    /// Follow address rotations of accessories without an IRK.
    public var follow: Bool

    public init(follow: Bool = true) {
        self.follow = follow
    }
}
