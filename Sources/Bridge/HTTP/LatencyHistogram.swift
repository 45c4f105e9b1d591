import Synchronization

/// A Prometheus histogram of durations in seconds, recorded from any thread (the storage
/// thread records commits) and read by the loop for `/metrics`. Fixed buckets: the memory is
/// the same after a billion observations as after one.
final class LatencyHistogram: Sendable {
    /// Upper bounds in seconds (`le`), ascending; `+Inf` is implied.
    let bounds: [Double]
    private let state: Mutex<State>

    struct State {
        var counts: [Int]
        var sum = 0.0
        var count = 0
    }

    init(bounds: [Double] = LatencyHistogram.defaultBounds) {
        self.bounds = bounds
        state = Mutex(State(counts: Array(repeating: 0, count: bounds.count)))
    }

    /// From 0.5 ms to 10 s: a commit is about one fdatasync, a decision far less.
    static let defaultBounds = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    func observe(_ duration: Duration) {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
        state.withLock { state in
            if let index = bounds.firstIndex(where: { seconds <= $0 }) { state.counts[index] += 1 }
            state.sum += seconds
            state.count += 1
        }
    }

    /// The cumulative counts per bound (as Prometheus wants them), the sum and the count.
    var snapshot: (cumulative: [Int], sum: Double, count: Int) {
        state.withLock { state in
            var running = 0
            return (
                state.counts.map {
                    running += $0; return running
                }, state.sum, state.count
            )
        }
    }
}
