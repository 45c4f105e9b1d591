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
    /// A component's own event (``ComponentMailbox``): an HTTP call, what the cluster
    /// membership found, a delayed republish. Only that component is handed it.
    case component(index: Int, event: any Sendable)
    case shutdown(signal: Int32)
}
