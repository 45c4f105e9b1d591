import AccessoryKit

/// The look-alikes (``LookalikeTracker``), held by reference: ``Ingest``'s attribution lists
/// and re-attaches them, ``LookalikesComponent`` publishes and expires them. Both run on the
/// loop's one task, so the board needs no lock.
final class LookalikeBoard {
    var tracker: LookalikeTracker
    /// `lookalikeHeard` events: at most ``eventsPerSecond`` in any second in all, however many
    /// fresh addresses a gateway relays (a neighbour's radio can invent thousands a second);
    /// beyond it they are counted, not published (household.md).
    static let eventsPerSecond = 4
    private var eventSecond: Int64 = -1
    private var eventsThisSecond = 0
    /// `lookalikeHeard` events not published for the bound (`aabridge_lookalike_events_suppressed_total`).
    private(set) var eventsSuppressed = 0

    init(_ tracker: LookalikeTracker) { self.tracker = tracker }

    /// Whether a new look-alike's `lookalikeHeard` event goes out now (else it is counted).
    func admitsEvent(at now: Timestamp) -> Bool {
        let second = now.milliseconds / 1000
        if second != eventSecond {
            eventSecond = second
            eventsThisSecond = 0
        }
        guard eventsThisSecond < Self.eventsPerSecond else {
            eventsSuppressed += 1
            return false
        }
        eventsThisSecond += 1
        return true
    }
}
