/// Which gateway hears one accessory best: its room (identity.md, "Rooms").
///
/// Each gateway's RSSI is smoothed with an exponential moving average, because single
/// advertisements swing by several dB (body shadowing, multipath) and the room should not
/// flicker with them. The room is the gateway with the highest smoothed RSSI among those that
/// heard the accessory within ``windowMilliseconds``; it changes only when another such gateway
/// is better by at least ``hysteresisDecibels`` (two gateways about as close never flap), or
/// when the room itself has not heard it for the window.
///
/// The state is a small array of at most ``capacity`` gateways searched linearly: an accessory
/// is heard by a handful of gateways, and once they are known a sighting updates one entry in
/// place without allocating, which matters on the per-advertisement path.
public struct RoomTracker: Hashable, Sendable {
    /// How much better (smoothed, in dB) another gateway must be to take the room over.
    public static let hysteresisDecibels: Double = 5
    /// How long a gateway's hearing counts (and how long the room lasts without it hearing).
    public static let windowMilliseconds: Int64 = 30_000
    /// The most gateways remembered per accessory; a new one replaces the least recently heard.
    public static let capacity = 16
    /// The weight of a new sample in the moving average. 0.3 follows a real move within about
    /// five advertisements (a second or two) while averaging out single-sample swings.
    public static let smoothing: Double = 0.3

    /// How long, and how many advertisements, a gateway must have heard the accessory without
    /// a lapse for its room to be the one the accessory *kept* (``keptRoom(at:)``): what
    /// re-attaching it after a night trusts. A gateway that heard it only in its last moments,
    /// at a signal it never had before (a forged or relayed frame), is not where it stayed.
    public static let keptMilliseconds: Int64 = 60_000
    public static let keptAdvertisements = 10

    /// One gateway's view of the accessory.
    struct Hearing: Hashable, Sendable {
        var gateway: String
        /// Smoothed RSSI in dBm.
        var rssi: Double
        var lastHeard: Timestamp
        /// Since when, and in how many advertisements, it has heard the accessory without a
        /// lapse of the window.
        var since: Timestamp
        var advertisements = 1
    }

    /// The gateways heard, in the order first heard (an evicted slot is reused in place, so
    /// ``current`` stays valid).
    private(set) var hearings: [Hearing] = []
    /// The index of the room in ``hearings``.
    private var current: Int?

    /// Creates a tracker that has heard nothing.
    public init() {}

    /// The gateway that hears the accessory best, nil when none heard it within the window.
    public var room: String? { current.map { hearings[$0].gateway } }

    /// The room, once its gateway has heard the accessory for ``keptMilliseconds`` and
    /// ``keptAdvertisements`` without a lapse (nil: no room, or one not kept yet).
    public func keptRoom(at now: Timestamp) -> String? {
        guard let current else { return nil }
        let hearing = hearings[current]
        guard now.milliseconds(since: hearing.since) >= Self.keptMilliseconds, hearing.advertisements >= Self.keptAdvertisements
        else { return nil }
        return hearing.gateway
    }

    /// When the room expires unless its gateway hears the accessory again (nil: no room).
    /// Only a change of room can bring it earlier, which lets the engine keep one lower bound.
    public var nextExpiry: Timestamp? {
        current.map { hearings[$0].lastHeard.advanced(byMilliseconds: Self.windowMilliseconds) }
    }

    /// Records that `gateway` heard the accessory at `rssi` dBm (a measured value: callers
    /// leave out sightings that carry none).
    /// - Returns: whether the room changed.
    public mutating func heard(gateway: String, rssi: Int, at now: Timestamp) -> Bool {
        let sample = Double(rssi)
        if let index = hearings.firstIndex(where: { $0.gateway == gateway }) {
            // An average older than the window says nothing about where the accessory is now:
            // the gateway starts over from this sample, as a new one does.
            if now.milliseconds(since: hearings[index].lastHeard) >= Self.windowMilliseconds {
                hearings[index].rssi = sample
                hearings[index].since = now
                hearings[index].advertisements = 1
            } else {
                hearings[index].rssi += Self.smoothing * (sample - hearings[index].rssi)
                hearings[index].advertisements += 1
            }
            hearings[index].lastHeard = now
        } else {
            let hearing = Hearing(gateway: gateway, rssi: sample, lastHeard: now, since: now)
            if hearings.count < Self.capacity {
                hearings.append(hearing)
            } else {
                hearings[leastRecentlyHeard()] = hearing
            }
        }
        return decide(at: now)
    }

    /// Moves the room when its gateway has not heard the accessory for the window: to the best
    /// gateway that did, or to none.
    /// - Returns: whether the room changed.
    public mutating func expire(at now: Timestamp) -> Bool {
        guard let current, !isRecent(hearings[current], at: now) else { return false }
        return decide(at: now)
    }

    /// Applies the rule to the current hearings.
    private mutating func decide(at now: Timestamp) -> Bool {
        var best: Int?
        for index in hearings.indices where index != current && isRecent(hearings[index], at: now) {
            if best.map({ hearings[index].rssi > hearings[$0].rssi }) ?? true { best = index }
        }
        let next: Int?
        if let current, isRecent(hearings[current], at: now) {
            guard let best, hearings[best].rssi - hearings[current].rssi >= Self.hysteresisDecibels else { return false }
            next = best
        } else {
            next = best
        }
        guard next != current else { return false }
        current = next
        return true
    }

    /// The slot a new gateway takes when the array is full. The room itself is never evicted:
    /// only its own silence (the window) or a better gateway moves it.
    private func leastRecentlyHeard() -> Int {
        var oldest = current == 0 ? 1 : 0
        for index in hearings.indices where index != current && hearings[index].lastHeard < hearings[oldest].lastHeard {
            oldest = index
        }
        return oldest
    }

    private func isRecent(_ hearing: Hearing, at now: Timestamp) -> Bool {
        now.milliseconds(since: hearing.lastHeard) < Self.windowMilliseconds
    }
}
