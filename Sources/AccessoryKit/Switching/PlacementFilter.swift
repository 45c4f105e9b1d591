/// Debounces raw placement readings into committed placement updates.
///
/// A raw change is committed only after it stayed unchanged for the window; a
/// change back to the committed value cancels the pending one; an unchanged
/// placement never produces an update. Commits are optimistic: when the update
/// they cause fails, `revert(to:)` restores the state before it.
public struct PlacementFilter: Hashable, Sendable {
    /// The debounce window; 0 commits immediately.
    public let debounceMilliseconds: Int64
    /// The placement last committed (sent as an update).
    public private(set) var committed: AccessoryControlDevice.Placement?
    /// A raw placement waiting out the window, and since when.
    public private(set) var pending: AccessoryControlDevice.Placement?
    /// When the pending placement was first seen.
    public private(set) var pendingSince: Timestamp?

    /// Creates a filter.
    public init(debounceMilliseconds: Int64 = 500, committed: AccessoryControlDevice.Placement? = nil) {
        self.debounceMilliseconds = max(0, debounceMilliseconds)
        self.committed = committed
    }

    /// Feeds a raw reading.
    /// - Returns: a placement to send as an update now, if one is committed.
    public mutating func observe(_ placement: AccessoryControlDevice.Placement, at now: Timestamp) -> AccessoryControlDevice.Placement? {
        if placement == committed {
            pending = nil
            pendingSince = nil
            return nil
        }
        if pending != placement {
            pending = placement
            pendingSince = now
        }
        return tick(at: now)
    }

    /// Commits the pending placement once it has been stable for the window.
    public mutating func tick(at now: Timestamp) -> AccessoryControlDevice.Placement? {
        guard let pending, let since = pendingSince, now.milliseconds(since: since) >= debounceMilliseconds else { return nil }
        committed = pending
        self.pending = nil
        pendingSince = nil
        return pending
    }

    /// When the pending placement would commit.
    public var deadline: Timestamp? {
        pendingSince?.advanced(byMilliseconds: debounceMilliseconds)
    }

    /// Undoes a commit whose update failed: the committed placement is the one before, nothing pending.
    public mutating func revert(to placement: AccessoryControlDevice.Placement?) {
        committed = placement
        pending = nil
        pendingSince = nil
    }
}
