/// A QoS 1/2 publish waiting for its PUBACK (or for a connection to be sent on).
struct OutgoingPublish: Sendable {
    var topic: String
    var payload: [UInt8]
    var qos: MQTTQoS
    var retain: Bool
    /// nil for fire-and-forget publishes (``MQTTClient/enqueue(topic:payload:qos:retain:)``).
    var continuation: CheckedContinuation<Result<Void, MQTTError>, Never>?
}
