import CMosquitto
import Dispatch
import Foundation
import Synchronization

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
/// ```swift
/// let client = try MQTTClient(configuration: .init(clientID: "aabridge"))
/// try await client.subscribe("home/+/BTtoMQTT/#")
/// try await client.connect()
/// for await message in client.messages { ... }
/// ```
/// Call ``disconnect()`` when done: the network thread keeps the client alive until then.
public final class MQTTClient: Sendable {
    public let configuration: MQTTConfiguration
    /// Incoming messages, in the order the broker delivered them. One consumer.
    public let messages: AsyncStream<MQTTMessage>
    /// Connection changes (see ``MQTTConnectionState``). One consumer.
    public let connectionStates: AsyncStream<MQTTConnectionState>

    let handle: MosquittoHandle
    let state: Mutex<ClientState>
    let messageContinuation: AsyncStream<MQTTMessage>.Continuation
    let stateContinuation: AsyncStream<MQTTConnectionState>.Continuation
    /// Wakes the supervisor from its backoff sleep when the owner disconnects.
    let wakeUp = DispatchSemaphore(value: 0)
    /// A copy of `state.outstandingPublishes`, stored whenever it changes, readable without
    /// the lock (``outstandingPublishes`` is read for every telemetry message).
    let outstandingCount = Atomic<Int>(0)

    public init(configuration: MQTTConfiguration) throws(MQTTError) {
        precondition(libMosquittoInitialised, "mosquitto_lib_init failed")
        self.configuration = configuration
        let messagePolicy: AsyncStream<MQTTMessage>.Continuation.BufferingPolicy =
            configuration.messageBufferLimit.map { .bufferingNewest(max(1, $0)) } ?? .unbounded
        (messages, messageContinuation) = AsyncStream.makeStream(of: MQTTMessage.self, bufferingPolicy: messagePolicy)
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
                continuation.resume(returning: .failure(MQTTError(
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

    /// Whether a CONNACK has been accepted and the connection not lost since.
    public var isConnected: Bool { state.withLock { $0.connected } }

    /// Counters for health reporting.
    public var statistics: MQTTStatistics { state.withLock { $0.statistics } }

    // MARK: - Publish

    /// Publishes a message. For QoS 0 it returns once the message is queued for the socket;
    /// for QoS 1 and 2 it returns when the broker has acknowledged it, so a caller can treat
    /// the message as delivered. QoS 1 messages published while disconnected are kept and
    /// sent after the reconnect.
    public func publish(topic: String, payload: [UInt8], qos: MQTTQoS = .atMostOnce, retain: Bool = false)
        async throws(MQTTError)
    {
        if qos == .atMostOnce {
            try publishNow(topic: topic, payload: payload, qos: qos, retain: retain)
            return
        }
        let result: Result<Void, MQTTError> = await withCheckedContinuation { continuation in
            send(OutgoingPublish(topic: topic, payload: payload, qos: qos, retain: retain, continuation: continuation))
        }
        try result.get()
    }

    /// Sends a QoS 1/2 publish now, or keeps it in the outbox while there is no connection.
    ///
    /// libmosquitto refuses publishes while disconnected (`MOSQ_ERR_NO_CONN`), so the client
    /// keeps them itself and sends them from on_connect. The outbox is checked and filled
    /// under the same lock that on_connect uses to flush it, so nothing can slip between.
    func send(_ outgoing: OutgoingPublish) {
        let awaited = outgoing.continuation != nil
        let queued = state.withLock { state -> Result<Void, MQTTError>? in
            if state.phase == .stopped || state.phase == .stopping {
                return .failure(MQTTError(code: .shutDown, message: "client disconnected"))
            }
            guard !state.connected else {
                // From here until the continuation is registered, on_publish keeps early acks.
                if awaited { state.registeringPublishes += 1 }
                return nil
            }
            guard state.outbox.count < Self.outboxLimit else {
                return .failure(MQTTError(code: .library(MOSQ_ERR_NOMEM.rawValue),
                                          message: "not connected and \(Self.outboxLimit) messages already wait to be sent"))
            }
            state.outbox.append(outgoing)
            outstandingCount.store(state.outstandingPublishes, ordering: .relaxed)
            return .success(())
        }
        switch queued {
        case .failure(let error): outgoing.continuation?.resume(returning: .failure(error))
        case .success: return
        case nil: break
        }
        var mid: Int32 = 0
        var failure: MQTTError?
        do throws(MQTTError) {
            mid = try publishNow(topic: outgoing.topic, payload: outgoing.payload, qos: outgoing.qos, retain: outgoing.retain)
        } catch {
            failure = error
        }
        guard awaited else {
            if failure?.code == .library(MOSQ_ERR_NO_CONN.rawValue) {
                // The connection dropped between the check and the call: the outbox takes it.
                state.withLock { $0.connected = false }
                send(outgoing)
            }
            return
        }
        let acknowledged = state.withLock { state -> Result<Void, MQTTError>? in
            defer {
                state.registeringPublishes -= 1
                // Acks nobody is about to collect belong to fire-and-forget publishes: drop
                // them, or a recycled message id could complete a later publish too early.
                if state.registeringPublishes == 0 { state.earlyPublishAcks.removeAll(keepingCapacity: true) }
            }
            if failure != nil { return nil }
            if let early = state.earlyPublishAcks.removeValue(forKey: mid) { return early }
            state.pendingPublishes[mid] = outgoing.continuation
            return nil
        }
        if let failure {
            if failure.code == .library(MOSQ_ERR_NO_CONN.rawValue) {
                state.withLock { $0.connected = false }
                send(outgoing)
            } else {
                outgoing.continuation?.resume(returning: .failure(failure))
            }
        } else if let acknowledged {
            outgoing.continuation?.resume(returning: acknowledged)
        }
    }

    /// QoS 1 messages kept while disconnected, at most.
    static let outboxLimit = 100_000

    /// Queues a publish without waiting, in call order with every other `post`: for a single
    /// task that must publish many messages in a fixed order (an event sequence) at full speed.
    /// QoS 1 messages are kept while disconnected and sent after the reconnect; QoS 0
    /// messages are dropped while disconnected.
    /// - Returns: false when the message was dropped.
    @discardableResult
    public func post(topic: String, payload: [UInt8], qos: MQTTQoS = .atMostOnce, retain: Bool = false) -> Bool {
        if qos == .atMostOnce {
            return (try? publishNow(topic: topic, payload: payload, qos: qos, retain: retain)) != nil
        }
        send(OutgoingPublish(topic: topic, payload: payload, qos: qos, retain: retain, continuation: nil))
        return true
    }

    /// Publishes UTF-8 text.
    public func publish(topic: String, string: String, qos: MQTTQoS = .atMostOnce, retain: Bool = false)
        async throws(MQTTError)
    {
        try await publish(topic: topic, payload: Array(string.utf8), qos: qos, retain: retain)
    }

    @discardableResult
    func publishNow(topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool) throws(MQTTError) -> Int32 {
        var mid: Int32 = 0
        func call() -> Int32 {
            payload.withUnsafeBytes { bytes in
                mosquitto_publish_v5(handle.pointer, &mid, topic, Int32(bytes.count), bytes.baseAddress,
                                     qos.rawValue, retain, nil)
            }
        }
        let rc: Int32
        if qos == .atMostOnce {
            rc = call()
            if rc == MOSQ_ERR_SUCCESS.rawValue { state.withLock { $0.statistics.messagesOut += 1 } }
        } else {
            // Under the lock that on_publish takes, so the acknowledgement cannot be handled
            // before its message id is recorded. libmosquitto's publish takes only its message
            // and packet mutexes, which the network thread never holds while calling back.
            rc = state.withLock { state in
                let rc = call()
                if rc == MOSQ_ERR_SUCCESS.rawValue {
                    state.statistics.messagesOut += 1
                    state.unacknowledged.insert(mid)
                    outstandingCount.store(state.outstandingPublishes, ordering: .relaxed)
                }
                return rc
            }
        }
        guard rc == MOSQ_ERR_SUCCESS.rawValue else {
            throw MQTTError(library: rc, context: "publish to '\(topic)'")
        }
        return mid
    }

    /// QoS 1/2 messages published and not yet acknowledged by the broker, including those
    /// kept while disconnected: how far the broker is behind this client. libmosquitto
    /// queues without bound, so a caller producing faster than the broker acknowledges
    /// should slow down or shed when this grows (the bridge sheds telemetry).
    public var outstandingPublishes: Int { outstandingCount.load(ordering: .relaxed) }

    // MARK: - Subscribe

    /// Subscribes to a topic filter, now if connected (waiting for the SUBACK) and again after
    /// every reconnect. Throws when the broker refuses it.
    public func subscribe(_ filter: String, qos: MQTTQoS = .atLeastOnce) async throws(MQTTError) {
        let connected = state.withLock { state -> Bool in
            if let index = state.subscriptions.firstIndex(where: { $0.filter == filter }) {
                state.subscriptions[index].qos = qos
            } else {
                state.subscriptions.append((filter, qos))
            }
            return state.connected
        }
        guard connected else { return }
        let result: Result<Void, MQTTError> = await withCheckedContinuation { continuation in
            var mid: Int32 = 0
            let rc = mosquitto_subscribe_v5(handle.pointer, &mid, filter, qos.rawValue, 0, nil)
            guard rc == MOSQ_ERR_SUCCESS.rawValue else {
                continuation.resume(returning: .failure(MQTTError(library: rc, context: "subscribe to '\(filter)'")))
                return
            }
            let early = state.withLock { state -> Result<Void, MQTTError>? in
                if let early = state.earlySubscribeAcks.removeValue(forKey: mid) { return early }
                state.pendingSubscribes[mid] = continuation
                return nil
            }
            if let early { continuation.resume(returning: early) }
        }
        if case .failure(let error) = result {
            state.withLock { $0.subscriptions.removeAll { $0.filter == filter } }
            throw error
        }
    }

    /// Forgets a subscription and unsubscribes now if connected.
    public func unsubscribe(_ filter: String) async throws(MQTTError) {
        let connected = state.withLock { state -> Bool in
            state.subscriptions.removeAll { $0.filter == filter }
            return state.connected
        }
        guard connected else { return }
        let rc = mosquitto_unsubscribe_v5(handle.pointer, nil, filter, nil)
        guard rc == MOSQ_ERR_SUCCESS.rawValue else {
            throw MQTTError(library: rc, context: "unsubscribe from '\(filter)'")
        }
    }

    /// The filters that will be restored after a reconnect.
    public var subscriptions: [String] { state.withLock { $0.subscriptions.map(\.filter) } }

    // MARK: - Internals

    /// Fails every pending continuation (called once the network thread has stopped).
    func failEverythingPending() {
        let error = MQTTError(code: .shutDown, message: "client disconnected")
        let (publishes, subscribes, firstConnect) = state.withLock { state in
            defer {
                state.pendingPublishes.removeAll()
                state.outbox.removeAll()
                state.pendingSubscribes.removeAll()
                state.firstConnect = nil
                state.unacknowledged.removeAll()
                outstandingCount.store(0, ordering: .relaxed)
            }
            return (Array(state.pendingPublishes.values) + state.outbox.compactMap(\.continuation),
                    Array(state.pendingSubscribes.values), state.firstConnect)
        }
        publishes.forEach { $0.resume(returning: .failure(error)) }
        subscribes.forEach { $0.resume(returning: .failure(error)) }
        firstConnect?.resume(returning: .failure(error))
        messageContinuation.finish()
        stateContinuation.finish()
    }

    private func applyConfiguration() throws(MQTTError) {
        let mosq = handle.pointer
        let version = configuration.protocolVersion == .v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311
        try check(mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, Int32(version)), "protocol version")
        try check(mosquitto_threaded_set(mosq, true), "threaded mode")
        _ = mosquitto_int_option(mosq, MOSQ_OPT_TCP_NODELAY, 1)
        if configuration.username != nil || configuration.password != nil {
            try check(mosquitto_username_pw_set(mosq, configuration.username, configuration.password), "username/password")
        }
        if let tls = configuration.tls {
            for path in [tls.caFile, tls.certificateFile, tls.keyFile].compactMap({ $0 })
            where !FileManager.default.isReadableFile(atPath: path) {
                throw MQTTError(code: .invalidConfiguration, message: "TLS file '\(path)' is not readable")
            }
            // Without a CA of its own the server is verified against the system's trust store.
            let caPath = tls.caPath ?? (tls.caFile == nil ? "/etc/ssl/certs" : nil)
            try check(mosquitto_tls_set(mosq, tls.caFile, caPath, tls.certificateFile, tls.keyFile, nil), "TLS")
            try check(mosquitto_tls_insecure_set(mosq, !tls.verifyHostname), "TLS hostname verification")
        }
        if let will = configuration.will {
            let rc = will.payload.withUnsafeBytes { bytes in
                mosquitto_will_set_v5(mosq, will.topic, Int32(bytes.count), bytes.baseAddress, will.qos.rawValue, will.retain, nil)
            }
            try check(rc, "will")
        }
    }

    private func check(_ rc: Int32, _ what: String) throws(MQTTError) {
        guard rc == MOSQ_ERR_SUCCESS.rawValue else {
            throw MQTTError(code: .invalidConfiguration, message: "\(what): \(String(cString: mosquitto_strerror(rc)))")
        }
    }
}

/// Counters the client keeps for the bridge's health topic.
public struct MQTTStatistics: Sendable, Hashable {
    public var messagesIn = 0
    public var messagesOut = 0
    /// Incoming messages dropped because the message stream was full (`messageBufferLimit`).
    public var messagesDropped = 0
    /// Successful connections after the first one.
    public var reconnects = 0
    public var failedAttempts = 0

    public init() {}
}

/// The raw libmosquitto handle.
///
/// `@unchecked Sendable` because libmosquitto in threaded mode (`mosquitto_threaded_set`)
/// guards publish, subscribe and disconnect with its own mutexes, and everything else
/// (`mosquitto_loop`, connect) is only ever called from the one network thread.
struct MosquittoHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}
