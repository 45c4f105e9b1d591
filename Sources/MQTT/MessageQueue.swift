import Synchronization

/// Incoming messages on their way from the network thread to one consumer, handed over in
/// batches: the consumer takes everything that has arrived at once, and the producer wakes it
/// only when it is waiting for an empty queue. Under load that is one hand-over (one lock,
/// at most one thread wake-up) for many messages instead of one per message, which is what
/// an `AsyncStream` costs (docs/performance.md, "Ingest against mosquitto_sub").
///
/// One consumer at a time. Order is kept: messages come out in the order they were appended.
public final class MessageQueue: Sendable {
    private struct State {
        var messages: [MQTTMessage] = []
        /// The consumer, parked in ``next()`` on an empty queue.
        var consumer: UnsafeContinuation<Void, Never>?
        var finished = false
    }

    private let state = Mutex(State())

    public init() {}

    /// Appends `message` and wakes the consumer if it waits. After ``finish()`` it is dropped.
    public func append(_ message: MQTTMessage) {
        append(message, wake: true)
    }

    /// Appends `message`; with `wake` false the consumer is left asleep until ``wakeConsumer()``,
    /// so that a producer with several messages at hand wakes it once for all of them.
    public func append(_ message: MQTTMessage, wake: Bool) {
        let consumer = state.withLock { state -> UnsafeContinuation<Void, Never>? in
            guard !state.finished else { return nil }
            state.messages.append(message)
            guard wake else { return nil }
            defer { state.consumer = nil }
            return state.consumer
        }
        consumer?.resume()
    }

    /// Wakes the consumer if it waits and messages are there for it.
    public func wakeConsumer() {
        let consumer = state.withLock { state -> UnsafeContinuation<Void, Never>? in
            guard !state.messages.isEmpty else { return nil }
            defer { state.consumer = nil }
            return state.consumer
        }
        consumer?.resume()
    }

    /// No more messages: the consumer gets what is left, then `nil`.
    public func finish() {
        let consumer = state.withLock { state -> UnsafeContinuation<Void, Never>? in
            state.finished = true
            defer { state.consumer = nil }
            return state.consumer
        }
        consumer?.resume()
    }

    /// Replaces `batch` (handled by now: its storage is reused, so a steady flow allocates
    /// nothing here) by every message appended since the last call, oldest first, waiting for
    /// one if there is none.
    /// - Returns: false, with `batch` empty, once the queue is finished and empty, or when the
    ///   calling task is cancelled.
    public nonisolated(nonsending) func next(into batch: inout [MQTTMessage]) async -> Bool {
        batch.removeAll(keepingCapacity: true)
        while true {
            let finished = state.withLock { state -> Bool in
                if !state.messages.isEmpty { swap(&state.messages, &batch) }
                return state.finished
            }
            if !batch.isEmpty { return true }
            if finished || Task.isCancelled { return false }
            await withTaskCancellationHandler {
                await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                    let resumeNow = state.withLock { state -> Bool in
                        guard state.messages.isEmpty, !state.finished else { return true }
                        state.consumer = continuation
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            } onCancel: {
                let consumer = state.withLock { state -> UnsafeContinuation<Void, Never>? in
                    defer { state.consumer = nil }
                    return state.consumer
                }
                consumer?.resume()
            }
        }
    }

    /// Every message appended since the last call (see ``next(into:)``); `nil` at the end.
    public nonisolated(nonsending) func next() async -> [MQTTMessage]? {
        var batch: [MQTTMessage] = []
        return await next(into: &batch) ? batch : nil
    }
}

/// ``MessageQueue`` as an `AsyncSequence` of single messages (``MQTTClient/messages``): the
/// iterator takes a whole batch at once and hands it out one by one.
public struct MQTTMessages: AsyncSequence, Sendable {
    public typealias Element = MQTTMessage
    public typealias Failure = Never

    let queue: MessageQueue

    public struct AsyncIterator: AsyncIteratorProtocol {
        let queue: MessageQueue
        var batch: [MQTTMessage] = []
        var index = 0

        public nonisolated(nonsending) mutating func next() async -> MQTTMessage? {
            if index == batch.count {
                guard await queue.next(into: &batch) else { return nil }
                index = 0
            }
            defer { index += 1 }
            return batch[index]
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async -> MQTTMessage? {
            await next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(queue: queue) }
}
