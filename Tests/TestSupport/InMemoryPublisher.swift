import MQTT
import Synchronization

/// An ``MQTTPublishing`` that records what it is asked to publish, in order, for tests of
/// components that only send messages: no broker, no network.
///
/// Behaves like ``MQTTClient`` as far as a publisher can tell: while ``isConnected`` is
/// false, QoS 0 messages are dropped (`enqueue` returns false, `publishAcknowledged` throws)
/// and QoS 1/2 messages are recorded as if kept and sent after the reconnect. Every message
/// recorded counts in `statistics.messagesOut`. ``outstandingPublishes`` is whatever the test
/// sets, to play a broker that is behind.
public final class InMemoryPublisher: MQTTPublishing {
    private struct State {
        var messages: [MQTTMessage] = []
        var isConnected: Bool
        var outstandingPublishes = 0
        var statistics = MQTTStatistics()
    }

    /// libmosquitto's `MOSQ_ERR_NO_CONN`, what ``MQTTClient`` throws for QoS 0 while disconnected.
    public static let notConnected = MQTTError(code: .library(4), message: "The client is not currently connected.")

    private let state: Mutex<State>

    public init(isConnected: Bool = true) {
        state = Mutex(State(isConnected: isConnected))
    }

    /// Every message recorded, in the order it was published.
    public var messages: [MQTTMessage] { state.withLock { $0.messages } }

    /// The messages recorded on `topic`, in order.
    public func messages(on topic: String) -> [MQTTMessage] {
        state.withLock { $0.messages.filter { $0.topic == topic } }
    }

    /// Forgets the messages recorded so far (the statistics keep counting).
    public func removeAllMessages() {
        state.withLock { $0.messages.removeAll() }
    }

    public var isConnected: Bool {
        get { state.withLock { $0.isConnected } }
        set { state.withLock { $0.isConnected = newValue } }
    }

    public var outstandingPublishes: Int {
        get { state.withLock { $0.outstandingPublishes } }
        set { state.withLock { $0.outstandingPublishes = newValue } }
    }

    public var statistics: MQTTStatistics { state.withLock { $0.statistics } }

    @discardableResult
    public func enqueue(topic: String, payload: [UInt8], qos: MQTTQoS = .atMostOnce, retain: Bool = false) -> Bool {
        record(MQTTMessage(topic: topic, payload: payload, qos: qos, retain: retain))
    }

    public func publishAcknowledged(
        topic: String, payload: [UInt8], qos: MQTTQoS = .atMostOnce, retain: Bool = false
    )
        async throws(MQTTError)
    {
        guard record(MQTTMessage(topic: topic, payload: payload, qos: qos, retain: retain)) else {
            throw Self.notConnected
        }
    }

    /// `publishAcknowledged(topic:payload:qos:retain:)` for UTF-8 text, as ``MQTTClient`` has it.
    public func publishAcknowledged(
        topic: String, string: String, qos: MQTTQoS = .atMostOnce, retain: Bool = false
    )
        async throws(MQTTError)
    {
        try await publishAcknowledged(topic: topic, payload: Array(string.utf8), qos: qos, retain: retain)
    }

    /// Records the message unless it is QoS 0 and the connection is down; returns whether it did.
    private func record(_ message: MQTTMessage) -> Bool {
        state.withLock { state in
            guard state.isConnected || message.qos != .atMostOnce else { return false }
            state.messages.append(message)
            state.statistics.messagesOut += 1
            return true
        }
    }
}
