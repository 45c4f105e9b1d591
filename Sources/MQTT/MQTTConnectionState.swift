/// What the connection supervisor reports: every successful CONNACK, and every failed
/// attempt or lost connection with its reason. A `connected` after a `disconnected` is
/// the moment to republish retained state.
public enum MQTTConnectionState: Sendable, Hashable {
    case connected
    case disconnected(MQTTError)
}
