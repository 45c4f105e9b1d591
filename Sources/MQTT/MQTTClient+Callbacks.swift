import CMosquitto

// libmosquitto calls these on the network thread. Each recovers the client from the
// user-data pointer, copies what it needs, and returns at once: no blocking, no awaiting.

extension MQTTClient {
    func installCallbacks() {
        let mosq = handle.pointer
        mosquitto_connect_v5_callback_set(mosq, onConnect)
        mosquitto_disconnect_v5_callback_set(mosq, onDisconnect)
        mosquitto_publish_v5_callback_set(mosq, onPublish)
        mosquitto_subscribe_v5_callback_set(mosq, onSubscribe)
        mosquitto_message_v5_callback_set(mosq, onMessage)
    }

    fileprivate static func from(_ userdata: UnsafeMutableRawPointer?) -> MQTTClient? {
        guard let userdata else { return nil }
        return Unmanaged<MQTTClient>.fromOpaque(userdata).takeUnretainedValue()
    }

    /// Only notes an accepted CONNACK: libmosquitto calls this *before* it re-sends the
    /// publishes that were in flight when the link dropped (handle__connack:
    /// connack_callback, then message__retry_check), so anything sent from here would
    /// overtake them. The network thread restores the connection once the call returns
    /// (``MQTTClient/advanceConnection()``).
    fileprivate func connectionAcknowledged(code: Int32) {
        guard code == 0 else {
            let refusal = MQTTError(connackCode: code, protocolVersion: configuration.protocolVersion)
            state.withLock { $0.refusal = refusal }
            return
        }
        state.withLock { state in
            state.connackAccepted = true
            if state.everConnected { state.statistics.reconnects += 1 }
            state.everConnected = true
        }
    }

    fileprivate func connectionLost() {
        linkLostHookForTesting.withLock { $0 }?()
        state.withLock { $0.dropLink() }
    }

    fileprivate func publishFinished(mid: Int32, reasonCode: Int32) {
        let result: Result<Void, MQTTError> =
            reasonCode >= 0x80
            ? .failure(
                MQTTError(
                    code: .publishRefused(reasonCode),
                    message: "publish refused by the broker: \(String(cString: mosquitto_reason_string(reasonCode)))"))
            : .success(())
        let continuation = state.withLock { state -> CheckedContinuation<Result<Void, MQTTError>, Never>? in
            // QoS 0 publishes call back here too (once written); their ids are not recorded.
            guard state.unacknowledged.remove(mid) != nil else { return nil }
            outstandingCount.store(state.outstandingPublishes, ordering: .relaxed)
            return state.pendingPublishes.removeValue(forKey: mid)
        }
        continuation?.resume(returning: result)
    }

    /// A SUBACK. Refused for a ``subscribe(_:qos:)`` call: that call throws and the filter is
    /// forgotten. Refused for a filter restored after a reconnect: the connection is given up
    /// (``advanceConnection()``), since staying connected would mean staying deaf to it.
    fileprivate func subscribeAcknowledged(mid: Int32, grantedQoS: [Int32]) {
        let refused = grantedQoS.first { $0 >= 0x80 }
        let waiters = state.withLock { state -> [CheckedContinuation<Result<Void, MQTTError>, Never>] in
            guard let filter = state.pendingSubscribes.removeValue(forKey: mid) else { return [] }
            let waiters = state.subscribeWaiters.removeValue(forKey: filter) ?? []
            if let refused {
                let error = MQTTError(
                    code: .subscriptionRefused(refused),
                    message: "subscription to '\(filter)' refused by the broker: \(String(cString: mosquitto_reason_string(refused)))")
                if waiters.isEmpty {
                    state.refusal = state.refusal ?? error
                } else {
                    state.subscriptions.removeAll { $0.filter == filter }
                    state.sentFilters.remove(filter)
                    waiters.forEach { $0.resume(returning: .failure(error)) }
                    return []
                }
            }
            return waiters
        }
        waiters.forEach { $0.resume(returning: .success(())) }
    }

    /// - Parameter topic: the message's topic as libmosquitto gave it (valid during the
    ///   callback): matched against the priority filters only when the bound is reached, the
    ///   one moment the answer matters.
    fileprivate func received(_ message: MQTTMessage, topic: UnsafePointer<CChar>) {
        messagesInCount.add(1, ordering: .relaxed)
        if let limit = configuration.messageBufferLimit {
            guard waitingMessages.load(ordering: .relaxed) < max(1, limit) || isPriority(topic) else {
                state.withLock { $0.statistics.messagesDropped += 1 }
                return
            }
            waitingMessages.add(1, ordering: .relaxed)
        }
        // The network thread wakes the consumer once it has read what is at hand
        // (MQTTClient.superviseConnection).
        incoming.append(message, wake: false)
    }

    /// Whether `topic` matches one of ``MQTTConfiguration/priorityFilters``; on the C strings,
    /// the filters converted once.
    private func isPriority(_ topic: UnsafePointer<CChar>) -> Bool {
        priorityFilters.contains { filter in
            var matches = false
            let rc = filter.withUnsafeBufferPointer { mosquitto_topic_matches_sub($0.baseAddress, topic, &matches) }
            return rc == MOSQ_ERR_SUCCESS.rawValue && matches
        }
    }
}

private func onConnect(
    _: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ rc: Int32, _: Int32,
    _: OpaquePointer?
) {
    MQTTClient.from(userdata)?.connectionAcknowledged(code: rc)
}

private func onDisconnect(_: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _: Int32, _: OpaquePointer?) {
    MQTTClient.from(userdata)?.connectionLost()
}

private func onPublish(
    _: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ mid: Int32, _ reasonCode: Int32,
    _: OpaquePointer?
) {
    MQTTClient.from(userdata)?.publishFinished(mid: mid, reasonCode: reasonCode)
}

private func onSubscribe(
    _: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ mid: Int32, _ count: Int32,
    _ granted: UnsafePointer<Int32>?, _: OpaquePointer?
) {
    let grantedQoS = granted.map { Array(UnsafeBufferPointer(start: $0, count: Int(count))) } ?? []
    MQTTClient.from(userdata)?.subscribeAcknowledged(mid: mid, grantedQoS: grantedQoS)
}

private func onMessage(
    _: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?,
    _ message: UnsafePointer<mosquitto_message>?, _: OpaquePointer?
) {
    guard let client = MQTTClient.from(userdata), let raw = message?.pointee, let topic = raw.topic else { return }
    // libmosquitto frees the message when this returns: copy topic and payload now.
    let payload = raw.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(raw.payloadlen))) } ?? []
    client.received(
        MQTTMessage(
            topic: String(cString: topic), payload: payload,
            qos: MQTTQoS(rawValue: raw.qos) ?? .atMostOnce, retain: raw.retain),
        topic: topic)
}
