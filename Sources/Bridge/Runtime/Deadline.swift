import Synchronization

/// Waits for an operation at most so long: shutdown must end even when the broker stops
/// answering (a frozen broker keeps the TCP connection open, so nothing fails, nothing
/// acknowledges and a disconnect never completes).
enum Deadline {
    /// Runs `operation` and returns whether it finished within `duration`. When it does not,
    /// it is left running (unstructured: it may be blocked where cancellation cannot reach
    /// it) and the caller goes on; at shutdown the process exits under it.
    static func run(_ duration: Duration, _ operation: @escaping @Sendable () async -> Void) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let outcome = Outcome(continuation)
            Task {
                await operation()
                outcome.finish(inTime: true)
            }
            Task {
                try? await Task.sleep(for: duration)
                outcome.finish(inTime: false)
            }
        }
    }

    /// Resumes the continuation once, with whichever of the two finished first.
    private final class Outcome: Sendable {
        private let continuation: Mutex<CheckedContinuation<Bool, Never>?>

        init(_ continuation: CheckedContinuation<Bool, Never>) { self.continuation = Mutex(continuation) }

        func finish(inTime: Bool) {
            let waiting = continuation.withLock { waiting in
                defer { waiting = nil }
                return waiting
            }
            waiting?.resume(returning: inTime)
        }
    }
}
