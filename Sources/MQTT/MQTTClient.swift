import CMosquitto
import Dispatch
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A Swift 6 MQTT client over libmosquitto, with its own connection supervisor.
///
/// One dedicated thread owns the network loop (`mosquitto_loop`), connects, and reconnects
/// with ``ReconnectBackoff`` after *any* failure: unlike libmosquitto's own
/// `loop_forever`, it does not give up on DNS, TLS or authentication errors, because on a
/// gateway box the broker being misconfigured for a while is not a reason to stop for good.
/// Subscriptions are remembered and restored after every reconnect.
///
/// Callbacks run on that thread: they copy what they need, resume continuations and return;
/// nothing blocks or awaits there. Other threads only queue packets (libmosquitto is used in
/// "threaded" mode, which makes publish/subscribe thread-safe and wakes the loop).
///
/// Two ways to publish: ``enqueue(topic:payload:qos:retain:)`` queues without waiting, in
/// call order; ``publishAcknowledged(topic:payload:qos:retain:)`` waits until the broker
/// has acknowledged a QoS 1/2 message. Components that only publish take an
/// ``MQTTPublishing`` instead of the client.
///
/// ```swift
/// let client = try MQTTClient(configuration: .init(clientID: "aabridge"))
/// try await client.subscribe("home/+/BTtoMQTT/#")
/// try await client.connect()
/// for await message in client.messages { ... }
/// ```
/// Call ``disconnect()`` when done: the network thread keeps the client alive until then.
public final class MQTTClient: Sendable {
    public let configuration: MQTTConfiguration
    /// Incoming messages, in the order the broker delivered them, handed over in batches
    /// (``MessageQueue/next(into:)``). One consumer, which reports what it has taken
    /// (``messagesTaken(_:)``) when ``MQTTConfiguration/messageBufferLimit`` is set.
    public let incoming = MessageQueue()
    /// ``incoming`` one message at a time.
    public var messages: MQTTMessages { MQTTMessages(queue: incoming) }
    /// Connection changes (see ``MQTTConnectionState``). One consumer.
    public let connectionStates: AsyncStream<MQTTConnectionState>

    let handle: MosquittoHandle
    let state: Mutex<ClientState>
    /// Messages in ``incoming`` the consumer has not taken yet (with a buffer limit).
    let waitingMessages = Atomic<Int>(0)
    /// Messages received (``MQTTStatistics/messagesIn``), counted without the lock: every
    /// message counts.
    let messagesInCount = Atomic<Int>(0)
    /// ``MQTTConfiguration/priorityFilters`` as C strings.
    let priorityFilters: [[CChar]]
    let stateContinuation: AsyncStream<MQTTConnectionState>.Continuation
    /// Wakes the supervisor from its backoff sleep when the owner disconnects.
    let wakeUp = DispatchSemaphore(value: 0)
    /// A copy of `state.outstandingPublishes`, stored whenever it changes, readable without
    /// the lock (``outstandingPublishes`` is read for every telemetry message).
    let outstandingCount = Atomic<Int>(0)
    /// Called on the network thread when libmosquitto reports the link lost, before the client
    /// acts on it: tests publish from here to land in that window.
    let linkLostHookForTesting = Mutex<(@Sendable () -> Void)?>(nil)

    public init(configuration: MQTTConfiguration) throws(MQTTError) {
        precondition(libMosquittoInitialised, "mosquitto_lib_init failed")
        self.configuration = configuration
        priorityFilters = configuration.priorityFilters.map { Array($0.utf8CString) }
        (connectionStates, stateContinuation) = AsyncStream.makeStream(
            of: MQTTConnectionState.self, bufferingPolicy: .bufferingNewest(64))
        state = Mutex(ClientState())
        guard let mosq = mosquitto_new(configuration.clientID, configuration.cleanSession, nil) else {
            throw MQTTError(library: MOSQ_ERR_NOMEM.rawValue, context: "mosquitto_new")
        }
        handle = MosquittoHandle(pointer: mosq)
        // The user-data pointer is unretained: the network thread holds a strong reference
        // for as long as callbacks can run, and the handle is destroyed in deinit.
        mosquitto_user_data_set(mosq, Unmanaged.passUnretained(self).toOpaque())
        try applyConfiguration()
        installCallbacks()
    }

    deinit {
        mosquitto_destroy(handle.pointer)
    }

    // MARK: - Connection

    /// Starts the supervisor and waits for the first CONNACK.
    ///
    /// Throws the broker's reason when the first attempt is refused or the broker cannot be
    /// reached, and stops the supervisor. After a first success, the supervisor reconnects by
    /// itself forever. Use ``start()`` instead to keep trying from the very first attempt.
    public func connect() async throws(MQTTError) {
        let result: Result<Void, MQTTError> = await withCheckedContinuation { continuation in
            let alreadyRunning = state.withLock { state -> Bool in
                if state.phase != .idle { return true }
                state.firstConnect = continuation
                state.phase = .running
                return false
            }
            if alreadyRunning {
                continuation.resume(
                    returning: .failure(
                        MQTTError(
                            code: .invalidConfiguration, message: "connect() called on a client that was already started")))
            } else {
                startSupervisor()
            }
        }
        try result.get()
    }

    /// Starts the supervisor without waiting: it connects and reconnects forever, reporting on
    /// ``connectionStates``. For a daemon that must come up before its broker does.
    public func start() {
        let shouldStart = state.withLock { state -> Bool in
            guard state.phase == .idle else { return false }
            state.phase = .running
            return true
        }
        if shouldStart { startSupervisor() }
    }

    /// Sends DISCONNECT (so the will is *not* published), stops the supervisor, and fails
    /// whatever is still pending with ``MQTTError/Code/shutDown``. Returns when the network
    /// thread has finished.
    public func disconnect() async {
        let waitForThread = state.withLock { state -> Bool in
            switch state.phase {
            case .idle:
                state.phase = .stopped
                return false
            case .running:
                state.phase = .stopping
                return true
            case .stopping, .stopped:
                return state.phase == .stopping
            }
        }
        if waitForThread {
            _ = mosquitto_disconnect_v5(handle.pointer, 0, nil)
            wakeUp.signal()
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let finished = state.withLock { state -> Bool in
                    if state.phase == .stopped { return true }
                    state.stopWaiters.append(continuation)
                    return false
                }
                if finished { continuation.resume() }
            }
        }
        failEverythingPending()
    }

    /// The consumer of ``incoming`` has taken `count` messages: they no longer count against
    /// ``MQTTConfiguration/messageBufferLimit``.
    ///
    /// The limit is the client's own, not the stream's buffering policy: that one drops the
    /// *oldest* message when full, whatever it is, and a request lost that way is never
    /// answered. Counting here lets a full buffer refuse new telemetry while every request
    /// still joins it, in arrival order.
    public func messagesTaken(_ count: Int) {
        if configuration.messageBufferLimit != nil { waitingMessages.subtract(count, ordering: .relaxed) }
    }

    /// Whether a CONNACK has been accepted and the connection not lost since.
    public var isConnected: Bool { state.withLock { $0.link == .ready } }

    /// Entries in the client's per-message tables (tests check that nothing accumulates).
    var bookkeepingEntries: Int {
        state.withLock { $0.pendingPublishes.count + $0.pendingSubscribes.count + $0.subscribeWaiters.count }
    }

    /// Counters for health reporting.
    public var statistics: MQTTStatistics {
        var statistics = state.withLock { $0.statistics }
        statistics.messagesIn = messagesInCount.load(ordering: .relaxed)
        return statistics
    }

    /// Fails every pending continuation (called once the network thread has stopped).
    func failEverythingPending() {
        let error = MQTTError(code: .shutDown, message: "client disconnected")
        let (publishes, subscribes, firstConnect) = state.withLock { state in
            defer {
                state.pendingPublishes.removeAll()
                state.outbox.removeAll()
                state.pendingSubscribes.removeAll()
                state.subscribeWaiters.removeAll()
                state.firstConnect = nil
                state.unacknowledged.removeAll()
                outstandingCount.store(0, ordering: .relaxed)
            }
            return (
                Array(state.pendingPublishes.values) + state.outbox.compactMap(\.continuation),
                state.subscribeWaiters.values.flatMap { $0 }, state.firstConnect
            )
        }
        publishes.forEach { $0.resume(returning: .failure(error)) }
        subscribes.forEach { $0.resume(returning: .failure(error)) }
        firstConnect?.resume(returning: .failure(error))
        incoming.finish()
        stateContinuation.finish()
    }
}
