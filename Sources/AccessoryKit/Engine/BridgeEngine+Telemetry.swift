extension BridgeEngine {
    // MARK: Sightings (the hot path)

    mutating func observe(_ sighting: AdvertisementSighting, now: Timestamp) {
        guard session.state == .activated else { return }
        let id = sighting.accessoryID
        if let index = records.index(forKey: id) {
            // In-place through the index: one hash per sighting, no copy of the record.
            let (wasAvailable, identityChanged, followed, roomChanged, trace) = Self.update(&records.values[index]) { record in
                record.lastSeen = now
                record.rssi = sighting.rssi
                if record.gateway != sighting.gateway { record.gateway = sighting.gateway }
                // The floor value of a sighting without an RSSI would pull the room's average down.
                let roomChanged =
                    sighting.rssiMeasured && record.room.heard(gateway: sighting.gateway, rssi: sighting.rssi, at: now)
                var identityChanged = false
                if record.heardFrom != sighting.heardFrom || record.attribution != sighting.attribution {
                    record.heardFrom = sighting.heardFrom
                    record.attribution = sighting.attribution
                    identityChanged = true
                }
                if let model = sighting.decoded?.model, record.model != model {
                    record.model = model
                    identityChanged = true
                }
                let followed =
                    (sighting.attribution == .followed || sighting.attribution == .reattached)
                    && record.followedAddress != sighting.heardFrom
                // What re-attaching it after a night needs: its profile, and the room it stayed in
                // (kept for a minute: a gateway that heard it only in its last moments, at a signal
                // it never had before, is not continuity); its first room counts until one is kept.
                var trace = record.trace
                if let profile = sighting.profile, trace.profile != profile { trace.profile = profile }
                // Only an accessory that advertises proximity pairing can be a look-alike's.
                if trace.profile != nil {
                    if let kept = record.room.keptRoom(at: now) {
                        if trace.room != kept { trace.room = kept }
                    } else if trace.room == nil, let room = record.room.room {
                        trace.room = room
                    }
                }
                return (record.available, identityChanged, followed, roomChanged, trace == record.trace ? nil : trace)
            }
            if identityChanged { markChanged(id) }
            if roomChanged { roomMoved(id) }
            if followed {
                setFollowedAddress(id, sighting.heardFrom)
                records.values[index].followedHow = sighting.attribution
                emit(.storage(.saveFollowedAddress(id, sighting.heardFrom)))
                if sighting.attribution == .reattached, let accessory = session.accessories[id] {
                    emit(.event(SetupEvent(.accessoryReattached, accessory: accessory)))
                }
            }
            if let trace {
                setTrace(id, trace)
                emit(.storage(.saveTrace(id, trace)))
            }
            if let order = sighting.irkOrder, records.values[index].keys.irkOrder == .notYet {
                var keys = records.values[index].keys
                keys.irkOrder = order
                setKeys(id, keys)
            }
            if !wasAvailable { becameAvailable(id, now: now) }
            if let decoded = sighting.decoded { apply(decoded, to: id, now: now) }
            // After its placement: back in the ear with its home source, it is routed at once.
            if !wasAvailable { returned(id, now: now) }
            return
        }
        // Unknown addresses only matter to a presented picker, whose candidates are bounded.
        guard session.picker != nil else { return }
        var events: [SetupEvent] = []
        if session.observe(sighting, now: now, events: &events) {
            emitEvents(events)
            emit(.pickerChanged(session.picker))
        }
    }

    /// A decoder's reading. Unlike an explicit report it is not a request to update, so it
    /// only feeds placement when the registration can take it (no error per advertisement).
    mutating func apply(_ decoded: AdvertisementSighting.Decoded, to id: BluetoothAddress, now: Timestamp) {
        guard
            let (hardware, batteryChanged) = withRecord(
                id,
                { record -> (HardwareType, Bool) in
                    // A frame without the case level keeps the one an earlier frame gave (household.md).
                    guard let battery = decoded.battery?.keepingCase(previous: record.battery), record.battery != battery
                    else { return (record.hardware, false) }
                    record.battery = battery
                    return (record.hardware, true)
                })
        else { return }
        if batteryChanged { markChanged(id) }
        if decoded.wearSensor == false { wearSensorMissing(id, model: decoded.model, now: now) }
        guard let placement = decoded.placement ?? decoded.worn.map({ hardware.placement(worn: $0) })
        else { return }
        setWorn(id, placement.isWorn)
        guard let registration = registry[id], !registration.isInvalidated,
            registration.configuration.deviceCapabilities.contains(.placement)
        else { return }
        feedPlacement(id, placement, now: now)
    }

    // MARK: Reports (extension role)

    mutating func apply(_ report: AccessoryReport, now: Timestamp) {
        let id = report.accessory
        guard session.state == .activated, let hardware = withRecord(id, { $0.hardware }) else { return }
        let back = report.gateway.map { heard(id, gateway: $0, now: now) } ?? false
        // After the report's own changes: a source it reports wins over its home sources.
        defer { if back { returned(id, now: now) } }
        for change in report.changes {
            // No change removes the record today; this keeps it that way should one ever do so.
            guard records.index(forKey: id) != nil else { return }
            switch change {
            case .placement(let placement):
                updatePlacement(id, placement, now: now)
            case .worn(let worn, let reported):
                updatePlacement(id, (reported ?? hardware).placement(worn: worn), now: now)
            case .sources(let sources):
                changeSources(id, reason: .preferredSource, now: now) { $0.replace(with: sources) }
            case .sourceConnected(let source):
                changeSources(id, reason: .sourceConnected, now: now) { $0.connect(source) }
            case .sourceDisconnected(let source):
                changeSources(id, reason: .sourceDisconnected, now: now) { $0.disconnect(source) }
            case .preferredSource(let source):
                changeSources(id, reason: .preferredSource, preferenceOnly: true, now: now) { $0.prefer(source) }
            case .rssi(let rssi):
                // Rooms come from advertisements only (docs/rooms.md): a relay's report is not
                // a measurement the room's smoothing was tuned for.
                withRecord(id) { $0.rssi = rssi }
            case .battery(let battery):
                let changed = withRecord(id) { record -> Bool in
                    guard record.battery != battery else { return false }
                    record.battery = battery
                    return true
                }
                if changed == true { markChanged(id) }
            case .sensorFrame(let frame):
                sendSensorFrame(frame, from: id)
            case .invalid(let field, let message):
                publishError(
                    .init(.invalidRequest, operation: .update, field: Self.field(forKey: field), message: message), for: id)
            }
        }
    }

    /// An explicit placement statement: refused at once when no update could succeed (and then
    /// nothing changes, not even the wear reading), else debounced.
    mutating func updatePlacement(_ id: BluetoothAddress, _ placement: AccessoryControlDevice.Placement, now: Timestamp) {
        if let error = gate(id, .devicePlacement) {
            publishError(error, for: id)
            return
        }
        setWorn(id, placement.isWorn)
        feedPlacement(id, placement, now: now)
    }

    /// The configuration field a telemetry key writes.
    static func field(forKey key: String) -> AccessoryControlDevice.Error.Field? {
        switch key {
        case "placement", "worn", "hardware": .devicePlacement
        case "sources", "source_connected", "source_disconnected", "preferred_source": .primaryAudioSourceDeviceIdentifier
        default: nil
        }
    }

    /// Checks, before anything is buffered, that an update of this field could succeed at all
    /// (registered, not invalidated, capability registered), so the error is immediate.
    func gate(_ id: BluetoothAddress, _ field: AccessoryControlDevice.Error.Field) -> AccessoryControlDevice.Error? {
        guard session.accessories.index(forKey: id) != nil else {
            return .init(.invalidRequest, operation: .update, field: .accessory, message: "unknown accessory \(id)")
        }
        let capabilities: AccessoryControlDevice.Capabilities
        do throws(AccessoryControlDevice.Error) {
            capabilities = try registry.configuration(of: id, operation: .update).deviceCapabilities
        } catch {
            return error
        }
        if field == .devicePlacement && !capabilities.contains(.placement) {
            return .init(.accessoryNotCapable, operation: .update, field: .devicePlacement, message: "placement was not registered")
        }
        if field != .devicePlacement && !capabilities.contains(.audioSwitching) {
            return .init(.accessoryNotCapable, operation: .update, field: field, message: "audioSwitching was not registered")
        }
        return nil
    }

    mutating func setWorn(_ id: BluetoothAddress, _ worn: Bool) {
        let changed = withRecord(id) { record -> Bool in
            guard record.worn != worn else { return false }
            record.worn = worn
            return true
        }
        guard changed == true else { return }
        markChanged(id)
    }

    // MARK: Placement

    mutating func feedPlacement(_ id: BluetoothAddress, _ placement: AccessoryControlDevice.Placement, now: Timestamp) {
        guard let index = records.index(forKey: id) else { return }
        let (before, commit, newDeadline) = Self.update(&records.values[index].filter) { filter in
            let before = filter.committed
            let deadlineBefore = filter.deadline
            let commit = filter.observe(placement, at: now)
            return (before, commit, filter.deadline == deadlineBefore ? nil : filter.deadline)
        }
        guard let commit else {
            if let newDeadline { placementQueue.append((newDeadline, id)) }
            return
        }
        commitPlacement(id, commit, previous: before, now: now)
    }

    /// Sends a committed placement as an update (read-modify-write); on failure the filter
    /// goes back to the placement before, so nothing changed.
    mutating func commitPlacement(
        _ id: BluetoothAddress, _ placement: AccessoryControlDevice.Placement, previous: AccessoryControlDevice.Placement?, now: Timestamp
    ) {
        guard session.accessories.index(forKey: id) != nil else { return }
        do throws(AccessoryControlDevice.Error) {
            var configuration = try registry.configuration(of: id, operation: .update)
            let wasWorn = configuration.devicePlacement?.isWorn == true
            configuration.devicePlacement = placement
            guard try registry.update(configuration, id: id, role: .extension) else { return }
            if placement.isWorn && !wasWorn { records[id]?.wornSince = now }
            if let registration = registry[id] {
                emit(.registrationChanged(id, registration))
                emit(.storage(.upsertRegistration(id, registration)))
            }
            markChanged(id)
            recomputeRoutes(configuration.sources, subject: id, now: now) { _ in .placement(placement) }
        } catch {
            records[id]?.filter.revert(to: previous)
            publishError(error, for: id)
        }
    }

    // MARK: Sources

    /// - Parameter preferenceOnly: the change is a preference (`preferred_source`): every
    ///   route it changes says `reason`, even for a source it connects.
    mutating func changeSources(
        _ id: BluetoothAddress, reason: DecisionReason, preferenceOnly: Bool = false, now: Timestamp,
        _ operation: (inout SourceTracker) -> Bool
    ) {
        if let error = gate(id, .primaryAudioSourceDeviceIdentifier) {
            publishError(error, for: id)
            return
        }
        guard session.accessories.index(forKey: id) != nil, var tracker = records[id]?.tracker else { return }
        // Accepted, whether or not it changes anything: said while it was away, it wins over
        // the home sources when it comes back.
        records[id]?.reportedSinceUnavailable = true
        guard operation(&tracker) else { return }
        do throws(AccessoryControlDevice.Error) {
            var configuration = try registry.configuration(of: id, operation: .update)
            let old = configuration.sources
            configuration.primaryAudioSourceDeviceIdentifier = tracker.primary
            configuration.secondaryAudioSourceDeviceIdentifier = tracker.secondary
            let changedConfiguration = try registry.update(configuration, id: id, role: .extension)
            records[id]?.tracker = tracker
            markChanged(id)
            guard changedConfiguration else { return }
            let new = configuration.sources
            reindex(id, old: old, new: new)
            if let registration = registry[id] {
                emit(.registrationChanged(id, registration))
                emit(.storage(.upsertRegistration(id, registration)))
            }
            recomputeRoutes(old + new, subject: id, now: now) { source in
                // A preference names the cause of every route it moves, the source it
                // connects at the front included.
                if reason == .preferredSource && preferenceOnly { return reason }
                if !old.contains(source) { return .sourceConnected }
                if !new.contains(source) { return .sourceDisconnected }
                return reason
            }
        } catch {
            publishError(error, for: id)
        }
    }

    // MARK: Availability

    /// - Returns: whether it became available (it is ``returned(_:now:)`` once the report is
    ///   applied).
    mutating func heard(_ id: BluetoothAddress, gateway: String, now: Timestamp) -> Bool {
        let wasAvailable = withRecord(id) { record -> Bool in
            record.lastSeen = now
            if record.gateway != gateway { record.gateway = gateway }
            return record.available
        }
        guard wasAvailable == false else { return false }
        becameAvailable(id, now: now)
        return true
    }

    /// Became available in this step, and the step's sighting or report is applied: its home
    /// sources are restored when due.
    mutating func returned(_ id: BluetoothAddress, now: Timestamp) {
        restoreHomeSources(id, now: now)
        records[id]?.awaitingFirstSighting = false
    }

    mutating func becameAvailable(_ id: BluetoothAddress, now: Timestamp) {
        records[id]?.available = true
        records[id]?.unheardSince = nil
        scheduleAvailabilityCheck(lastSeen: now)
        emit(.availabilityChanged(id, available: true))
        markChanged(id)
        // Without placement an accessory counts as put on when it comes back.
        if registry[id]?.configuration.deviceCapabilities.contains(.placement) != true { records[id]?.wornSince = now }
        recomputeRoutes(listedSources(id), subject: id, now: now) { _ in .sourceConnected }
    }

    /// No gateway heard it within the timeout: it cannot be connected to anything we
    /// can see, so its sources are cleared (a stale identifier is a defect).
    mutating func becameUnavailable(_ id: BluetoothAddress, now: Timestamp) {
        records[id]?.available = false
        records[id]?.reportedSinceUnavailable = false
        // Its gateways' averages are as stale as its sources: when it is heard again, the room
        // starts over from the first gateway that hears it.
        records[id]?.room = RoomTracker()
        // The case level kept from an earlier frame is not kept past the accessory's absence.
        let battery = records[id]?.battery
        records[id]?.battery = battery?.withoutCase
        emit(.availabilityChanged(id, available: false))
        markChanged(id)
        clearSources(id, now: now)
    }

    /// Clears the sources of an accessory no gateway can hear (its registration and tracker),
    /// releasing its routes with reason `unavailable`.
    mutating func clearSources(_ id: BluetoothAddress, now: Timestamp) {
        let listed = listedSources(id)
        records[id]?.tracker.clear()
        if let registration = registry[id], !registration.isInvalidated, !listed.isEmpty {
            var configuration = registration.configuration
            configuration.primaryAudioSourceDeviceIdentifier = nil
            configuration.secondaryAudioSourceDeviceIdentifier = nil
            if (try? registry.update(configuration, id: id, role: .extension)) == true, let updated = registry[id] {
                reindex(id, old: listed, new: [])
                markChanged(id)
                emit(.registrationChanged(id, updated))
                emit(.storage(.upsertRegistration(id, updated)))
            }
        }
        recomputeRoutes(listed, subject: id, now: now) { _ in .unavailable }
    }

    /// Runs `body` on an accessory's record in place; nil when there is no record.
    @discardableResult
    mutating func withRecord<Result>(_ id: BluetoothAddress, _ body: (inout Record) -> Result) -> Result? {
        guard let index = records.index(forKey: id) else { return nil }
        return body(&records.values[index])
    }

    /// Runs `body` on a value in place. Reading a field through `Dictionary.Values`' getter
    /// copies the whole record; going through `inout` uses the in-place accessor instead.
    @inline(__always)
    static func update<Value, Result>(_ value: inout Value, _ body: (inout Value) -> Result) -> Result {
        body(&value)
    }

    // MARK: Time

    mutating func tick(now: Timestamp) {
        guard session.state == .activated else { return }
        var events: [SetupEvent] = []
        session.tick(now: now, events: &events)
        if !events.isEmpty {
            emitEvents(events)
            emit(.pickerChanged(session.picker))
        }
        // Availability first: a placement committed in the same tick must not route to an
        // accessory that is already gone.
        if let due = availabilityCheckAt, now >= due { expireAvailability(now: now) }
        if let due = roomCheckAt, now >= due { expireRooms(now: now) }
        while placementQueueHead < placementQueue.count, placementQueue[placementQueueHead].deadline <= now {
            let (deadline, id) = placementQueue[placementQueueHead]
            placementQueueHead += 1
            guard let index = records.index(forKey: id) else { continue }
            let (before, due) = Self.update(&records.values[index].filter) { filter in
                (filter.committed, filter.deadline == deadline ? filter.tick(at: now) : nil)
            }
            guard let placement = due else { continue }
            commitPlacement(id, placement, previous: before, now: now)
        }
        if placementQueueHead == placementQueue.count {
            placementQueue.removeAll(keepingCapacity: true)
            placementQueueHead = 0
        } else if placementQueueHead > 4096 && placementQueueHead * 2 > placementQueue.count {
            placementQueue.removeFirst(placementQueueHead)
            placementQueueHead = 0
        }
    }

    /// Marks accessories not heard within the timeout unavailable and computes when the next
    /// one can expire. lastSeen only grows, so that time is a safe lower bound: the scan runs
    /// about once per timeout instead of on every tick.
    mutating func expireAvailability(now: Timestamp) {
        var expired: [BluetoothAddress] = []
        var unheard: [BluetoothAddress] = []
        var next: Timestamp?
        for (id, record) in records {
            if let since = record.unheardSince {
                // Not heard since the start: its restored sources are as stale as those of an
                // accessory that stopped being heard.
                if now.milliseconds(since: since) > availabilityTimeout {
                    unheard.append(id)
                } else {
                    let due = since.advanced(byMilliseconds: availabilityTimeout + 1)
                    if next.map({ due < $0 }) ?? true { next = due }
                }
                continue
            }
            guard record.available, let lastSeen = record.lastSeen else { continue }
            if now.milliseconds(since: lastSeen) > availabilityTimeout {
                expired.append(id)
            } else {
                let due = lastSeen.advanced(byMilliseconds: availabilityTimeout + 1)
                if next.map({ due < $0 }) ?? true { next = due }
            }
        }
        availabilityCheckAt = next
        for id in unheard.sorted() {
            records[id]?.unheardSince = nil
            clearSources(id, now: now)
        }
        for id in expired.sorted() { becameUnavailable(id, now: now) }
    }

    // MARK: Rooms

    /// A room changed: published at once, and its expiry may be earlier than the check time.
    mutating func roomMoved(_ id: BluetoothAddress) {
        markChanged(id)
        if let due = records[id]?.room.nextExpiry, roomCheckAt.map({ due < $0 }) ?? true { roomCheckAt = due }
    }

    /// Expires the rooms whose gateway has not heard the accessory for the window and computes
    /// when the next one can. A room's expiry only moves later while the room stays (its gateway
    /// hears it again), and a change of room schedules its own, so the check time is a safe lower
    /// bound: the scan runs about once per window instead of on every tick.
    mutating func expireRooms(now: Timestamp) {
        var next: Timestamp?
        for index in records.values.indices {
            let (moved, due) = Self.update(&records.values[index].room) { room in
                (room.expire(at: now), room.nextExpiry)
            }
            if moved { markChanged(records.keys[index]) }
            if let due, next.map({ due < $0 }) ?? true { next = due }
        }
        roomCheckAt = next
    }

    /// Records that an accessory heard at `lastSeen` can expire; keeps the earliest check time.
    mutating func scheduleAvailabilityCheck(lastSeen: Timestamp) {
        let due = lastSeen.advanced(byMilliseconds: availabilityTimeout + 1)
        if availabilityCheckAt.map({ due < $0 }) ?? true { availabilityCheckAt = due }
    }
}
