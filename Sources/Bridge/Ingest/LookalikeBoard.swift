/// The look-alikes (``LookalikeTracker``), held by reference: ``Ingest``'s attribution lists
/// and re-attaches them, ``LookalikesComponent`` publishes and expires them. Both run on the
/// loop's one task, so the board needs no lock.
final class LookalikeBoard {
    var tracker: LookalikeTracker

    init(_ tracker: LookalikeTracker) { self.tracker = tracker }
}
