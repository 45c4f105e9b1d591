import MQTT

/// What the runtime needs from its MQTT connection: the publishing half the ``Publisher``
/// uses, plus the incoming side. ``MQTTClient`` is the real one; tests can hand the runtime
/// an in-memory connection to run the same flows without a broker.
public protocol MQTTConnection: MQTTPublishing {
    /// Incoming messages, in the order the broker delivered them, in batches
    /// (``MessageQueue/next(into:)``). One consumer.
    var incoming: MessageQueue { get }
    /// The consumer of ``incoming`` has handed `count` messages on (MQTTClient counts what
    /// waits, to bound it without ever dropping a request).
    func messagesTaken(_ count: Int)
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
    /// Nothing to count.
    public func messagesTaken(_ count: Int) {}
}

extension MQTTClient: MQTTConnection {}
