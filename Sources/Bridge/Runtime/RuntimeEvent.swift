import MQTT

/// Everything the runtime reacts to, merged into one stream so that a single task owns the
/// stages and every output is carried out in order.
enum RuntimeEvent: Sendable {
    /// Incoming messages, in arrival order, with the route ``TopicRouter`` gave each on
    /// arrival: everything that arrived together, so the loop is woken once for them.
    case messages([RoutedMessage])
    case connection(MQTTConnectionState)
    /// Something may be due (see ``WakeSchedule``).
    case wake
    /// Requests are waiting in the ``RequestLane`` (handled before any other event).
    case requests
    /// Home Assistant came back online: republish discovery and state.
    case republish
    /// A call from the HTTP server (``HTTPCall``: a request, metrics, health, a console stream).
    case http(HTTPCall)
    /// What the cluster membership found (``ClusterMembership``): ownership, hand-overs,
    /// changes other instances stored.
    case cluster(ClusterEvent)
    case shutdown(signal: Int32)
}
