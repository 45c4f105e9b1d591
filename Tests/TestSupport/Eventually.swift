/// Polls `condition` every 5 ms until it holds or `timeout` passes; returns whether it held.
/// For state that is not a stream (a counter, a file), where ``StreamCollector`` does not apply.
public func eventually(timeout: Duration = .seconds(10), _ condition: () -> Bool) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}
