/// Where a component's own threads and tasks post its events (an HTTP call, a membership
/// report, a timer of its own): into the loop's one stream, addressed to that component, so
/// the loop hands each to it in order with everything else, and no other component sees it.
struct ComponentMailbox: Sendable {
    let index: Int
    let sink: AsyncStream<RuntimeEvent>.Continuation

    func post(_ event: any Sendable) { sink.yield(.component(index: index, event: event)) }

    /// `event` after `delay` (a retry, a debounce).
    func post(_ event: any Sendable, after delay: Duration) {
        let mailbox = self
        Task {
            try? await Task.sleep(for: delay)
            mailbox.post(event)
        }
    }
}
