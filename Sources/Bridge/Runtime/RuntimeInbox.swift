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

    /// Queues `messages` for the loop, as one event, dropping those that find the backlog full
    /// (counted by the backlog). A one-off message (a request, `/set`, a status) overtakes a
    /// congested backlog through the lane, unless one-off messages still wait in the backlog:
    /// it then queues behind them, so they are handled in the order they arrived.
    func forward(_ messages: [MQTTMessage]) {
        var admitted: [RoutedMessage] = []
        admitted.reserveCapacity(messages.count)
        var overtaking = false
        for message in messages {
            let route = router.route(message.topic)
            if route.isOneOff, requestLane.admit(message, route: route, backlogWaiting: backlog.waitingCount) {
                overtaking = true
            } else if backlog.admit() {
                if route.isOneOff { requestLane.backlogged() }
                admitted.append(RoutedMessage(message: message, route: route))
            }
        }
        if overtaking { sink.yield(.requests) }
        if !admitted.isEmpty { sink.yield(.messages(admitted)) }
    }

    /// One message alone (as a test standing in for the broker feeds them).
    func forward(_ message: MQTTMessage) { forward([message]) }
}
