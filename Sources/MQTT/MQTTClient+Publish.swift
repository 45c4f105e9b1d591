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
            return (try? publishAtMostOnce(topic: topic, payload: payload, retain: retain)) != nil
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
            try publishAtMostOnce(topic: topic, payload: payload, retain: retain)
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

    /// QoS 1 messages not sent yet, at most.
    static let outboxLimit = 100_000

    /// Hands a QoS 1/2 publish to libmosquitto now, or keeps it in the outbox.
    ///
    /// Now only when the connection is ready, nothing older waits in the outbox (order), and
    /// the next message id is free. Everything happens under the lock that on_publish takes,
    /// so an acknowledgement always finds its publisher registered, and the network thread
    /// flushing the outbox (``sendKept()``) cannot interleave with a new publish.
    func sendOrKeep(_ outgoing: OutgoingPublish) {
        let failure = state.withLock { state -> MQTTError? in
            if state.phase == .stopped || state.phase == .stopping {
                return MQTTError(code: .shutDown, message: "client disconnected")
            }
            if state.link == .ready && state.outbox.isEmpty && state.nextIDIsFree {
                return send(outgoing, &state)
            }
            guard state.outbox.count < Self.outboxLimit else {
                return MQTTError(
                    code: .library(MOSQ_ERR_NOMEM.rawValue),
                    message: "\(Self.outboxLimit) messages already wait to be sent")
            }
            state.outbox.append(outgoing)
            outstandingCount.store(state.outstandingPublishes, ordering: .relaxed)
            return nil
        }
        if let failure { outgoing.continuation?.resume(returning: .failure(failure)) }
    }

    /// Sends what waits in the outbox, oldest first, as far as message ids allow. On the
    /// network thread: after the reconnect (once libmosquitto has re-sent what was in flight,
    /// so that an older retained state cannot overwrite a newer one) and as acknowledgements
    /// free ids.
    func sendKept() {
        let failed = state.withLock { state -> [(OutgoingPublish, MQTTError)] in
            guard state.link == .ready, !state.outbox.isEmpty else { return [] }
            var failed: [(OutgoingPublish, MQTTError)] = []
            var sent = 0
            while sent < state.outbox.count && state.nextIDIsFree {
                let outgoing = state.outbox[sent]
                if let error = send(outgoing, &state) { failed.append((outgoing, error)) }
                sent += 1
            }
            state.outbox.removeFirst(sent)
            outstandingCount.store(state.outstandingPublishes, ordering: .relaxed)
            return failed
        }
        for (outgoing, error) in failed { outgoing.continuation?.resume(returning: .failure(error)) }
    }

    /// `mosquitto_publish_v5` for a QoS 1/2 message, under the state lock; records its id as
    /// unacknowledged and registers its publisher.
    ///
    /// `MOSQ_ERR_NO_CONN` (the link dropped a moment ago) counts as sent: libmosquitto 2.0.11
    /// has already queued the message by then (`message__queue` before `send__publish`) and
    /// resends it after the reconnect; keeping it as well would send it twice.
    /// libmosquitto's publish takes only its message and packet mutexes, which the network
    /// thread never holds while calling back into this client.
    /// - Returns: the error when libmosquitto refused the message.
    private func send(_ outgoing: OutgoingPublish, _ state: inout ClientState) -> MQTTError? {
        var id: Int32 = 0
        let rc = outgoing.payload.withUnsafeBytes { bytes in
            mosquitto_publish_v5(
                handle.pointer, &id, outgoing.topic, Int32(bytes.count), bytes.baseAddress, outgoing.qos.rawValue,
                outgoing.retain, nil)
        }
        state.took(id)
        guard rc == MOSQ_ERR_SUCCESS.rawValue || (rc == MOSQ_ERR_NO_CONN.rawValue && id != 0) else {
            return MQTTError(library: rc, context: "publish to '\(outgoing.topic)'")
        }
        state.statistics.messagesOut += 1
        state.unacknowledged.insert(id)
        if let continuation = outgoing.continuation { state.pendingPublishes[id] = continuation }
        outstandingCount.store(state.outstandingPublishes, ordering: .relaxed)
        return nil
    }

    /// A QoS 0 publish: sent now or not at all (never kept). Under the lock, because it takes a
    /// message id too (libmosquitto numbers every publish).
    func publishAtMostOnce(topic: String, payload: [UInt8], retain: Bool) throws(MQTTError) {
        let rc = state.withLock { state -> Int32 in
            guard state.link == .ready else { return MOSQ_ERR_NO_CONN.rawValue }
            guard state.nextIDIsFree else { return MOSQ_ERR_NOMEM.rawValue }
            var id: Int32 = 0
            let rc = payload.withUnsafeBytes { bytes in
                mosquitto_publish_v5(
                    handle.pointer, &id, topic, Int32(bytes.count), bytes.baseAddress, MQTTQoS.atMostOnce.rawValue, retain, nil)
            }
            state.took(id)
            if rc == MOSQ_ERR_SUCCESS.rawValue { state.statistics.messagesOut += 1 }
            return rc
        }
        guard rc == MOSQ_ERR_SUCCESS.rawValue else {
            throw MQTTError(library: rc, context: "publish to '\(topic)'")
        }
    }
}
