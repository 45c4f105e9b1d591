/// A point in time as milliseconds since the Unix epoch.
///
/// The engine never reads a clock: the runtime passes the current time with every
/// input, which is what makes debounce, picker timeouts and availability testable
/// by feeding times instead of sleeping.
public struct Timestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public var milliseconds: Int64

    /// Creates a timestamp from milliseconds since the epoch.
    public init(milliseconds: Int64) {
        self.milliseconds = milliseconds
    }

    /// The timestamp `milliseconds` later (earlier when negative).
    public func advanced(byMilliseconds delta: Int64) -> Timestamp {
        Timestamp(milliseconds: milliseconds &+ delta)
    }

    /// Milliseconds from `earlier` to `self`.
    public func milliseconds(since earlier: Timestamp) -> Int64 {
        milliseconds &- earlier.milliseconds
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.milliseconds < rhs.milliseconds
    }

    public var description: String { "\(milliseconds)ms" }
}
