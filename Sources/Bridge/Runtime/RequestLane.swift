import MQTT
import Synchronization

/// One-off messages (requests, `/set` updates, Home Assistant's and gateways' status:
/// ``IngestRoute/isOneOff``) that overtake a telemetry backlog. Normally every message waits
/// its turn (a request is answered after the telemetry that came before it); once more than
/// `congestion` messages are waiting, they go here instead and the loop handles them before
/// its next event, so a flood cannot make the request API wait behind up to
/// ``Backlog/limit`` messages, nor drop them with the telemetry. Never while one-off messages
/// that arrived earlier still wait in the backlog (``backlogged()``): overtaking them would
/// answer `picker/select` before the `picker/show` sent just before it. Bounded too: past
/// `limit` waiting messages, new ones take the ordinary path.
final class RequestLane: Sendable {
    let limit: Int
    let congestion: Int
    private let waiting = Mutex<[(MQTTMessage, IngestRoute)]>([])
    private let count = Atomic<Int>(0)
    /// One-off messages that took the ordinary path and are not yet handled.
    private let inBacklog = Atomic<Int>(0)

    init(limit: Int = 1_000, congestion: Int = 1_000) {
        self.limit = limit
        self.congestion = congestion
    }

    /// Queues a request when the backlog is congested; false when it must take the ordinary path.
    func admit(_ message: MQTTMessage, route: IngestRoute, backlogWaiting: Int) -> Bool {
        guard backlogWaiting > congestion, inBacklog.load(ordering: .relaxed) == 0, count.load(ordering: .relaxed) < limit
        else { return false }
        waiting.withLock { $0.append((message, route)) }
        count.add(1, ordering: .relaxed)
        return true
    }

    /// A one-off message was queued in the backlog instead (called by the forwarder).
    func backlogged() { inBacklog.add(1, ordering: .relaxed) }

    /// The loop took a one-off message from the backlog.
    func backloggedTaken() { inBacklog.subtract(1, ordering: .relaxed) }

    /// Every queued request, oldest first (cheap when there is none).
    func drain() -> [(MQTTMessage, IngestRoute)] {
        guard count.load(ordering: .relaxed) > 0 else { return [] }
        let taken = waiting.withLock { queue -> [(MQTTMessage, IngestRoute)] in
            defer { queue.removeAll() }
            return queue
        }
        count.subtract(taken.count, ordering: .relaxed)
        return taken
    }
}
