/// Delay before the next connection attempt: exponential from `minimum`, capped at `maximum`,
/// with "equal jitter" (half fixed, half random) so that many bridges restarted together do
/// not hit the broker in lockstep. Never below `minimum`, never above `maximum`.
public struct ReconnectBackoff: Sendable, Hashable {
    public var minimum: Duration
    public var maximum: Duration

    public init(minimum: Duration = .seconds(1), maximum: Duration = .seconds(30)) {
        self.minimum = minimum
        self.maximum = max(minimum, maximum)
    }

    /// - Parameters:
    ///   - attempt: failed attempts since the last successful connection (0 for the first retry).
    ///   - random: a value in `0..<1`; injected so tests are deterministic.
    public func delay(attempt: Int, random: Double) -> Duration {
        let ceiling = ceilingDelay(attempt: attempt)
        let jittered = ceiling / 2 + (ceiling / 2) * min(max(random, 0), 1)
        return min(maximum, max(minimum, jittered))
    }

    /// The un-jittered exponential delay for an attempt.
    func ceilingDelay(attempt: Int) -> Duration {
        var ceiling = minimum
        var step = 0
        // Doubling with a cap avoids the overflow a plain `minimum * 2^attempt` would hit.
        while step < attempt && ceiling < maximum {
            ceiling = ceiling * 2
            step += 1
        }
        return min(ceiling, maximum)
    }
}
