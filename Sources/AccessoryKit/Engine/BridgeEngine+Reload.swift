extension BridgeEngine {
    // MARK: Reload (state another instance stored)

    /// Takes the stored state of `ids` from `stored`, because it changed outside this engine:
    /// another bridge instance sharing the database added, registered, renamed or removed one of
    /// them, or this instance took over their partition from a dead one. Rebuilding the engine
    /// instead would lose the live state (availability, placement filter, room, sources) of every
    /// other accessory.
    ///
    /// Each id, in sorted order so the outputs do not depend on the caller's order: stored and
    /// known is replaced, keeping the live state; stored and unknown is added as a restored
    /// accessory; known and no longer stored is removed as `remove` does. Nothing is written to
    /// storage: the state came from there, and writing it back would race with the instance that
    /// wrote it. For the same reason nothing here registers again (`auto_register`, an
    /// invalidation) or applies the configuration's keys: the owner of the accessory does that and
    /// stores the result, which comes back as another reload. No session event is emitted either:
    /// the instance that made the change delivered them.
    ///
    /// Before `.activate` the state is updated and nothing is emitted, as at `init` (the snapshot
    /// after `.activate` shows it, and activation starts waiting for the first sighting of every
    /// accessory); after `.invalidate` likewise, since nothing is published after a shutdown.
    mutating func reload(
        _ stored: RestoredState, ids: [BluetoothAddress], routes inherited: [BluetoothAddress: BluetoothAddress] = [:], now: Timestamp
    ) {
        let start = outputs.count
        let wanted = Set(ids)
        // For an id stored twice the last wins, as at `init`. Only the wanted ones are kept:
        // `stored` may hold every accessory of the database.
        var accessories: [BluetoothAddress: Accessory] = [:]
        for accessory in stored.accessories where wanted.contains(accessory.id) { accessories[accessory.id] = accessory }
        for id in wanted.sorted() {
            if let accessory = accessories[id] {
                adoptStored(accessory, from: stored, now: now)
            } else if session.discardStored(id) != nil {
                discard(id, now: now)
            }
        }
        guard session.state == .activated else {
            outputs.removeSubrange(start...)
            changed.removeAll(keepingCapacity: true)
            return
        }
        inherit(inherited, of: wanted, now: now)
    }

    /// Routes the previous owner of `ids` published, taken over as they are (a takeover: the
    /// broker's retained routes). Routes live in memory, and the new owner hears nothing of its
    /// accessories before their next advertisements; without this it would route each source
    /// again at the first one and publish a decision the previous owner had already published.
    /// A routed accessory counts as heard now: the next advertisement confirms the route
    /// without a decision, and one never heard again expires like any other (released, with
    /// a decision). A route is taken only where this engine has none for the source and the
    /// stored registration makes the accessory eligible for it.
    mutating func inherit(_ inherited: [BluetoothAddress: BluetoothAddress], of ids: Set<BluetoothAddress>, now: Timestamp) {
        for (source, id) in inherited.sorted(by: { $0.key < $1.key }) where ids.contains(id) {
            guard routes[source] == nil, records[id] != nil, listedSources(id).contains(source),
                SwitchingPolicy.eligibility(of: registry[id], available: true, for: source) != nil
            else { continue }
            routes[source] = id
            withRecord(id) { record in
                record.available = true
                record.lastSeen = now
                record.unheardSince = nil
            }
            scheduleAvailabilityCheck(lastSeen: now)
            markChanged(id)
        }
    }

    /// One accessory as storage holds it, with its registration, keys and followed address.
    ///
    /// A known accessory keeps its record (availability, last sighting, room, battery, address,
    /// pending placement reading): those are this instance's observations, which storage does not
    /// hold. Only what derives from the registration follows it: the sources tracker and the
    /// placement filter are reset when their sources or committed placement no longer match (an
    /// update computed from a stale tracker or filter would undo the stored change, or a reading
    /// equal to the stale committed placement would be lost), and the wear reading follows a new
    /// placement. A product change makes it another device: the record is rebuilt as for a new one.
    mutating func adoptStored(_ accessory: Accessory, from stored: RestoredState, now: Timestamp) {
        let id = accessory.id
        let previous = session.accessories[id]
        // A removed accessory's registration stays in the registry, invalidated, with its sources
        // unindexed: for an accessory coming back it is no previous registration.
        let oldRegistration = previous == nil ? nil : registry[id]
        let oldSources = previous == nil ? [] : listedSources(id)
        let oldKeys = records[id]?.keys ?? AccessoryKeys()
        let registration = stored.registrations[id]
        session.adoptStored(accessory)
        registry.adoptStored(registration, for: id)
        let configuration = registration?.configuration
        let newSources = configuration?.sources ?? []
        let registrationChanged = oldRegistration != registration
        let rebuilt = previous?.product != accessory.product
        if rebuilt {
            let wasAvailable = records[id]?.available == true
            setFollowedAddress(id, nil)
            records[id] = makeRecord(for: accessory)
            if session.state == .activated {
                // Heard by nobody yet, as an accessory restored at the start.
                awaitFirstSighting(id, now: now)
                if wasAvailable { emit(.availabilityChanged(id, available: false)) }
            }
        } else if registrationChanged {
            let oldPlacement = oldRegistration?.configuration.devicePlacement
            let placement = configuration?.devicePlacement
            let debounce = debounce
            withRecord(id) { record in
                if record.tracker.sources != newSources { record.tracker = SourceTracker(sources: newSources) }
                if record.filter.committed != placement {
                    record.filter = PlacementFilter(debounceMilliseconds: debounce, committed: placement)
                    // The stored placement is the accessory's latest word (through the instance
                    // that committed it), newer than this instance's reading.
                    if let placement { record.worn = placement.isWorn }
                }
                // As a committed placement does: put on now, for the tie-break.
                if placement?.isWorn == true && oldPlacement?.isWorn != true { record.wornSince = now }
            }
        }
        reindex(id, old: oldSources, new: newSources)
        let keys = stored.keys[id] ?? AccessoryKeys()
        records[id]?.keys = keys
        setFollowedAddress(id, stored.followedAddresses[id])
        let homeSources = stored.homeSources[id] ?? []
        let userChanged = records[id]?.homeSources != homeSources || records[id]?.alias != stored.aliases[id]
        records[id]?.homeSources = homeSources
        setAlias(id, stored.aliases[id])
        if registrationChanged, let registration { emit(.registrationChanged(id, registration)) }
        if keys != oldKeys { emit(.keysChanged(id, keys)) }
        if previous != accessory || registrationChanged || keys != oldKeys || rebuilt || userChanged { markChanged(id) }
        guard registrationChanged || rebuilt else { return }
        let reason = Self.reloadReason(from: oldRegistration, to: registration, rebuilt: rebuilt)
        recomputeRoutes(oldSources + newSources, subject: id, now: now) { _ in reason }
    }

    /// Why routes moved when a reload changed a registration (or rebuilt the record): named as
    /// the change on the instance that made it would have named it.
    static func reloadReason(from old: Registration?, to new: Registration?, rebuilt: Bool) -> DecisionReason {
        guard let new else { return .removed }
        if new.isInvalidated { return .invalidated }
        // A rebuilt record is heard by nobody yet: whatever it had, it is unavailable.
        if rebuilt { return .unavailable }
        if let old, !old.isInvalidated, let placement = new.configuration.devicePlacement {
            var unchanged = new.configuration
            unchanged.devicePlacement = old.configuration.devicePlacement
            // Only the placement changed: a committed placement.
            if unchanged == old.configuration && placement != old.configuration.devicePlacement { return .placement(placement) }
        }
        return .registered
    }
}
