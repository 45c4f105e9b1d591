import AccessoryKit
import MQTT
import Synchronization

/// What a command's client received from the running bridge (the one consumer of the
/// client's messages), read under a lock by the command's task: the latest of each topic with
/// when it arrived (`bridge/accessories`, `bridge/state`), and the recent ones a request's
/// answer is looked for among. A long run (report-sources) keeps a few messages per topic, no
/// history.
final class CommandInbox: Sendable {
    /// One message as it arrived: `sequence` counts every message received, so "newer than
    /// what was seen" is a comparison.
    struct Received: Sendable {
        var sequence: Int
        var message: MQTTMessage
        var receivedAt: Timestamp
    }

    /// Messages kept per topic: enough for the answers a command waits for one at a time.
    static let keptPerTopic = 16

    private let state = Mutex<(sequence: Int, byTopic: [String: [Received]])>((0, [:]))

    /// The commands' clock: monotonic (a stepped wall clock must not make a state look older
    /// or newer than a message), milliseconds since the command started.
    static let started = ContinuousClock.now

    static func now() -> Timestamp {
        Timestamp(milliseconds: Int64((ContinuousClock.now - started) / .milliseconds(1)))
    }

    /// Reads `stream` until the task is cancelled, stamping each message with ``now()``.
    func collect(_ stream: MQTTMessages) -> Task<Void, Never> {
        Task {
            for await message in stream {
                let receivedAt = Self.now()
                state.withLock { state in
                    state.sequence += 1
                    var kept = state.byTopic[message.topic, default: []]
                    kept.append(Received(sequence: state.sequence, message: message, receivedAt: receivedAt))
                    if kept.count > Self.keptPerTopic { kept.removeFirst(kept.count - Self.keptPerTopic) }
                    state.byTopic[message.topic] = kept
                }
            }
        }
    }

    /// The latest message on `topic`, when one newer than `sequence` arrived.
    func latest(on topic: String, after sequence: Int = 0) -> Received? {
        state.withLock { state in
            guard let last = state.byTopic[topic]?.last, last.sequence > sequence else { return nil }
            return last
        }
    }

    /// Waits until every topic of `topics` has a message, or `timeout` passes.
    @discardableResult
    func wait(timeout: Duration, forAll topics: [String]) async -> Bool {
        await wait(timeout: timeout) { byTopic in topics.allSatisfy { byTopic[$0]?.isEmpty == false } }
    }

    /// The first kept message on `topic` that `matches`, waiting up to `timeout` for it.
    func first(on topic: String, timeout: Duration, where matches: @escaping (MQTTMessage) -> Bool) async -> MQTTMessage? {
        let found = { (byTopic: [String: [Received]]) in byTopic[topic]?.first { matches($0.message) }?.message }
        guard await wait(timeout: timeout, until: { found($0) != nil }) else { return nil }
        return state.withLock { found($0.byTopic) }
    }

    private func wait(timeout: Duration, until condition: ([String: [Received]]) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            if state.withLock({ condition($0.byTopic) }) { return true }
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }
}
