import Synchronization

/// Bounds the messages waiting between the MQTT client and the runtime's loop, so that a
/// flood beyond what the bridge can process costs a bounded amount of memory: past `limit`
/// waiting messages, new ones are dropped and counted instead of queued.
final class Backlog: Sendable {
    let limit: Int
    private let waiting = Atomic<Int>(0)
    private let dropped = Atomic<Int>(0)

    init(limit: Int) { self.limit = limit }

    /// Whether one more message may be queued (and counts it when it may).
    func admit() -> Bool {
        if waiting.add(1, ordering: .relaxed).newValue > limit {
            waiting.subtract(1, ordering: .relaxed)
            dropped.add(1, ordering: .relaxed)
            return false
        }
        return true
    }

    /// Messages admitted and not yet taken by the loop.
    var waitingCount: Int { waiting.load(ordering: .relaxed) }

    /// One queued message was taken by the loop.
    func taken() { waiting.subtract(1, ordering: .relaxed) }

    /// Whether messages were dropped since the last ``takeDropped()``.
    var hasDropped: Bool { dropped.load(ordering: .relaxed) > 0 }

    /// Messages dropped since the last call.
    func takeDropped() -> Int { dropped.exchange(0, ordering: .relaxed) }
}
