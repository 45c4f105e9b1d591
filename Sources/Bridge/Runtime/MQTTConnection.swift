import MQTT

/// What the runtime needs from its MQTT connection: the publishing half the ``Publisher``
/// uses, plus the incoming side. ``MQTTClient`` is the real one; tests can hand the runtime
/// an in-memory connection to run the same flows without a broker.
public protocol MQTTConnection: MQTTPublishing {
    /// Incoming messages, in the order the broker delivered them. One consumer.
    var messages: AsyncStream<MQTTMessage> { get }
    /// Requests, `/set` updates and statuses, when the connection keeps them apart from
    /// ``messages`` so that a telemetry flood cannot push them out (MQTTClient's
    /// `priorityFilters`). One consumer.
    var priorityMessages: AsyncStream<MQTTMessage> { get }
    /// Connection changes. One consumer.
    var connectionStates: AsyncStream<MQTTConnectionState> { get }
    /// Subscribes now if connected and again after every reconnect.
    func subscribe(_ filter: String, qos: MQTTQoS) async throws(MQTTError)
    /// Starts connecting (and reconnecting) without waiting.
    func start()
    /// Disconnects cleanly (no will) and stops.
    func disconnect() async
}

extension MQTTConnection {
    /// A connection that delivers everything on ``messages``: nothing here.
    public var priorityMessages: AsyncStream<MQTTMessage> { AsyncStream { $0.finish() } }
}

extension MQTTClient: MQTTConnection {}
