import MQTT
import Synchronization

/// Requests that overtake a telemetry backlog. Normally every message waits its turn (a
/// request is answered after the telemetry that came before it); once more than
/// `congestion` messages are waiting, requests go here instead and the loop handles them
/// before its next event, so a flood cannot make the request API wait behind up to
/// ``Backlog/limit`` messages, nor drop requests with the telemetry. Bounded too: past
/// `limit` waiting requests, new ones take the ordinary path.
final class RequestLane: Sendable {
    let limit: Int
    let congestion: Int
    private let waiting = Mutex<[(MQTTMessage, IngestRoute)]>([])
    private let count = Atomic<Int>(0)

    init(limit: Int = 1_000, congestion: Int = 1_000) {
        self.limit = limit
        self.congestion = congestion
    }

    /// Queues a request when the backlog is congested; false when it must take the ordinary path.
    func admit(_ message: MQTTMessage, route: IngestRoute, backlogWaiting: Int) -> Bool {
        guard backlogWaiting > congestion, count.load(ordering: .relaxed) < limit else { return false }
        waiting.withLock { $0.append((message, route)) }
        count.add(1, ordering: .relaxed)
        return true
    }

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
