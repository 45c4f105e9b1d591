import Configuration
import MQTT

/// The runtime's entrance: every incoming MQTT message is classified once (``TopicRouter``)
/// and forwarded into the loop's event stream, requests through the ``RequestLane`` when the
/// backlog is congested and everything else through the bounded ``Backlog``. Sendable, so
/// the forwarding task (and a test standing in for a frozen broker) can feed the loop while
/// it runs.
struct RuntimeInbox: Sendable {
    let router: TopicRouter
    let requestLane: RequestLane
    let backlog: Backlog
    let sink: AsyncStream<RuntimeEvent>.Continuation

    /// Queues `message` for the loop, or drops it (counted by the backlog) when too many wait.
    func forward(_ message: MQTTMessage) {
        let route = router.route(message.topic)
        if route.isRequest, requestLane.admit(message, route: route, backlogWaiting: backlog.waitingCount) {
            sink.yield(.requests)
        } else if backlog.admit() {
            sink.yield(.message(message, route))
        }
    }
}
