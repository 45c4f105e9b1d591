import CMosquitto

extension MQTTClient {
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
}
