/// The mutable state of an ``MQTTClient``, only touched under its mutex.
struct ClientState: Sendable {
    enum Phase: Sendable {
        case idle, running, stopping, stopped
    }

    /// How far the current connection has come.
    enum Link: Sendable {
        /// No connection, or one the broker has not accepted yet: publishes go to the outbox.
        case down
        /// Accepted (CONNACK): the subscriptions are being restored and checked; publishes
        /// still go to the outbox.
        case restoring
        /// Subscriptions granted and the outbox sent: publishes go straight to libmosquitto.
        case ready
    }

    var phase = Phase.idle
    var link = Link.down
    /// Set by on_connect on an accepted CONNACK; the network thread moves the link to
    /// `restoring` once libmosquitto has finished handling the CONNACK (see ``MQTTClient``).
    var connackAccepted = false
    /// Whether a CONNACK was ever accepted; later ones count as reconnects.
    var everConnected = false
    /// Why the current connection is being given up (a refused CONNACK, or a restored
    /// subscription the broker refused); the supervisor reports it as the reason.
    var refusal: MQTTError?
    /// Filters restored after every reconnect, in the order they were added.
    var subscriptions: [(filter: String, qos: MQTTQoS)] = []
    /// Filters subscribed on the current connection (sent, granted or not yet answered).
    var sentFilters = Set<String>()
    /// SUBSCRIBE packets of the current connection waiting for their SUBACK: id → filter.
    var pendingSubscribes: [Int32: String] = [:]
    /// ``MQTTClient/subscribe(_:qos:)`` calls waiting for their filter's SUBACK, which may
    /// come on a later connection when this one drops first.
    var subscribeWaiters: [String: [CheckedContinuation<Result<Void, MQTTError>, Never>]] = [:]
    var firstConnect: CheckedContinuation<Result<Void, MQTTError>, Never>?
    /// Awaited QoS 1/2 publishes handed to libmosquitto: id → the publisher.
    var pendingPublishes: [Int32: CheckedContinuation<Result<Void, MQTTError>, Never>] = [:]
    /// QoS 1/2 publishes not handed to libmosquitto yet (no ready connection, or no free
    /// message id), in order; sent by the network thread.
    var outbox: [OutgoingPublish] = []
    /// Message ids of QoS 1/2 publishes handed to libmosquitto and not yet acknowledged by
    /// the broker (libmosquitto queues them without bound, and resends them after a reconnect).
    var unacknowledged = Set<Int32>()
    /// The last message id libmosquitto handed out. It hands them out in turn (1...65535, for
    /// publishes of every QoS, subscribes and unsubscribes) without checking whether one is
    /// still in use; the client checks instead (``nextIDIsFree``).
    var lastID: Int32 = 0
    var stopWaiters: [CheckedContinuation<Void, Never>] = []
    var statistics = MQTTStatistics()

    /// What ``MQTTClient/outstandingPublishes`` reports: unacknowledged plus not sent yet.
    var outstandingPublishes: Int { unacknowledged.count + outbox.count }

    /// Whether the id libmosquitto will hand out next belongs to nothing still waiting for
    /// the broker. When it does, a new packet would share it, and the broker's answer to one
    /// would complete the other: the packet waits instead (only with 65,535 outstanding).
    var nextIDIsFree: Bool {
        let next = lastID >= 65_535 ? 1 : lastID + 1
        return !unacknowledged.contains(next) && pendingSubscribes[next] == nil
    }

    /// The connection is gone: whatever was subscribed or awaited on it must be redone on
    /// the next one (SUBSCRIBE is not re-sent by libmosquitto; its publishes are).
    mutating func dropLink() {
        link = .down
        connackAccepted = false
        sentFilters.removeAll()
        pendingSubscribes.removeAll()
    }

    /// Records the id a libmosquitto call handed out (0: the call failed before taking one).
    mutating func took(_ id: Int32) {
        if id != 0 { lastID = id }
    }
}
