/// "At most once a minute per key" for log lines about rejected telemetry, so a gateway
/// that floods garbage cannot flood the log; suppressed occurrences are counted and reported
/// with the next line that gets through.
struct RateLimiter: Sendable {
    let intervalMilliseconds: Int64
    /// Bounded, so invented gateway names cannot grow it without limit.
    private var entries: [RateLimitKey: (last: Int64, suppressed: Int)] = [:]
    private let maximumKeys = 1024

    init(intervalMilliseconds: Int64 = 60_000) { self.intervalMilliseconds = intervalMilliseconds }

    /// Whether to log now for `key`, and how many were suppressed since the last time.
    mutating func admit(_ key: RateLimitKey, now: Int64) -> (admitted: Bool, suppressed: Int) {
        if let entry = entries[key], now - entry.last < intervalMilliseconds {
            entries[key] = (entry.last, entry.suppressed + 1)
            return (false, 0)
        }
        if entries.count >= maximumKeys, entries[key] == nil {
            entries = entries.filter { now - $0.value.last < intervalMilliseconds }
            if entries.count >= maximumKeys { return (false, 0) }
        }
        let suppressed = entries[key]?.suppressed ?? 0
        entries[key] = (now, 0)
        return (true, suppressed)
    }
}
