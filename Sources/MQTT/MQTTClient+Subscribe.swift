import CMosquitto

extension MQTTClient {
    /// Subscribes to a topic filter, now if connected (waiting for the SUBACK) and again after
    /// every reconnect. Throws when the broker refuses it now.
    ///
    /// While there is no connection it returns at once: the filter is sent with the others
    /// when the next connection is accepted, and a refusal then is the connection's failure
    /// (reported on ``connectionStates``, retried with backoff), never a silent deafness.
    public func subscribe(_ filter: String, qos: MQTTQoS = .atLeastOnce) async throws(MQTTError) {
        let result: Result<Void, MQTTError> = await withCheckedContinuation { continuation in
            let immediate = state.withLock { state -> Result<Void, MQTTError>? in
                if state.phase == .stopped || state.phase == .stopping {
                    return .failure(MQTTError(code: .shutDown, message: "client disconnected"))
                }
                if let index = state.subscriptions.firstIndex(where: { $0.filter == filter }) {
                    if state.subscriptions[index].qos != qos { state.sentFilters.remove(filter) }
                    state.subscriptions[index].qos = qos
                } else {
                    state.subscriptions.append((filter, qos))
                }
                guard state.link != .down else { return .success(()) }
                state.subscribeWaiters[filter, default: []].append(continuation)
                sendSubscriptions(&state)
                return nil
            }
            if let immediate { continuation.resume(returning: immediate) }
        }
        try result.get()
    }

    /// Forgets a subscription and unsubscribes now if connected.
    public func unsubscribe(_ filter: String) async throws(MQTTError) {
        let rc = state.withLock { state -> Int32 in
            state.subscriptions.removeAll { $0.filter == filter }
            state.sentFilters.remove(filter)
            guard state.link != .down else { return MOSQ_ERR_SUCCESS.rawValue }
            // Its UNSUBACK is not awaited, but it takes a message id all the same.
            var id: Int32 = 0
            let rc = mosquitto_unsubscribe_v5(handle.pointer, &id, filter, nil)
            state.took(id)
            return rc
        }
        guard rc == MOSQ_ERR_SUCCESS.rawValue else {
            throw MQTTError(library: rc, context: "unsubscribe from '\(filter)'")
        }
    }

    /// The filters that will be restored after a reconnect.
    public var subscriptions: [String] { state.withLock { $0.subscriptions.map(\.filter) } }

    /// Sends SUBSCRIBE for every filter not yet subscribed on this connection, as far as
    /// message ids allow (the rest go when ids free up). Under the lock that on_subscribe
    /// takes, so every SUBACK finds its filter recorded.
    func sendSubscriptions(_ state: inout ClientState) {
        for (filter, qos) in state.subscriptions where !state.sentFilters.contains(filter) {
            guard state.nextIDIsFree else { return }
            var id: Int32 = 0
            let rc = mosquitto_subscribe_v5(handle.pointer, &id, filter, qos.rawValue, 0, nil)
            state.took(id)
            if rc == MOSQ_ERR_NO_CONN.rawValue { return } // The link is going down: sent on the next one.
            guard rc == MOSQ_ERR_SUCCESS.rawValue else {
                // A filter libmosquitto refuses (malformed, too long) never works: forget it.
                // (Resuming under the lock only schedules the waiting task.)
                let error = MQTTError(library: rc, context: "subscribe to '\(filter)'")
                state.subscriptions.removeAll { $0.filter == filter }
                state.subscribeWaiters.removeValue(forKey: filter)?.forEach { $0.resume(returning: .failure(error)) }
                continue
            }
            state.sentFilters.insert(filter)
            state.pendingSubscribes[id] = filter
        }
    }
}
