/// The mutable state of an ``MQTTClient``, only touched under its mutex.
struct ClientState: Sendable {
    enum Phase: Sendable {
        case idle, running, stopping, stopped
    }

    var phase = Phase.idle
    var connected = false
    /// Whether a CONNACK was ever accepted; later ones count as reconnects.
    var everConnected = false
    /// Set by on_connect when the broker refuses; the supervisor reports it as the reason.
    var refusal: MQTTError?
    /// Filters restored after every reconnect, in the order they were added.
    var subscriptions: [(filter: String, qos: MQTTQoS)] = []
    var firstConnect: CheckedContinuation<Result<Void, MQTTError>, Never>?
    var pendingPublishes: [Int32: CheckedContinuation<Result<Void, MQTTError>, Never>] = [:]
    /// Acknowledgements that arrived before the publisher registered its continuation.
    var earlyPublishAcks: [Int32: Result<Void, MQTTError>] = [:]
    /// Awaited publishes between `mosquitto_publish` and registering their continuation.
    var registeringPublishes = 0
    var pendingSubscribes: [Int32: CheckedContinuation<Result<Void, MQTTError>, Never>] = [:]
    var earlySubscribeAcks: [Int32: Result<Void, MQTTError>] = [:]
    /// QoS 1 publishes made while disconnected, sent from on_connect in order.
    var outbox: [OutgoingPublish] = []
    /// Message ids of QoS 1/2 publishes handed to libmosquitto and not yet acknowledged by
    /// the broker (libmosquitto queues them without bound, and resends them after a reconnect).
    var unacknowledged = Set<Int32>()
    /// What ``MQTTClient/outstandingPublishes`` reports: unacknowledged plus kept while disconnected.
    var outstandingPublishes: Int { unacknowledged.count + outbox.count }
    var stopWaiters: [CheckedContinuation<Void, Never>] = []
    var statistics = MQTTStatistics()
}
