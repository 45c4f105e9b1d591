/// Debounces raw placement readings into committed placement updates.
///
/// A raw change is committed only after it stayed unchanged for the window; a
/// change back to the committed value cancels the pending one; an unchanged
/// placement never produces an update. Commits are optimistic: when the update
/// they cause fails, `revert(to:)` restores the state before it.
///
/// Readings that contradict each other lengthen the window. A contradiction is a pending change
/// cancelled or replaced by another reading, or a commit less than ``flapSpanMilliseconds``
/// after the one before; the second within that span doubles the window, and every one after
/// it again, up to ``longestWindowMilliseconds`` (a single wobble only restarts the window). So
/// two sources saying opposite things, such as an accessory's real frames and replayed ones with
/// the clear status changed (identity.md, "What someone in radio range can do"), cannot make
/// placement flip faster than that, in whatever order their readings and the deadlines come. A
/// quiet spell (no contradiction for twice the window, and at least the span) brings the
/// debounce back. A debounce of 0 means every reading commits at once: nothing is held.
public struct PlacementFilter: Hashable, Sendable {
    /// The debounce window; 0 commits immediately.
    public let debounceMilliseconds: Int64
    /// The placement last committed (sent as an update).
    public private(set) var committed: AccessoryControlDevice.Placement?
    /// A raw placement waiting out the window, and since when.
    public private(set) var pending: AccessoryControlDevice.Placement?
    /// When the pending placement was first seen.
    public private(set) var pendingSince: Timestamp?
    /// How long a change must hold now: the debounce, or more after contradicting readings.
    public private(set) var windowMilliseconds: Int64
    /// When a reading last contradicted a pending change or a recent commit.
    public private(set) var lastContradiction: Timestamp?
    /// Two contradictions within this span are contested readings, not a wobble.
    public static let flapSpanMilliseconds: Int64 = 10_000
    /// When the last change was committed.
    private var lastCommit: Timestamp?

    /// The longest a contested change has to hold.
    public static let longestWindowMilliseconds: Int64 = 30_000
    /// The shortest window after a contradiction (a debounce of 0 would not grow by doubling).
    public static let contestedMinimumMilliseconds: Int64 = 1_000

    /// Creates a filter.
    public init(debounceMilliseconds: Int64 = 500, committed: AccessoryControlDevice.Placement? = nil) {
        self.debounceMilliseconds = max(0, debounceMilliseconds)
        self.committed = committed
        windowMilliseconds = self.debounceMilliseconds
    }

    /// Whether contradicting readings lengthened the window.
    public var isContested: Bool { windowMilliseconds > debounceMilliseconds }

    /// Feeds a raw reading.
    /// - Returns: a placement to send as an update now, if one is committed.
    public mutating func observe(_ placement: AccessoryControlDevice.Placement, at now: Timestamp) -> AccessoryControlDevice.Placement? {
        if let lastContradiction, now.milliseconds(since: lastContradiction) > max(2 * windowMilliseconds, Self.flapSpanMilliseconds) {
            windowMilliseconds = debounceMilliseconds
            self.lastContradiction = nil
        }
        if placement == committed {
            if pending != nil { contradicted(at: now) }
            pending = nil
            pendingSince = nil
            return nil
        }
        if pending != placement {
            // A third value replacing a pending one contradicts it too.
            if pending != nil { contradicted(at: now) }
            pending = placement
            pendingSince = now
        }
        return tick(at: now)
    }

    /// Commits the pending placement once it has been stable for the window.
    public mutating func tick(at now: Timestamp) -> AccessoryControlDevice.Placement? {
        guard let pending, let since = pendingSince, now.milliseconds(since: since) >= windowMilliseconds else { return nil }
        committed = pending
        self.pending = nil
        pendingSince = nil
        // Flipping back this soon is two sources disagreeing, or a reading on the edge: the next
        // change has to hold longer.
        if let lastCommit, now.milliseconds(since: lastCommit) < Self.flapSpanMilliseconds { contradicted(at: now) }
        lastCommit = now
        return pending
    }

    /// When the pending placement would commit.
    public var deadline: Timestamp? {
        pendingSince?.advanced(byMilliseconds: windowMilliseconds)
    }

    /// Undoes a commit whose update failed: the committed placement is the one before, nothing pending.
    public mutating func revert(to placement: AccessoryControlDevice.Placement?) {
        committed = placement
        pending = nil
        pendingSince = nil
    }

    private mutating func contradicted(at now: Timestamp) {
        guard debounceMilliseconds > 0 else { return }
        defer { lastContradiction = now }
        guard let last = lastContradiction, now.milliseconds(since: last) <= Self.flapSpanMilliseconds else { return }
        windowMilliseconds = min(Self.longestWindowMilliseconds, max(Self.contestedMinimumMilliseconds, 2 * windowMilliseconds))
    }
}
