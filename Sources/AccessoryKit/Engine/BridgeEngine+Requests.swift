extension BridgeEngine {
    // MARK: Lifecycle

    mutating func activate(now: Timestamp) -> RequestResult {
        var events: [SetupEvent] = []
        do throws(SetupError) {
            try session.activate(events: &events)
        } catch {
            return .failure(.setup(error))
        }
        emitEvents(events)
        // Nothing has heard the restored accessories yet: they are unavailable (and never seen)
        // until a gateway does. Their restored sources are cleared if none does within one
        // availability timeout, as for an accessory that stopped being heard.
        for id in records.keys.sorted() { awaitFirstSighting(id, now: now) }
        if !migrationComplete && !configuration.migrations.isEmpty {
            events = []
            let added: [Accessory]
            do throws(SetupError) {
                added = try session.migrate(configuration.migrations, events: &events)
            } catch {
                return .failure(.setup(error))
            }
            for accessory in added {
                addRecord(for: accessory)
                awaitFirstSighting(accessory.id, now: now)
                emit(.storage(.upsertAccessory(accessory)))
            }
            emitEvents(events)
            migrationComplete = true
            emit(.storage(.migrationComplete))
            for accessory in added { autoRegisterIfConfigured(accessory.id, now: now) }
        }
        // An invalidation stored by an earlier run that did not re-register (identity.md,
        // Invalidation) is answered now.
        for id in records.keys.sorted() { reevaluateRegistration(id, now: now) }
        // The file's keys win at every start, not only at the migration (identity.md, Keys).
        for (id, configured) in configuration.keys.sorted(by: { $0.key < $1.key }) {
            guard let keys = records[id]?.keys else { continue }
            setKeys(id, keys.overridden(by: configured))
        }
        return .success(.empty)
    }

    /// An accessory known at the start: unavailable, never seen, until a gateway hears it.
    mutating func awaitFirstSighting(_ id: BluetoothAddress, now: Timestamp) {
        // Through the slot: `records[id]?.x = ...` copies the whole record out and back each
        // time, and this runs for every accessory at startup.
        if let index = records.index(forKey: id) {
            records.values[index].available = false
            records.values[index].lastSeen = nil
            records.values[index].wornSince = now
            records.values[index].unheardSince = now
            records.values[index].awaitingFirstSighting = true
            records.values[index].reportedSinceUnavailable = false
        }
        scheduleAvailabilityCheck(lastSeen: now)
    }

    mutating func shutdown() -> RequestResult {
        var events: [SetupEvent] = []
        let hadPicker = session.picker != nil
        do throws(SetupError) {
            try session.invalidate(events: &events)
        } catch {
            return .failure(.setup(error))
        }
        emitEvents(events)
        if hadPicker { emit(.pickerChanged(nil)) }
        return .success(.empty)
    }

    // MARK: Requests

    mutating func handle(_ request: Request, role: AccessoryControlDevice.Role, now: Timestamp) -> RequestResult {
        do throws(SetupError) {
            try session.requireActive()
        } catch {
            return .failure(.setup(error))
        }
        switch request {
        case .register(let id, let registration):
            do throws(AccessoryControlDevice.Error) {
                guard role == .container else {
                    throw AccessoryControlDevice.Error(
                        .invalidRequest, operation: .register,
                        message: "register is a container-role operation; it cannot come through /set")
                }
                let stored = try register(id, try registration.configuration(), now: now)
                return .success(.configuration(stored))
            } catch {
                publishError(error, for: id)
                return .failure(.accessoryControl(error))
            }
        case .current(let id):
            // Read-only, so both roles may ask (the management API exposes it).
            do throws(AccessoryControlDevice.Error) {
                guard let accessory = session.accessories[id] else {
                    throw AccessoryControlDevice.Error(
                        .invalidRequest, operation: .current, field: .accessory, message: "unknown accessory \(id)")
                }
                return .success(.device(try registry.current(for: accessory)))
            } catch {
                publishError(error, for: id)
                return .failure(.accessoryControl(error))
            }
        case .setHeadTracking(let id, let active):
            do throws(AccessoryControlDevice.Error) {
                guard role == .container else {
                    throw AccessoryControlDevice.Error(
                        .invalidRequest, operation: .headTracking,
                        message: "head tracking is the user's switch; it cannot come through /set")
                }
                try setHeadTracking(id, active: active)
                return .success(.state(id))
            } catch {
                publishError(error, for: id)
                return .failure(.accessoryControl(error))
            }
        default:
            break
        }
        guard role == .container else {
            return .failure(.setup(SetupError(.invalidRequest, "setup requests belong to the management API, not /set")))
        }
        let pickerBefore = session.picker
        var events: [SetupEvent] = []
        let start = outputs.count
        let result: RequestResult
        do throws(SetupError) {
            switch request {
            case .showPicker(let products, let timeout):
                try session.showPicker(products: products, timeout: timeout, now: now, events: &events)
                result = .success(.picker(session.picker))
            case .selectCandidate(let id, let name, let keys, let sources):
                let candidate = session.picker?.candidate(id)
                let accessory = try session.select(id, name: name, now: now, events: &events)
                // The sources are its home sources, whatever the product; an auto_register
                // product is also registered with them.
                added(accessory, candidate: candidate, sources: sources, now: now)
                if !keys.isEmpty { setKeys(id, keys) }
                result = .success(.accessory(accessory))
            case .finishDiscovery:
                try session.finishDiscovery(events: &events)
                result = .success(.picker(session.picker))
            case .dismissPicker:
                try session.dismiss(events: &events)
                result = .success(.empty)
            case .authorize(let id):
                let accessory = try session.authorize(id, events: &events)
                emit(.storage(.upsertAccessory(accessory)))
                markChanged(id)
                autoRegisterIfConfigured(id, now: now)
                result = .success(.accessory(accessory))
            case .failAuthorization(let id):
                let accessory = try session.failAuthorization(id, events: &events)
                forget(id, now: now)
                result = .success(.accessory(accessory))
            case .rename(let id, let name):
                let accessory = try session.rename(id, to: name, events: &events)
                emit(.storage(.upsertAccessory(accessory)))
                markChanged(id)
                result = .success(.accessory(accessory))
            case .remove(let id):
                let accessory = try session.remove(id, events: &events)
                endHeadTracking(id, removed: accessory)
                forget(id, now: now)
                result = .success(.accessory(accessory))
            case .invalidate(let id):
                guard session.accessories[id] != nil, registry[id] != nil else {
                    throw SetupError(.invalidRequest, "\(id) has no registration to invalidate")
                }
                invalidateRegistration(id, now: now)
                result = .success(.empty)
            case .setKeys(let id, let irk, let encryptionKey, let order):
                guard let keys = records[id]?.keys, session.accessories[id] != nil else {
                    throw SetupError(.invalidRequest, "unknown accessory \(id)")
                }
                var applied = keys.applying(irk: irk, encryptionKey: encryptionKey)
                if let order, applied.irk != keys.irk { applied.irkOrder = order }
                setKeys(id, applied)
                let now = records[id]?.keys ?? keys
                result = .success(.keys(id, now.presence, irkMatch: now.irk == nil ? nil : now.irkOrder))
            case .setHomeSources(let id, let sources):
                try setHomeSources(id, sources, now: now)
                result = .success(.state(id))
            case .setAlias(let id, let alias):
                try setAlias(id, to: alias, now: now)
                result = .success(.state(id))
            case .nameSource(let source, let name):
                nameSource(source, name)
                result = .success(.sourceName(source, sourceName(of: source)))
            case .reattach(let id, let address):
                guard session.accessories[id] != nil, records[id] != nil else {
                    throw SetupError(.invalidRequest, "unknown accessory \(id)")
                }
                reattach(id, to: address)
                result = .success(.state(id))
            case .register, .current, .setHeadTracking:
                result = .success(.empty) // handled above
            }
        } catch {
            result = .failure(.setup(error))
        }
        // Session events come first, in the order the session produced them, even when the
        // request failed; the consequences (storage, routes) follow.
        outputs.insert(contentsOf: events.map(EngineOutput.event), at: start)
        if session.picker != pickerBefore { emit(.pickerChanged(session.picker)) }
        return result
    }

    // MARK: Registration

    /// Container-role register with the engine's bookkeeping around the registry.
    mutating func register(
        _ id: BluetoothAddress, _ requested: AccessoryControlDevice.Configuration, now: Timestamp
    ) throws(AccessoryControlDevice.Error) -> AccessoryControlDevice.Configuration {
        guard let accessory = session.accessories[id], let record = records[id] else {
            throw AccessoryControlDevice.Error(
                .invalidRequest, operation: .register, field: .accessory, message: "unknown accessory \(id); pair it first")
        }
        let oldSources = listedSources(id)
        let stored = try registry.register(accessory, requested, hardware: record.hardwareCapabilities, role: .container)
        // A new registration is a new handle: any session of the old one ends.
        endHeadTracking(id)
        records[id]?.filter = PlacementFilter(debounceMilliseconds: debounce, committed: stored.devicePlacement)
        records[id]?.tracker = SourceTracker(sources: stored.sources)
        records[id]?.wornSince = now
        reindex(id, old: oldSources, new: stored.sources)
        if let registration = registry[id] {
            emit(.registrationChanged(id, registration))
            emit(.storage(.upsertRegistration(id, registration)))
        }
        markChanged(id)
        recomputeRoutes(oldSources + stored.sources, subject: id, now: now) { _ in .registered }
        return stored
    }

    /// Registers right after pairing when the product says so (initial placement `offHead`),
    /// with the sources given at setup, if any.
    mutating func autoRegisterIfConfigured(_ id: BluetoothAddress, now: Timestamp) {
        guard let record = records[id], record.autoRegister, session.accessories[id]?.state == .authorized else { return }
        let sources = record.setupSources
        var capabilities = record.hardwareCapabilities
        // Its model cannot say it is worn: with placement it would never be routed.
        if record.wearless { capabilities.remove(.placement) }
        do throws(AccessoryControlDevice.Error) {
            _ = try register(
                id,
                .init(
                    deviceCapabilities: capabilities, primaryAudioSourceDeviceIdentifier: sources.first,
                    secondaryAudioSourceDeviceIdentifier: sources.dropFirst().first),
                now: now)
            records[id]?.setupSources = []
        } catch {
            publishError(error, for: id)
        }
    }

    mutating func invalidateRegistration(_ id: BluetoothAddress, now: Timestamp) {
        guard registry.invalidate(id), let registration = registry[id] else { return }
        endHeadTracking(id)
        emit(.registrationChanged(id, registration))
        emit(.storage(.upsertRegistration(id, registration)))
        markChanged(id)
        recomputeRoutes(listedSources(id), subject: id, now: now) { _ in .invalidated }
        reevaluateRegistration(id, now: now)
    }

    /// The container role's answer to an invalidation (identity.md, Invalidation): an
    /// accessory of an `auto_register` product registers again, once, with the configuration
    /// it had; when that fails the error stays on `accessory/<ID>/error` and the accessory
    /// waits for `accessory/register`, like any other.
    mutating func reevaluateRegistration(_ id: BluetoothAddress, now: Timestamp) {
        guard let registration = registry[id], registration.isInvalidated, records[id]?.autoRegister == true,
            session.accessories[id]?.state == .authorized
        else { return }
        do throws(AccessoryControlDevice.Error) {
            _ = try register(id, registration.configuration, now: now)
            emit(.registrationReevaluated(id, because: .invalidated, error: nil))
        } catch {
            publishError(error, for: id)
            emit(.registrationReevaluated(id, because: .invalidated, error: error))
        }
    }

    /// An `auto_register` accessory registered with `placement` whose advertisements turn out
    /// to name a model without a wear sensor: registered again without `placement` (its
    /// sources kept), once, so it is routed while available instead of never.
    mutating func wearSensorMissing(_ id: BluetoothAddress, model: String?, now: Timestamp) {
        guard let record = records[id], !record.wearless else { return }
        records[id]?.wearless = true
        guard record.autoRegister, let registration = registry[id], !registration.isInvalidated,
            registration.configuration.deviceCapabilities.contains(.placement)
        else { return }
        var configuration = registration.configuration
        configuration.deviceCapabilities.remove(.placement)
        configuration.devicePlacement = nil
        do throws(AccessoryControlDevice.Error) {
            _ = try register(id, configuration, now: now)
            emit(.registrationReevaluated(id, because: .noWearSensor(model: model), error: nil))
        } catch {
            publishError(error, for: id)
            emit(.registrationReevaluated(id, because: .noWearSensor(model: model), error: error))
        }
    }

    // MARK: Accessories

    /// Replaces an accessory's keys; stores and announces them only when they change.
    mutating func setKeys(_ id: BluetoothAddress, _ keys: AccessoryKeys) {
        guard let index = records.index(forKey: id), records.values[index].keys != keys else { return }
        records.values[index].keys = keys
        indexProfile(id)
        emit(.storage(.saveKeys(id, keys)))
        emit(.keysChanged(id, keys))
        markChanged(id)
    }

    /// The accessory advertises from `address` now (a look-alike re-attached, by the rules or by
    /// `accessory/reattach`): its followed address, stored, attributed `reattached`.
    mutating func reattach(_ id: BluetoothAddress, to address: BluetoothAddress) {
        records[id]?.followedHow = .reattached
        guard records[id]?.followedAddress != address else { return }
        setFollowedAddress(id, address)
        emit(.storage(.saveFollowedAddress(id, address)))
        if let accessory = session.accessories[id] { emit(.event(SetupEvent(.accessoryReattached, accessory: accessory))) }
        markChanged(id)
    }

    /// An automatic re-attachment to `address` that did not hold (``EngineInput/undoReattach(_:from:)``):
    /// the followed address is forgotten (stored too, so a restart does not bring it back), the
    /// accessory is away until it is heard from its own address, followed, or re-attached again.
    mutating func undoReattach(_ id: BluetoothAddress, from address: BluetoothAddress, now: Timestamp) {
        guard let index = records.index(forKey: id), records.values[index].followedAddress == address,
            records.values[index].followedHow == .reattached
        else { return }
        setFollowedAddress(id, nil)
        records.values[index].followedHow = .followed
        records.values[index].heardFrom = id
        records.values[index].attribution = .address
        emit(.storage(.saveFollowedAddress(id, nil)))
        if records.values[index].available { becameUnavailable(id, now: now) }
        if let accessory = session.accessories[id] { emit(.event(SetupEvent(.reattachUndone, accessory: accessory))) }
        markChanged(id)
    }

    /// A picker setup added an accessory (with the sources its `auto_register` registers).
    mutating func added(_ accessory: Accessory, candidate: Picker.Candidate?, sources: [BluetoothAddress], now: Timestamp) {
        addRecord(for: accessory)
        records[accessory.id]?.setupSources = sources
        records[accessory.id]?.homeSources = sources
        records[accessory.id]?.available = true
        records[accessory.id]?.lastSeen = candidate?.lastSeen ?? now
        records[accessory.id]?.rssi = candidate?.rssi
        records[accessory.id]?.gateway = candidate?.gateway
        // The sighting it was paired from counts as its first: where it was heard, what it said.
        records[accessory.id]?.heardFrom = candidate.map { _ in accessory.id }
        records[accessory.id]?.model = candidate?.decoded?.model
        records[accessory.id]?.battery = candidate?.decoded?.battery
        if let profile = candidate?.profile { setTrace(accessory.id, AccessoryTrace(profile: profile, room: candidate?.gateway)) }
        records[accessory.id]?.wornSince = now
        scheduleAvailabilityCheck(lastSeen: records[accessory.id]?.lastSeen ?? now)
        emit(.storage(.upsertAccessory(accessory)))
        if candidate?.profile != nil { emit(.storage(.saveTrace(accessory.id, trace(of: accessory.id)))) }
        if !sources.isEmpty { emit(.storage(.saveHomeSources(accessory.id, sources))) }
        markChanged(accessory.id)
        autoRegisterIfConfigured(accessory.id, now: now)
    }

    /// Removal (or failed authorization): the registration is invalidated, routes released,
    /// storage and retained topics cleared.
    mutating func forget(_ id: BluetoothAddress, now: Timestamp) {
        emit(.storage(.deleteAccessory(id)))
        if registry[id] != nil { emit(.storage(.deleteRegistration(id))) }
        discard(id, now: now)
    }

    /// What removal does besides storage (which a reload must not write: storage already lost
    /// the accessory): the registration is invalidated, routes released, retained topics cleared.
    mutating func discard(_ id: BluetoothAddress, now: Timestamp) {
        let sources = listedSources(id)
        endHeadTracking(id)
        registry.invalidate(id)
        setFollowedAddress(id, nil)
        setAlias(id, nil)
        setTrace(id, AccessoryTrace())
        records[id] = nil
        recomputeRoutes(sources, subject: id, now: now) { _ in .removed }
        reindex(id, old: sources, new: [])
        changed.removeAll { $0 == id }
        emit(.accessoryRemoved(id))
    }
}
