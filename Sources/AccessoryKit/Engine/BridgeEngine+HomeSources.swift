extension BridgeEngine {
    // MARK: Home sources, aliases and source names (household.md)

    /// The accessory whose alias `address` is (`/set` on the alias's topic, source reports).
    /// An alias never attributes an advertisement: only these paths ask.
    public func accessory(aliasedTo address: BluetoothAddress) -> BluetoothAddress? {
        aliasIndex[address]
    }

    /// A source device's name: the configuration's, else the one given at run time.
    public func sourceName(of source: BluetoothAddress) -> String? {
        configuration.sourceNames[source] ?? runtimeSourceNames[source]
    }

    /// Every named source device (the configuration's names win), for choosing a home source.
    public var sourceNames: [BluetoothAddress: String] {
        runtimeSourceNames.merging(configuration.sourceNames) { _, configured in configured }
    }

    /// `accessory/home_sources`: stored, and shown in the state; the registration and the
    /// placement stay as they are. An accessory that is available with no connected source
    /// takes them at once, as it would on its return.
    mutating func setHomeSources(_ id: BluetoothAddress, _ sources: [BluetoothAddress], now: Timestamp) throws(SetupError) {
        guard let record = records[id], session.accessories[id] != nil else { throw SetupError(.invalidRequest, "unknown accessory \(id)") }
        for (index, source) in sources.enumerated() {
            if source == id { throw SetupError(.invalidRequest, "'sources'[\(index)]: \(source) is the accessory's own id") }
            if source == record.alias { throw SetupError(.invalidRequest, "'sources'[\(index)]: \(source) is the accessory's alias") }
        }
        guard record.homeSources != sources else { return }
        records[id]?.homeSources = sources
        emit(.storage(.saveHomeSources(id, sources)))
        markChanged(id)
        if record.available { restoreHomeSources(id, now: now) }
    }

    /// `accessory/alias`: the accessory's public address (nil removes it). Refused when another
    /// accessory has it as its id or alias, or it is a source device's address.
    mutating func setAlias(_ id: BluetoothAddress, to alias: BluetoothAddress?, now: Timestamp) throws(SetupError) {
        guard let record = records[id], session.accessories[id] != nil else { throw SetupError(.invalidRequest, "unknown accessory \(id)") }
        if let alias {
            if alias == id { throw SetupError(.invalidRequest, "'address': \(alias) is the accessory's own id") }
            if session.accessories[alias] != nil {
                throw SetupError(.invalidRequest, "'address': \(alias) is the id of another accessory")
            }
            if let owner = aliasIndex[alias], owner != id {
                throw SetupError(.invalidRequest, "'address': \(alias) is already the alias of accessory \(owner)")
            }
            if isSourceAddress(alias) {
                throw SetupError(.invalidRequest, "'address': \(alias) is a source device's address, not an accessory's")
            }
        }
        guard record.alias != alias else { return }
        setAlias(id, alias)
        emit(.storage(.saveAlias(id, alias)))
        markChanged(id)
    }

    /// `source/name`: stored; a name in the configuration still wins.
    mutating func nameSource(_ source: BluetoothAddress, _ name: String?) {
        guard runtimeSourceNames[source] != name else { return }
        runtimeSourceNames[source] = name
        emit(.storage(.saveSourceName(source, name)))
        emit(.sourceNamed(source, sourceName(of: source)))
    }

    /// Whether `address` is known as a source device: named (in the configuration or at run
    /// time), or an accessory's home or connected source.
    func isSourceAddress(_ address: BluetoothAddress) -> Bool {
        if configuration.sourceNames[address] != nil || runtimeSourceNames[address] != nil || sourceIndex[address] != nil {
            return true
        }
        return records.values.contains { $0.homeSources.contains(address) || $0.tracker.sources.contains(address) }
    }

    /// The accessory is back (or was just given home sources while available): with no
    /// connected source and no source report since it became unavailable, its home sources
    /// become its connected sources, in order, and the routes they name are recomputed. The
    /// reason is `home_source`, or `startup` on its first return after a start. Nothing
    /// happens where the registration takes no sources (not `audioSwitching`, invalidated, none).
    mutating func restoreHomeSources(_ id: BluetoothAddress, now: Timestamp) {
        guard let record = records[id], !record.homeSources.isEmpty, record.tracker.sources.isEmpty, !record.reportedSinceUnavailable,
            gate(id, .primaryAudioSourceDeviceIdentifier) == nil
        else { return }
        let reason: DecisionReason = record.awaitingFirstSighting ? .startup : .homeSource
        do throws(AccessoryControlDevice.Error) {
            var configuration = try registry.configuration(of: id, operation: .update)
            let old = configuration.sources
            configuration.primaryAudioSourceDeviceIdentifier = record.homeSources.first
            configuration.secondaryAudioSourceDeviceIdentifier = record.homeSources.count > 1 ? record.homeSources[1] : nil
            guard try registry.update(configuration, id: id, role: .extension) else { return }
            records[id]?.tracker = SourceTracker(sources: record.homeSources)
            markChanged(id)
            let new = configuration.sources
            reindex(id, old: old, new: new)
            if let registration = registry[id] {
                emit(.registrationChanged(id, registration))
                emit(.storage(.upsertRegistration(id, registration)))
            }
            recomputeRoutes(old + new, subject: id, now: now) { _ in reason }
        } catch {
            // The gate above is what update checks: a registration it lets through takes them.
            publishError(error, for: id)
        }
    }
}
