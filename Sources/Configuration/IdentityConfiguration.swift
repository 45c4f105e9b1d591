/// The `identity:` section (identity.md, Following a rotation without keys; household.md,
/// Found again after a night).
public struct IdentityConfiguration: Hashable, Sendable {
    /// What is done with an address that could be an accessory found again after being away.
    public enum Reattach: String, Hashable, Sendable, CaseIterable {
        /// Re-attached by itself when the rules single out one accessory; else offered.
        case auto
        /// Only offered (`bridge/lookalikes`), for `accessory/reattach`.
        case ask
        /// Neither: no look-alikes are looked for (`accessory/reattach` still works).
        case off
    }

    /// Follow address rotations of accessories without an IRK.
    public var follow: Bool
    public var reattach: Reattach
    /// How long a look-alike is remembered after it was last heard, and how long another
    /// look-alike of the same model and colour holds back an automatic re-attachment (seconds).
    public var lookalikeWindowSeconds: Int

    public init(follow: Bool = true, reattach: Reattach = .auto, lookalikeWindowSeconds: Int = 600) {
        self.follow = follow
        self.reattach = reattach
        self.lookalikeWindowSeconds = lookalikeWindowSeconds
    }
}
