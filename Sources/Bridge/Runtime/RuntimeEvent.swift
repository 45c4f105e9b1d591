import MQTT

/// Everything the runtime reacts to, merged into one stream so that a single task owns the
/// engine and every output is carried out in order.
enum RuntimeEvent: Sendable {
    case message(MQTTMessage)
    case connection(MQTTConnectionState)
    case tick
    /// Requests are waiting in the ``RequestLane`` (handled before any other event).
    case requests
    /// Home Assistant came back online: republish discovery and state.
    case republish
    case shutdown(signal: Int32)
}
