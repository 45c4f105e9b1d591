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

    fileprivate func connectionAcknowledged(code: Int32) {
        guard code == 0 else {
            let refusal = MQTTError(connackCode: code, protocolVersion: configuration.protocolVersion)
            state.withLock { $0.refusal = refusal }
            return
        }
        let (subscriptions, firstConnect, outbox) = state.withLock { state in
            state.connected = true
            let outbox = state.outbox
            state.outbox.removeAll()
            outstandingCount.store(state.outstandingPublishes, ordering: .relaxed)
            if state.everConnected { state.statistics.reconnects += 1 }
            state.everConnected = true
            let firstConnect = state.firstConnect
            state.firstConnect = nil
            return (state.subscriptions, firstConnect, outbox)
        }
        // Restore subscriptions before anyone is told we are connected, so that a consumer
        // reacting to `.connected` never misses messages for a filter it already asked for.
        for subscription in subscriptions {
            _ = mosquitto_subscribe_v5(handle.pointer, nil, subscription.filter, subscription.qos.rawValue, 0, nil)
        }
        // What was published while disconnected goes out now, in order.
        outbox.forEach(sendOrKeep)
        stateContinuation.yield(.connected)
        firstConnect?.resume(returning: .success(()))
    }

    fileprivate func connectionLost() {
        state.withLock { $0.connected = false }
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
            // QoS 0 publishes call back here too (once written); their ids are not recorded
            // (libmosquitto reuses ids only after 65,535 more publishes).
            if state.unacknowledged.remove(mid) != nil {
                outstandingCount.store(state.outstandingPublishes, ordering: .relaxed)
            }
            if let continuation = state.pendingPublishes.removeValue(forKey: mid) { return continuation }
            // An awaited publisher may not have registered yet: keep the ack for it. With no
            // publisher in that window, the ack is a QoS 0 or fire-and-forget one: forget it.
            if state.registeringPublishes > 0 { state.earlyPublishAcks[mid] = result }
            return nil
        }
        continuation?.resume(returning: result)
    }

    fileprivate func subscribeAcknowledged(mid: Int32, grantedQoS: [Int32]) {
        let refused = grantedQoS.first { $0 >= 0x80 }
        let result: Result<Void, MQTTError> =
            refused.map {
                .failure(MQTTError(code: .subscriptionRefused($0), message: "subscription refused by the broker (reason \($0))"))
            } ?? .success(())
        let continuation = state.withLock { state -> CheckedContinuation<Result<Void, MQTTError>, Never>? in
            if let continuation = state.pendingSubscribes.removeValue(forKey: mid) { return continuation }
            if state.earlySubscribeAcks.count < 1024 { state.earlySubscribeAcks[mid] = result }
            return nil
        }
        continuation?.resume(returning: result)
    }

    fileprivate func received(_ message: MQTTMessage) {
        state.withLock { $0.statistics.messagesIn += 1 }
        if case .dropped = messageContinuation.yield(message) {
            // The stream is full (messageBufferLimit): the oldest message was dropped.
            state.withLock { $0.statistics.messagesDropped += 1 }
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
            qos: MQTTQoS(rawValue: raw.qos) ?? .atMostOnce, retain: raw.retain))
}
