import AccessoryKit
import Telemetry

/// `bridge/lookalikes` (retained) and the options of Home Assistant's "Look-alike" selects:
/// the addresses that could be an away accessory found again (``LookalikeTracker``, listed
/// by ``Ingest``'s attribution on the shared ``LookalikeBoard``).
///
/// Published when the list changed (at most every ``LookalikeTracker/listChangeMilliseconds``)
/// or only what is known of its entries did (at most every
/// ``LookalikeTracker/refreshMilliseconds``); entries silent for the window leave it first.
final class LookalikesComponent: RuntimeComponent {
    private let board: LookalikeBoard
    /// When `bridge/lookalikes` last went out.
    private var publishedAt: Timestamp?

    init(board: LookalikeBoard) { self.board = board }

    func start(_ context: ComponentContext) async { publishedAt = context.now() }

    func nextDue(at now: Timestamp) -> Timestamp? {
        let publication = publicationDelay(at: now).map { Timestamp(milliseconds: now.milliseconds + $0) }
        switch (board.tracker.nextExpiry, publication) {
        case (let expiry?, let publication?): return min(expiry, publication)
        case (let expiry, let publication): return expiry ?? publication
        }
    }

    func wake(at now: Timestamp, _ context: ComponentContext) {
        if let expiry = board.tracker.nextExpiry, expiry <= now { board.tracker.expire(at: now) }
        guard publicationDelay(at: now).map({ $0 <= 0 }) == true else { return }
        publish(at: now, context)
        context.discover(lookalikes: board.tracker.options)
    }

    func republish(at now: Timestamp, _ context: ComponentContext) { publish(at: now, context) }

    private func publish(at now: Timestamp, _ context: ComponentContext) {
        context.publishBridge(context.topics.bridgeLookalikes, board.tracker.payload { AppleModelCatalogue.model($0)?.name })
        board.tracker.published()
        publishedAt = now
    }

    func metrics(_ text: inout MetricsText, _ context: ComponentContext) {
        text.counter(
            "aabridge_lookalike_events_suppressed_total",
            "lookalikeHeard events beyond the bound per second, counted instead of published.",
            board.eventsSuppressed)
    }

    /// In how long `bridge/lookalikes` is due (nil: it is current).
    private func publicationDelay(at now: Timestamp) -> Int64? {
        guard let publishedAt else { return nil }
        let interval: Int64
        if board.tracker.listChanged {
            interval = LookalikeTracker.listChangeMilliseconds
        } else if board.tracker.refreshed {
            interval = LookalikeTracker.refreshMilliseconds
        } else {
            return nil
        }
        return interval - now.milliseconds(since: publishedAt)
    }
}
