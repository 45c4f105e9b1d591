/// The whole domain as one deterministic state machine.
///
/// Inputs go in with the current time; outputs (events, state changes, route
/// changes, decisions, errors, storage writes) come back as values in the order
/// the runtime must carry them out. There are no threads, clocks or I/O inside,
/// so replaying the same inputs gives the same outputs.
public struct BridgeEngine: Sendable {
    /// Per-accessory runtime state that is not part of the Apple objects.
    @usableFromInline
    struct Record: Sendable {
        // In this order so that the one-byte fields fill the padding after the nine-byte
        // optionals (`lastSeen`, `rssi`): 424 bytes a record instead of 456, one per accessory
        // (issue 53; FootprintLayoutTests).
        var lastSeen: Timestamp?
        var available: Bool = false
        var worn: Bool?
        /// How the last sighting (``heardFrom``) was attributed.
        var attribution: IdentityAttribution = .address
        /// Its advertisements named a model without a wear sensor (``ReevaluationReason/noWearSensor(model:)``).
        var wearless = false
        /// A source report about it was accepted since it last became unavailable (or since the
        /// start): the report wins, its home sources are not restored.
        var reportedSinceUnavailable = false
        /// Not heard since the session started: its first return restores its home sources
        /// with the reason `startup`.
        var awaitingFirstSighting = false
        /// Its head-tracking session is active (the user turned it on; iOS 27's
        /// `Session.isHeadTrackingActive`). Never stored: a restart starts it inactive, as an
        /// app's session does.
        var headTrackingActive = false
        var rssi: Int?
        /// How its followed address was found: followed in a rotation, or re-attached.
        var followedHow: IdentityAttribution = .followed
        let hardware: HardwareType
        let hardwareCapabilities: AccessoryControlDevice.Capabilities
        let autoRegister: Bool
        var gateway: String?
        var battery: Battery?
        var filter: PlacementFilter
        var tracker: SourceTracker
        /// When it was last put on (or became available without `placement`), for the tie-break.
        var wornSince: Timestamp = Timestamp(milliseconds: 0)
        var lastError: AccessoryControlDevice.Error?
        /// Known at the start (restored or migrated) and not heard since: when the session was
        /// activated. Its sources are cleared if no gateway hears it within the timeout.
        var unheardSince: Timestamp?
        /// The address it was last heard from (how that sighting was attributed: ``attribution``).
        var heardFrom: BluetoothAddress?
        /// The address it was last followed to without a key (stored, so a restart keeps it).
        @usableFromInline var followedAddress: BluetoothAddress?
        @usableFromInline var keys = AccessoryKeys()
        var model: String?
        /// The sources given at setup (`picker/select`), kept until the `auto_register`
        /// registration that uses them succeeds (after an authorization, when one is needed).
        var setupSources: [BluetoothAddress] = []
        /// The gateway that hears it best (identity.md, Rooms); reset when it becomes unavailable.
        var room = RoomTracker()
        /// The sources the user named (0-2, in order; stored): its connected sources again when
        /// it comes back with none and nobody said otherwise meanwhile (household.md).
        var homeSources: [BluetoothAddress] = []
        /// The public address phones and desktops know it by (stored; ``aliasIndex``).
        var alias: BluetoothAddress?
        /// Its proximity profile and the room it was last heard in (stored): what re-attaching
        /// it needs when it comes back from a night away.
        var trace = AccessoryTrace()
        /// Its product's name (the session's accessory says it too; kept here so that one
        /// lookup gives the runtime everything it decodes an advertisement with).
        @usableFromInline let product: String
    }

    public let configuration: EngineConfiguration
    /// The AccessorySetupKit session.
    public internal(set) var session: SetupSession
    /// The AudioAccessoryKit registry.
    public internal(set) var registry: AccessoryControlRegistry
    /// Routed sources: source -> accessory. A source absent here is on `fallback`.
    public internal(set) var routes: [BluetoothAddress: BluetoothAddress] = [:]
    /// Whether the configured migration has run.
    public internal(set) var migrationComplete: Bool

    @usableFromInline var records = AccessoryTable<Record>()
    /// Followed address -> the accessory followed to it (``Record/followedAddress`` read
    /// backwards), so the runtime attributes an advertisement with one lookup.
    @usableFromInline var followedIndex: [BluetoothAddress: BluetoothAddress] = [:]
    /// Alias -> the accessory it names (``Record/alias`` read backwards).
    var aliasIndex: [BluetoothAddress: BluetoothAddress] = [:]
    /// Proximity profile -> the accessories without an IRK that have it (``Record/trace``), so
    /// a look-alike's candidates are found without a scan of every accessory.
    var profileIndex: [ProximityProfile: Set<BluetoothAddress>] = [:]
    /// Names given to source devices at run time (`source/name`, stored). The configuration's
    /// (``EngineConfiguration/sourceNames``) win: ``sourceName(of:)``.
    public internal(set) var runtimeSourceNames: [BluetoothAddress: String]
    /// source -> accessories whose configuration lists it, so a route is recomputed
    /// from a handful of accessories instead of all of them.
    var sourceIndex: [BluetoothAddress: [BluetoothAddress]] = [:]
    /// When the next availability expiry can happen (nil: nothing available).
    var availabilityCheckAt: Timestamp?
    /// No room expires before this (nil: no accessory has a room); see `expireRooms`.
    var roomCheckAt: Timestamp?
    /// Debounce deadlines in the order they were set. The window is constant and time only
    /// moves forward, so the queue is sorted; an entry whose filter was restarted, reverted or
    /// removed since is skipped when it comes up (the restart pushed a newer entry).
    var placementQueue: [(deadline: Timestamp, id: BluetoothAddress)] = []
    var placementQueueHead = 0
    let productsByName: [String: Product]
    let debounce: Int64
    let availabilityTimeout: Int64

    // Scratch for the step in progress; empty between steps.
    var outputs: [EngineOutput] = []
    var changed: [BluetoothAddress] = []

    /// Creates an engine over restored state. Nothing is emitted until `.activate`.
    public init(configuration: EngineConfiguration, restored: RestoredState = .init()) {
        self.configuration = configuration
        self.productsByName = Dictionary(configuration.products.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.debounce = max(0, configuration.switching.placementDebounceMilliseconds)
        self.availabilityTimeout = configuration.switching.availabilityTimeoutSeconds * 1000
        let session = SetupSession(
            products: configuration.products, accessories: restored.accessories,
            immediateRSSI: configuration.switching.immediateRSSI,
            availabilityTimeoutMilliseconds: configuration.switching.availabilityTimeoutSeconds * 1000)
        self.session = session
        // Registrations of accessories no longer known are dropped: a registration needs a paired accessory.
        self.registry = AccessoryControlRegistry(registrations: restored.registrations.filter { session.accessories[$0.key] != nil })
        self.migrationComplete = restored.migrationComplete
        self.runtimeSourceNames = restored.sourceNames
        for accessory in session.accessories.values {
            var record = makeRecord(for: accessory)
            record.keys = restored.keys[accessory.id] ?? AccessoryKeys()
            record.homeSources = restored.homeSources[accessory.id] ?? []
            insertRecord(record, for: accessory.id)
            setFollowedAddress(accessory.id, restored.followedAddresses[accessory.id])
            setAlias(accessory.id, restored.aliases[accessory.id])
            setTrace(accessory.id, restored.traces[accessory.id] ?? AccessoryTrace())
        }
    }

    /// Handles one input at a time.
    /// - Parameters:
    ///   - input: what happened.
    ///   - now: the current time, from the runtime's clock.
    public mutating func handle(_ input: EngineInput, at now: Timestamp) -> EngineStep {
        var result: RequestResult?
        switch input {
        case .activate: result = activate(now: now)
        case .invalidate: result = shutdown()
        case .request(let request, let role): result = handle(request, role: role, now: now)
        case .report(let report): apply(report, now: now)
        case .sighting(let sighting): observe(sighting, now: now)
        case .tick: tick(now: now)
        case .undoReattach(let id, let address): undoReattach(id, from: address, now: now)
        case .reload(let stored, let ids, let routes): reload(stored, ids: ids, routes: routes, now: now)
        }
        flushChanged()
        let step = EngineStep(result: result, outputs: outputs)
        outputs = []
        return step
    }

    // MARK: Read access for snapshots

    /// The state object of one accessory.
    /// How many registrations `status(of:)` answers for, without building their states
    /// (`bridge/info`, `bridge/health` and `/metrics` count them; at 10,000 that was a
    /// tenth of the startup).
    public var registeredAccessoryCount: Int {
        registry.registrations.keys.count { session.accessories[$0] != nil && records[$0] != nil }
    }

    public func status(of id: BluetoothAddress) -> AccessoryStatus? {
        guard let accessory = session.accessories[id], let record = records[id] else { return nil }
        return AccessoryStatus(
            accessory: accessory, registration: registry[id], worn: record.worn, sources: record.tracker.sources,
            // A route to this accessory needs the source in its configuration, so only those are looked up.
            routes: listedSources(id).filter { routes[$0] == id }.sorted(), available: record.available,
            rssi: record.rssi, gateway: record.gateway, battery: record.battery, lastSeen: record.lastSeen,
            lastError: record.lastError, heardFrom: record.heardFrom, identity: record.attribution, keys: record.keys.presence,
            // An accessory nobody hears is in no room (its tracker is reset then; this also
            // covers the moment between the timeout and the reset).
            model: record.model, room: record.available ? record.room.room : nil, homeSources: record.homeSources, alias: record.alias,
            headTracking: headTrackingState(registry[id], active: record.headTrackingActive))
    }

    /// The keys of every accessory that has any (for the runtime's resolver and decoders; the
    /// engine's outputs never carry them to a payload).
    public var keys: [BluetoothAddress: AccessoryKeys] {
        records.compactMapValues { $0.keys.isEmpty ? nil : $0.keys }
    }

    /// The address each accessory was last followed to without a key.
    public var followedAddresses: [BluetoothAddress: BluetoothAddress] {
        records.compactMapValues { $0.followedAddress }
    }

    // MARK: Read access for attributing an advertisement
    //
    // Inlinable: the runtime reads these for every message from an engine kept in a class,
    // and calling a method of the engine from another module copies the whole value first
    // (a retain of every table); inlined, only the table looked into is read.

    /// The product a known accessory is; nil for an address that is no accessory's id.
    @inlinable @inline(__always)
    public func product(of id: BluetoothAddress) -> String? {
        session.accessories.index(forKey: id).map { session.accessories.values[$0].product }
    }

    /// A known accessory's product and keys, for decoding its advertisement (one lookup).
    @inlinable @inline(__always)
    public func advertiser(_ id: BluetoothAddress) -> (product: String, keys: AccessoryKeys)? {
        records.index(forKey: id).map { (records.values[$0].product, records.values[$0].keys) }
    }

    /// Where an accessory was last followed to without a key.
    @inlinable @inline(__always)
    public func followedAddress(of id: BluetoothAddress) -> BluetoothAddress? {
        records.index(forKey: id).flatMap { records.values[$0].followedAddress }
    }

    /// What re-attaching the accessory needs (its profile, its last room).
    public func trace(of id: BluetoothAddress) -> AccessoryTrace {
        records.index(forKey: id).map { records.values[$0].trace } ?? AccessoryTrace()
    }

    /// How the accessory followed to an address was found there (followed, or re-attached).
    public func followedAttribution(of id: BluetoothAddress) -> IdentityAttribution {
        records.index(forKey: id).map { records.values[$0].followedHow } ?? .followed
    }

    /// The accessory last followed to `address` without a key. One with an IRK is resolved by
    /// it instead: an address its key does not resolve is not its own.
    @inlinable @inline(__always)
    public func accessory(followedTo address: BluetoothAddress) -> BluetoothAddress? {
        guard let id = followedIndex[address], let index = records.index(forKey: id) else { return nil }
        return records.values[index].followedAddress == address && records.values[index].keys.irk == nil ? id : nil
    }

    /// All accessory state objects, sorted by id (`bridge/accessories`); empty until activated.
    public var statuses: [AccessoryStatus] {
        accessories.compactMap { status(of: $0.id) }
    }

    /// Known accessories sorted by id. As with `ASAccessorySession.accessories`, the list is
    /// valid only once the session is activated; before that it is empty.
    public var accessories: [Accessory] {
        guard session.state != .idle else { return [] }
        return session.accessories.values.sorted { $0.id < $1.id }
    }

    /// Where a source's audio goes now.
    public func route(for source: BluetoothAddress) -> RouteTarget {
        routes[source].map(RouteTarget.accessory) ?? .fallback
    }

    /// The presented picker, nil when idle.
    @inlinable @inline(__always)
    public var picker: Picker? { session.picker }

    /// The earliest time a `.tick` has work (debounce, picker timeout, availability and room
    /// expiry), for the runtime's timer.
    public var nextDeadline: Timestamp? {
        var deadline = session.nextDeadline
        if let due = availabilityCheckAt, deadline.map({ due < $0 }) ?? true { deadline = due }
        if let due = roomCheckAt, deadline.map({ due < $0 }) ?? true { deadline = due }
        if placementQueueHead < placementQueue.count {
            let due = placementQueue[placementQueueHead].deadline
            if deadline.map({ due < $0 }) ?? true { deadline = due }
        }
        return deadline
    }

    // MARK: Helpers shared by the extensions

    mutating func addRecord(for accessory: Accessory) {
        insertRecord(makeRecord(for: accessory), for: accessory.id)
    }

    /// Puts a record in ``records`` and indexes its registration's sources.
    mutating func insertRecord(_ record: Record, for id: BluetoothAddress) {
        records[id] = record
        if let configuration = registry[id]?.configuration { reindex(id, old: [], new: configuration.sources) }
    }

    /// A fresh record for an accessory and its current registration (the caller indexes its sources).
    func makeRecord(for accessory: Accessory) -> Record {
        let product = productsByName[accessory.product]
        let configuration = registry[accessory.id]?.configuration
        return Record(
            // The wear reading follows the committed placement until the accessory says more,
            // so a restart does not show a placement with `worn` unknown.
            worn: configuration?.devicePlacement?.isWorn,
            hardware: product?.hardware ?? .inEarBud,
            hardwareCapabilities: product?.capabilities ?? [],
            autoRegister: product?.autoRegister ?? false,
            filter: PlacementFilter(debounceMilliseconds: debounce, committed: configuration?.devicePlacement),
            tracker: SourceTracker(sources: configuration?.sources ?? []),
            product: accessory.product)
    }

    /// Records an accessory's trace, keeping ``profileIndex`` in step (an accessory with an
    /// IRK is never a look-alike's: its key says which addresses are its own).
    mutating func setTrace(_ id: BluetoothAddress, _ trace: AccessoryTrace) {
        guard let index = records.index(forKey: id) else { return }
        if let old = records.values[index].trace.profile { profileIndex[old]?.remove(id) }
        records.values[index].trace = trace
        indexProfile(id)
    }

    /// Puts the accessory under its profile in ``profileIndex`` when it has no IRK, or takes it out.
    mutating func indexProfile(_ id: BluetoothAddress) {
        guard let index = records.index(forKey: id), let profile = records.values[index].trace.profile else { return }
        if records.values[index].keys.irk == nil {
            profileIndex[profile, default: []].insert(id)
        } else {
            profileIndex[profile]?.remove(id)
        }
    }

    /// The accessories a look-alike with `profile` could be (household.md): without an IRK,
    /// unavailable (heard by nobody lately, or not since the start), with that profile; each
    /// with the room it was last heard in. Sorted by id.
    public func awayAccessories(matching profile: ProximityProfile) -> [(id: BluetoothAddress, room: String?)] {
        guard let ids = profileIndex[profile] else { return [] }
        return ids.sorted().compactMap { id in
            guard let index = records.index(forKey: id), !records.values[index].available, records.values[index].keys.irk == nil else {
                return nil
            }
            return (id, records.values[index].trace.room)
        }
    }

    /// Records an accessory's alias (nil: none), keeping ``aliasIndex`` in step.
    mutating func setAlias(_ id: BluetoothAddress, _ alias: BluetoothAddress?) {
        guard let index = records.index(forKey: id) else { return }
        if let old = records.values[index].alias, aliasIndex[old] == id { aliasIndex[old] = nil }
        records.values[index].alias = alias
        if let alias { aliasIndex[alias] = id }
    }

    /// Records where an accessory was followed to (nil: nowhere), keeping ``followedIndex`` in step.
    mutating func setFollowedAddress(_ id: BluetoothAddress, _ address: BluetoothAddress?) {
        guard let index = records.index(forKey: id) else { return }
        if let old = records.values[index].followedAddress, followedIndex[old] == id { followedIndex[old] = nil }
        records.values[index].followedAddress = address
        if let address { followedIndex[address] = id }
    }

    mutating func emit(_ output: EngineOutput) {
        outputs.append(output)
    }

    mutating func markChanged(_ id: BluetoothAddress) {
        if !changed.contains(id) { changed.append(id) }
    }

    mutating func flushChanged() {
        guard !changed.isEmpty else { return }
        for id in changed {
            if let status = status(of: id) { outputs.append(.accessoryChanged(status)) }
        }
        changed.removeAll(keepingCapacity: true)
    }

    mutating func emitEvents(_ events: [SetupEvent]) {
        for event in events { outputs.append(.event(event)) }
    }

    mutating func publishError(_ error: AccessoryControlDevice.Error, for id: BluetoothAddress) {
        // An accessory the session does not know has no error topic: the request's response
        // carries the error, and no topic is created for a device that does not exist.
        guard session.accessories.index(forKey: id) != nil else { return }
        if records[id] != nil {
            records[id]?.lastError = error
            markChanged(id)
        }
        emit(.accessoryError(id, error))
    }

    mutating func reindex(_ id: BluetoothAddress, old: [BluetoothAddress], new: [BluetoothAddress]) {
        for source in old where !new.contains(source) {
            sourceIndex[source]?.removeAll { $0 == id }
            if sourceIndex[source]?.isEmpty == true { sourceIndex[source] = nil }
        }
        for source in new where !old.contains(source) {
            sourceIndex[source, default: []].append(id)
        }
    }
}
