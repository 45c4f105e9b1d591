/// What a component that only sends messages needs from an MQTT connection: the two ways
/// to publish, and enough of the connection's state to decide whether to publish at all.
///
/// ``MQTTClient`` conforms; tests use an in-memory implementation (TestSupport's
/// `InMemoryPublisher`), so a component taking `any MQTTPublishing` can be tested without a
/// broker. Implementations are shared between tasks and threads, so every member must be
/// safe to call from any of them.
public protocol MQTTPublishing: AnyObject, Sendable {
    /// Queues a message without waiting. Messages enqueued from one task leave in call order.
    /// While disconnected, QoS 1/2 messages are kept and sent after the reconnect, QoS 0
    /// messages are dropped.
    /// - Returns: false when the message was dropped (a QoS 0 message that could not be sent).
    @discardableResult
    func enqueue(topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool) -> Bool

    /// Publishes a message and returns once it has the delivery its QoS promises: queued for
    /// the network for QoS 0, acknowledged by the broker for QoS 1/2 (kept while disconnected
    /// and acknowledged after the reconnect).
    /// - Throws: ``MQTTError`` when the message cannot be sent (QoS 0 while disconnected), the
    ///   broker refuses it, or the connection is shut down by its owner first.
    func publishAcknowledged(topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool) async throws(MQTTError)

    /// QoS 1/2 publications not yet acknowledged (see MQTTClient.outstandingPublishes)
    /// including those kept while disconnected: how far the broker is behind. A producer
    /// faster than the broker should slow down or shed while this grows.
    var outstandingPublishes: Int { get }

    /// Whether the connection is up now. A hint only: it can drop right after it is read.
    var isConnected: Bool { get }

    /// Counters for health reporting; `messagesOut` counts every message handed to the network.
    var statistics: MQTTStatistics { get }
}

extension MQTTClient: MQTTPublishing {}
