/// What re-attaching an accessory needs to know of it when it has been away for hours, kept
/// across restarts (household.md, "Found again after a night"): its proximity profile (model
/// and colour) and the room it was last heard in (where its case sleeps).
public struct AccessoryTrace: Hashable, Sendable {
    public var profile: ProximityProfile?
    /// The gateway that heard it best before it went silent.
    public var room: String?

    public init(profile: ProximityProfile? = nil, room: String? = nil) {
        self.profile = profile
        self.room = room
    }

    public var isEmpty: Bool { profile == nil && room == nil }
}
