/// Everything that can happen to the engine; each comes with the current time.
public enum EngineInput: Hashable, Sendable {
    /// Start: activate the session, migrate, publish startup routes.
    case activate
    /// Clean shutdown: invalidate the session.
    case invalidate
    /// A request in a role (management topics are `.container`; `/set` is `.extension`).
    case request(Request, role: AccessoryControlDevice.Role)
    /// Native telemetry or an `accessory/<ID>/set` payload (extension role).
    case report(AccessoryReport)
    /// An advertisement heard by a gateway.
    case sighting(AdvertisementSighting)
    /// Time passed: debounce commits, picker timeout, availability expiry.
    case tick
}
