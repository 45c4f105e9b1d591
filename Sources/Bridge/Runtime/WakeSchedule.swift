/// Wakes the runtime's loop when something is due, and only then: an idle bridge sleeps
/// instead of ticking.
///
/// One timer at a time: arming a later time than the one armed changes nothing (the
/// earlier wake re-arms for what is left), arming an earlier one replaces it.
final class WakeSchedule {
    private let sink: AsyncStream<RuntimeEvent>.Continuation
    private var armed: (at: ContinuousClock.Instant, task: Task<Void, Never>)?

    /// The longest the loop sleeps even with nothing due. Deadlines are the engine's (wall
    /// clock) times turned into a sleep; a wall clock stepped forward makes them due sooner
    /// than planned, and this bounds how late the bridge notices.
    static let maximumSleepMilliseconds: Int64 = 5_000

    init(sink: AsyncStream<RuntimeEvent>.Continuation) { self.sink = sink }

    /// Makes sure the loop wakes within `milliseconds`.
    func arm(inMilliseconds milliseconds: Int64) {
        let at = ContinuousClock.now.advanced(by: .milliseconds(max(0, milliseconds)))
        if let armed, armed.at <= at { return }
        armed?.task.cancel()
        let sink = self.sink
        armed = (
            at,
            Task {
                do {
                    try await Task.sleep(until: at, clock: .continuous)
                } catch {
                    return // replaced by an earlier wake, or the runtime stopped
                }
                sink.yield(.wake)
            }
        )
    }

    /// The armed wake has fired (the loop is handling it).
    func fired() { armed = nil }

    func cancel() {
        armed?.task.cancel()
        armed = nil
    }
}
