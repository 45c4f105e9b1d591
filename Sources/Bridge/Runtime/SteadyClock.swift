import AccessoryKit
import Synchronization

/// The runtime's time: the wall clock it is given, except that it never goes backwards.
///
/// The engine measures debounce windows, availability timeouts and picker timeouts as
/// differences of the timestamps it is handed. A wall clock set back (an NTP correction, an
/// RTC-less gateway box corrected after boot, an operator) made those differences negative:
/// every pending debounce froze and accessories no longer heard stayed "available" until the
/// clock caught up again (an hour for an hour's step). A backward step is now absorbed: time
/// continues from where it was and advances with the wall clock from there. A forward step
/// is taken as is (accessories not heard within the timeout go offline once), and first
/// pays back what earlier backward steps added, so published times return to the wall clock.
final class SteadyClock: Sendable {
    private struct State {
        var lastWall: Timestamp?
        var lastInstant: ContinuousClock.Instant?
        var last: Timestamp?
        /// How far the runtime's time is ahead of the wall clock (never negative).
        var offset: Int64 = 0
    }

    private let wall: @Sendable () -> Timestamp
    private let state = Mutex(State())

    init(_ wall: @escaping @Sendable () -> Timestamp) { self.wall = wall }

    func now() -> Timestamp {
        let reading = wall()
        let instant = ContinuousClock.now
        return state.withLock { state in
            if let lastWall = state.lastWall, let lastInstant = state.lastInstant {
                let step = reading.milliseconds(since: lastWall)
                if step < 0 {
                    state.offset += -step
                } else if state.offset > 0 {
                    let elapsed = lastInstant.duration(to: instant).components
                    let real = elapsed.seconds * 1000 + elapsed.attoseconds / 1_000_000_000_000_000
                    let excess = step - real
                    if excess > 0 { state.offset -= min(state.offset, excess) }
                }
            }
            var time = reading.advanced(byMilliseconds: state.offset)
            if let last = state.last, time < last { time = last }
            state.lastWall = reading
            state.lastInstant = instant
            state.last = time
            return time
        }
    }
}
