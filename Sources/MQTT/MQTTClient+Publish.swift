import CMosquitto

extension MQTTClient {
    /// Queues a message without waiting, in call order with every other `enqueue`: for a
    /// single task that must publish many messages in a fixed order (an event sequence) at
    /// full speed. QoS 1/2 messages enqueued while disconnected are kept and sent after the
    /// reconnect; QoS 0 messages are dropped while disconnected.
    /// - Returns: false when the message was dropped.
    @discardableResult
    public func enqueue(topic: String, payload: [UInt8], qos: MQTTQoS = .atMostOnce, retain: Bool = false) -> Bool {
        if qos == .atMostOnce {
            return (try? mosquittoPublish(topic: topic, payload: payload, qos: qos, retain: retain)) != nil
        }
        sendOrKeep(OutgoingPublish(topic: topic, payload: payload, qos: qos, retain: retain, continuation: nil))
        return true
    }

    /// Publishes a message and waits for the delivery guarantee its QoS gives: for QoS 0 it
    /// returns once the message is queued for the socket; for QoS 1 and 2 it returns when the
    /// broker has acknowledged it, so a caller can treat the message as delivered. QoS 1/2
    /// messages published while disconnected are kept, sent after the reconnect, and this
    /// returns when that acknowledgement arrives.
    /// - Throws: the library's error (QoS 0, e.g. not connected), the broker's refusal
    ///   (``MQTTError/Code/publishRefused(_:)``), or ``MQTTError/Code/shutDown`` when the
    ///   client is disconnected by its owner first.
    public func publishAcknowledged(
        topic: String, payload: [UInt8], qos: MQTTQoS = .atMostOnce, retain: Bool = false
    )
        async throws(MQTTError)
    {
        if qos == .atMostOnce {
            try mosquittoPublish(topic: topic, payload: payload, qos: qos, retain: retain)
            return
        }
        let result: Result<Void, MQTTError> = await withCheckedContinuation { continuation in
            sendOrKeep(OutgoingPublish(topic: topic, payload: payload, qos: qos, retain: retain, continuation: continuation))
        }
        try result.get()
    }

    /// ``publishAcknowledged(topic:payload:qos:retain:)`` for UTF-8 text.
    public func publishAcknowledged(
        topic: String, string: String, qos: MQTTQoS = .atMostOnce, retain: Bool = false
    )
        async throws(MQTTError)
    {
        try await publishAcknowledged(topic: topic, payload: Array(string.utf8), qos: qos, retain: retain)
    }

    /// QoS 1/2 messages published and not yet acknowledged by the broker, including those
    /// kept while disconnected: how far the broker is behind this client. libmosquitto
    /// queues without bound, so a caller producing faster than the broker acknowledges
    /// should slow down or shed when this grows (the bridge sheds telemetry).
    public var outstandingPublishes: Int { outstandingCount.load(ordering: .relaxed) }

    /// QoS 1 messages kept while disconnected, at most.
    static let outboxLimit = 100_000

    /// Hands a QoS 1/2 publish to libmosquitto now, or keeps it in the outbox while there is
    /// no connection; then registers its continuation (if any) for the acknowledgement.
    ///
    /// libmosquitto refuses publishes while disconnected (`MOSQ_ERR_NO_CONN`), so the client
    /// keeps them itself and sends them from on_connect. The outbox is checked and filled
    /// under the same lock that on_connect uses to flush it, so nothing can slip between.
    func sendOrKeep(_ outgoing: OutgoingPublish) {
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
                return .failure(
                    MQTTError(
                        code: .library(MOSQ_ERR_NOMEM.rawValue),
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
            mid = try mosquittoPublish(
                topic: outgoing.topic, payload: outgoing.payload, qos: outgoing.qos,
                retain: outgoing.retain)
        } catch {
            failure = error
        }
        guard awaited else {
            if failure?.code == .library(MOSQ_ERR_NO_CONN.rawValue) {
                // The connection dropped between the check and the call: the outbox takes it.
                state.withLock { $0.connected = false }
                sendOrKeep(outgoing)
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
                sendOrKeep(outgoing)
            } else {
                outgoing.continuation?.resume(returning: .failure(failure))
            }
        } else if let acknowledged {
            outgoing.continuation?.resume(returning: acknowledged)
        }
    }

    /// Calls `mosquitto_publish_v5` and counts the message; for QoS 1/2 records its message
    /// id as unacknowledged.
    /// - Returns: the message id libmosquitto gave the publish.
    @discardableResult
    func mosquittoPublish(topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool) throws(MQTTError) -> Int32 {
        var mid: Int32 = 0
        func call() -> Int32 {
            payload.withUnsafeBytes { bytes in
                mosquitto_publish_v5(
                    handle.pointer, &mid, topic, Int32(bytes.count), bytes.baseAddress,
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
}
