import Configuration
import MQTT

/// The runtime's entrance: every incoming MQTT message is checked for being a request
/// (``TopicRouter/requestRoute(_:)``, a prefix comparison) and forwarded into the loop's
/// event stream, requests through the ``RequestLane`` when the backlog is congested and
/// everything else through the bounded ``Backlog``. Nothing dearer happens here: under a
/// flood this side must keep up with the broker, or requests would wait in the MQTT
/// client's stream, behind telemetry and before any lane. Sendable, so the forwarding task
/// (and a test standing in for a frozen broker) can feed the loop while it runs.
struct RuntimeInbox: Sendable {
    let router: TopicRouter
    let requestLane: RequestLane
    let backlog: Backlog
    let sink: AsyncStream<RuntimeEvent>.Continuation

    /// Queues `message` for the loop, or drops it (counted by the backlog) when too many wait.
    func forward(_ message: MQTTMessage) {
        let request = router.requestRoute(message.topic)
        if let request, requestLane.admit(message, route: request, backlogWaiting: backlog.waitingCount) {
            sink.yield(.requests)
        } else if backlog.admit() {
            sink.yield(.message(message, request))
        }
    }
}
