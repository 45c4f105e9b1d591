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
    /// An automatic re-attachment did not hold (a rival of the same profile was heard, or the
    /// accessory itself elsewhere): the accessory no longer advertises from `address`, is away
    /// again, and the event `reattachUndone` goes out. Nothing happens when it was re-attached
    /// elsewhere since, or by a person.
    case undoReattach(BluetoothAddress, from: BluetoothAddress)
    /// Stored state of `ids` changed outside this engine (another bridge instance sharing the
    /// database, or a takeover): take it from `stored`. Only the accessories in `ids` are
    /// touched, whatever else `stored` holds; `stored.migrationComplete` is ignored (the
    /// migration is this engine's own start, not an accessory's state). Emits no storage write.
    ///
    /// `routes` (source -> accessory) are the routes the previous owner of these accessories
    /// published (a takeover): taken as they are, each routed accessory counting as just heard,
    /// so that its next advertisement repeats no decision the previous owner already made.
    case reload(RestoredState, ids: [BluetoothAddress], routes: [BluetoothAddress: BluetoothAddress] = [:])
}
