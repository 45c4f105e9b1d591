/// Why the bridge, as the container role, registered an `auto_register` accessory again by itself.
public enum ReevaluationReason: Hashable, Sendable {
    /// The registration was invalidated; it is registered again with its last configuration
    /// (identity.md, Invalidation).
    case invalidated
    /// Its advertisements name a model without a wear sensor (Beats Solo3, Studio Pro, ...):
    /// registered with `placement` it would never be routed, so it is registered again without
    /// it, and then counts as worn while available (domain.md, switching decisions).
    case noWearSensor(model: String?)
}
