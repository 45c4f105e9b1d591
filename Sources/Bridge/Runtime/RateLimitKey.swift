/// What a rate-limited log line is about. Typed, so a gateway's name can never collide with
/// one of the bridge's own kinds of line.
enum RateLimitKey: Hashable, Sendable {
    /// Telemetry rejected from this gateway (its name).
    case gateway(String)
    /// Messages dropped because the backlog was full.
    case backlogFull
    /// Telemetry shed because the broker owes too many acknowledgements.
    case brokerBehind
    /// Fast Pair service data ignored for an unknown layout (any accessory).
    case fastPairIgnored
    /// Deferred telemetry writes that could not be committed yet.
    case deferredStorage
}
