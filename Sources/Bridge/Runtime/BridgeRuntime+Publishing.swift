import AccessoryKit
import JSON
import MQTT
import Storage

extension BridgeRuntime {
    /// Commits the storage writes among `outputs`, then publishes the rest in order.
    /// - Returns: the storage error, when the writes could not be committed (nothing was
    ///   published then: the caller decides what the failure means).
    @discardableResult
    func commitAndPublish(_ outputs: [EngineOutput], at now: Timestamp, context: String) -> StorageError? {
        if let error = commit(outputs, context: context) { return error }
        publish(outputs, at: now)
        return nil
    }

    /// Commits the storage writes among `outputs` in one transaction.
    func commit(_ outputs: [EngineOutput], context: String) -> StorageError? {
        let writes = outputs.compactMap { output -> StorageWrite? in
            if case .storage(let write) = output { return write }
            return nil
        }
        guard !writes.isEmpty else { return nil }
        do {
            try store.apply(writes)
            return nil
        } catch {
            counters.storageFailures += 1
            counters.errors += 1
            logger.error("storage (\(context)): \(error.message)")
            return error
        }
    }

    func publish(_ outputs: [EngineOutput], at now: Timestamp) {
        for output in outputs { publish(output, at: now) }
    }

    func publish(_ output: EngineOutput, at now: Timestamp) {
        switch output {
        case .event(let event):
            client.post(topic: topics.bridgeEvent, payload: payloads.event(event, at: now).bytes, qos: .atLeastOnce)
            if event.type == .activated || event.type == .invalidated { publishInfo() }
        case .pickerChanged(let picker):
            publishRetained(topics.bridgePicker, payloads.picker(picker))
        case .accessoryChanged(let status):
            productOfAccessory[status.accessory.id] = status.accessory.product
            statePublishedAt[status.accessory.id] = now
            client.post(topic: topics.accessory(status.accessory.id), payload: statusBytes(status), qos: .atLeastOnce, retain: true)
            if publishedAvailability[status.accessory.id] == nil {
                publishAvailability(status.accessory.id, status.available)
            }
            accessoriesDirty = true
            // Discovery only when what Home Assistant shows changed (name, capabilities,
            // battery parts), not on every RSSI or placement change.
            if let device = homeAssistant?.changed(status) { publishRetained(device.topic, device.payload) }
        case .accessoryRemoved(let id):
            productOfAccessory[id] = nil
            statePublishedAt[id] = nil
            publishedAvailability[id] = nil
            // An empty retained payload clears the topic on the broker.
            client.post(topic: topics.accessory(id), payload: [], qos: .atLeastOnce, retain: true)
            client.post(topic: topics.availability(id), payload: [], qos: .atLeastOnce, retain: true)
            if let discoveryTopic = homeAssistant?.removed(id) {
                client.post(topic: discoveryTopic, payload: [], qos: .atLeastOnce, retain: true)
            }
            accessoriesDirty = true
        case .availabilityChanged(let id, let available):
            publishAvailability(id, available)
        case .registrationChanged:
            // The accessory's state object (accessoryChanged) carries the registration.
            accessoriesDirty = true
        case .routeChanged(let change):
            let name = change.target.accessory.flatMap { engine.status(of: $0)?.accessory.displayName }
            let payload = payloads.route(change, accessoryName: name, at: now)
            publishedRoutes[change.source] = payload
            publishRetained(topics.sourceRoute(change.source), payload)
        case .decision(let decision):
            counters.decisions += 1
            client.post(topic: topics.decision(decision.accessory), payload: payloads.decision(decision, at: now).bytes, qos: .atLeastOnce)
        case .accessoryError(let id, let error):
            counters.errors += 1
            client.post(topic: topics.error(id), payload: payloads.accessoryError(error, at: now).bytes, qos: .atLeastOnce)
        case .storage:
            break
        }
    }

    func publishAvailability(_ id: AccessoryKit.BluetoothAddress, _ available: Bool) {
        publishedAvailability[id] = available
        publishRetained(topics.availability(id), payloads.availability(available))
    }

    /// Republishes a known accessory's state when telemetry refreshed it without a change
    /// and the last publication is older than ``BridgeRuntime/stateRefreshMilliseconds``.
    func refreshState(of id: AccessoryKit.BluetoothAddress, at now: Timestamp) {
        guard productOfAccessory[id] != nil else { return }
        if let last = statePublishedAt[id], now.milliseconds(since: last) < Self.stateRefreshMilliseconds { return }
        guard let status = engine.status(of: id) else { return }
        statePublishedAt[id] = now
        client.post(topic: topics.accessory(id), payload: statusBytes(status), qos: .atLeastOnce, retain: true)
    }

    func publishRetained(_ topic: String, _ payload: JSONValue) {
        client.post(topic: topic, payload: payload.bytes, qos: .atLeastOnce, retain: true)
    }

    /// Every retained topic, after each (re)connect: a broker restart loses nothing a
    /// subscriber relies on, and no state stays stuck `offline`.
    func publishEverything() {
        let now = clock()
        publishRetained(topics.bridgeState, ["state": "online"])
        publishInfo()
        publishHealth()
        publishRetained(topics.bridgeGateways, gateways.payload)
        publishRetained(topics.bridgePicker, payloads.picker(engine.picker))
        for status in engine.statuses {
            statePublishedAt[status.accessory.id] = now
            client.post(topic: topics.accessory(status.accessory.id), payload: statusBytes(status), qos: .atLeastOnce, retain: true)
            publishAvailability(status.accessory.id, status.available)
        }
        publishAccessoryList()
        if var tracker = homeAssistant {
            for device in tracker.everything(engine.statuses) { publishRetained(device.topic, device.payload) }
            homeAssistant = tracker
        }
        // Routes restored from storage have not been published by this process yet: `startup`.
        for (source, accessory) in engine.routes where publishedRoutes[source] == nil {
            let change = RouteChange(source: source, previous: .fallback, target: .accessory(accessory), reason: .startup)
            let name = engine.status(of: accessory)?.accessory.displayName
            publishedRoutes[source] = payloads.route(change, accessoryName: name, at: now)
        }
        for (source, payload) in publishedRoutes.sorted(by: { $0.key < $1.key }) {
            publishRetained(topics.sourceRoute(source), payload)
        }
    }

    func publishAccessoryList() {
        accessoriesDirty = false
        let statuses = engine.statuses
        // `[` + each state object + `]`, as JSONValue writes an array. Serializing every
        // object again on each change stalled the loop (about 40 ms per tick at 1,000
        // accessories), so each object's text is reused while its state is unchanged.
        var list: [UInt8] = [UInt8(ascii: "[")]
        for (index, status) in statuses.enumerated() {
            if index > 0 { list.append(UInt8(ascii: ",")) }
            list.append(contentsOf: statusBytes(status))
        }
        list.append(UInt8(ascii: "]"))
        if serializedStatuses.count > statuses.count {
            let current = Set(statuses.map(\.accessory.id))
            serializedStatuses = serializedStatuses.filter { current.contains($0.key) }
        }
        client.post(topic: topics.bridgeAccessories, payload: list, qos: .atLeastOnce, retain: true)
    }

    /// An accessory's state object as JSON, from the cache when its state is unchanged.
    /// The cache keeps a 64-bit hash of the state, not a copy: a copy per accessory cost
    /// 27 MB of RSS at 10,000 accessories.
    func statusBytes(_ status: AccessoryStatus) -> [UInt8] {
        let hash = status.hashValue
        if let cached = serializedStatuses[status.accessory.id], cached.hash == hash { return cached.bytes }
        let bytes = payloads.status(status).bytes
        serializedStatuses[status.accessory.id] = (hash, bytes)
        return bytes
    }

    var healthPayload: JSONValue {
        let statistics = client.statistics
        let now = clock()
        return [
            "uptime_s": .int(Int(now.milliseconds(since: startedAt) / 1000)),
            "rss_bytes": .int(ResidentMemory.bytes()),
            "messages_in": .int(statistics.messagesIn),
            "messages_out": .int(statistics.messagesOut),
            // Dropped by the backlog, refused by a parser, or dropped by the MQTT client's
            // full message stream (messageBufferLimit).
            "telemetry_rejected": .int(counters.telemetryRejected + statistics.messagesDropped),
            "decisions": .int(counters.decisions),
            "errors": .int(counters.errors),
            "mqtt_reconnects": .int(statistics.reconnects),
            "accessories": .int(engine.accessories.count),
            "registered": .int(registeredCount),
            "at": .string(ISO8601.string(now)),
        ]
    }

    /// Registrations of accessories the session still knows. The engine keeps a removed
    /// accessory's registration (invalidated) in memory, but it is gone from storage, so it
    /// must not be counted: the number would change across a restart.
    var registeredCount: Int {
        engine.registry.registrations.keys.count { engine.status(of: $0) != nil }
    }

    func publishHealth() {
        publishRetained(topics.bridgeHealth, healthPayload)
    }

    func publishInfo() {
        publishRetained(topics.bridgeInfo, [
            "version": .string(BridgeModule.version),
            "base_topic": .string(topics.base),
            "session": .string(engine.session.state == .invalidated ? "invalidated" : "activated"),
            "products": .array(configuration.products.map { .string($0.name) }),
            "accessories": .int(engine.accessories.count),
            "registered": .int(registeredCount),
            "gateways": .int(configuration.gateways.count),
            "config": configuration.summary,
        ])
    }
}
