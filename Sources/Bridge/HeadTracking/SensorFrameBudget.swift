import AccessoryKit

/// One accessory's share of the head-tracking stream: at most ``framesPerSecond`` frames
/// forwarded in each second, one refusal published a second. A relay that sends faster loses
/// the excess (counted), so a runaway or hostile relay cannot flood the broker and the
/// renderer behind it. Fixed one-second windows: a renderer at 100-200 Hz never meets the cap,
/// and the count needs no history.
struct SensorFrameBudget: Sendable {
    /// The most frames forwarded per accessory and second (domain.md, iOS 27).
    static let framesPerSecond = 200
    /// The least time between two refusals published for one accessory.
    static let errorIntervalMilliseconds: Int64 = 1_000

    private var windowStart: Int64?
    private var framesInWindow = 0
    private var lastErrorAt: Int64?

    /// Whether a frame at `now` is forwarded (and counted against this second's share).
    mutating func admitFrame(at now: Timestamp) -> Bool {
        let time = now.milliseconds
        if let start = windowStart, time - start < 1_000, time >= start {
            guard framesInWindow < Self.framesPerSecond else { return false }
            framesInWindow += 1
            return true
        }
        // A new second (or a clock stepped back: start over rather than refuse for the gap).
        windowStart = time
        framesInWindow = 1
        return true
    }

    /// Whether a refusal at `now` is published.
    mutating func admitError(at now: Timestamp) -> Bool {
        let time = now.milliseconds
        if let last = lastErrorAt, time - last < Self.errorIntervalMilliseconds, time >= last { return false }
        lastErrorAt = time
        return true
    }
}
