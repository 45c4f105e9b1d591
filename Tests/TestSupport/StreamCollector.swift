import Foundation
import Synchronization

/// Drains an `AsyncStream` (or ``MQTTClient``'s messages) in the background so a test can wait for a condition on what
/// arrived, with a deadline instead of hanging forever when it never does.
public final class StreamCollector<Element: Sendable>: Sendable {
    private final class Received: Sendable {
        let elements = Mutex<[Element]>([])
    }

    private let received = Received()
    private let task: Task<Void, Never>

    public init<Stream: AsyncSequence<Element, Never> & Sendable>(_ stream: Stream) {
        let received = self.received
        task = Task {
            for await element in stream { received.elements.withLock { $0.append(element) } }
        }
    }

    deinit { task.cancel() }

    public var elements: [Element] { received.elements.withLock { $0 } }

    /// Waits until `condition` holds for what has arrived, or `timeout` passes.
    /// - Returns: whether the condition held.
    @discardableResult
    public func wait(timeout: Duration = .seconds(10), until condition: ([Element]) -> Bool) async -> Bool {
        await eventually(timeout: timeout) { received.elements.withLock { condition($0) } }
    }

    /// Waits until at least `count` elements have arrived.
    @discardableResult
    public func wait(count: Int, timeout: Duration = .seconds(10)) async -> Bool {
        await wait(timeout: timeout) { $0.count >= count }
    }

    public func removeAll() { received.elements.withLock { $0.removeAll() } }
}
