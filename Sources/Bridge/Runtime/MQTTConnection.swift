import MQTT

/// What the runtime needs from its MQTT connection: the publishing half the ``Publisher``
/// uses, plus the incoming side. ``MQTTClient`` is the real one; tests can hand the runtime
/// an in-memory connection to run the same flows without a broker.
public protocol MQTTConnection: MQTTPublishing {
    /// Incoming messages, in the order the broker delivered them. One consumer.
    var messages: AsyncStream<MQTTMessage> { get }
    /// Hands every incoming message to `handler` as it arrives, instead of ``messages``.
    /// - Returns: the task that forwards them, when the connection needs one (cancelled at
    ///   shutdown); `nil` when the connection calls `handler` itself.
    func deliverMessages(to handler: @escaping @Sendable (MQTTMessage) -> Void) -> Task<Void, Never>?
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
    /// A task that reads ``messages`` and calls `handler` (the in-memory connection's way).
    public func deliverMessages(to handler: @escaping @Sendable (MQTTMessage) -> Void) -> Task<Void, Never>? {
        let messages = self.messages
        return Task { for await message in messages { handler(message) } }
    }
}

extension MQTTClient: MQTTConnection {
    /// On the network thread: the runtime's inbox classifies each message there and bounds
    /// what waits (``Backlog``) while never dropping a request (``RequestLane``); a bounded
    /// stream in between would drop requests with the telemetry when its reader falls behind.
    public func deliverMessages(to handler: @escaping @Sendable (MQTTMessage) -> Void) -> Task<Void, Never>? {
        setMessageHandler(handler)
        return nil
    }
}
