import AccessoryKit
import JSON
import MQTT

/// Cluster mode (docs/scaling.md): what this instance owns decides what it handles and
/// publishes. Every instance hears every gateway and holds every accessory in its engine (so
/// identity resolution works for all of them); only the owner of an accessory's partition
/// changes it, stores it, publishes it and answers for it.
extension BridgeRuntime {
    /// Whether this instance handles the telemetry `input`: the owner of the accessory it is
    /// about; for an advertisement of no paired accessory (a picker candidate), the holder
    /// of partition 0, whose picker it is.
    func handles(_ input: EngineInput) -> Bool {
        guard let ownership = cluster?.ownership else { return true }
        switch input {
        case .sighting(let sighting):
            guard core.engine.session.accessories[sighting.address] != nil else { return ownership.ownsBridge }
            return ownership.owns(sighting.address)
        case .report(let report): return ownership.owns(report.accessory)
        case .activate, .invalidate, .request, .tick, .reload: return true
        }
    }

    /// Whether this instance answers `request`: the owner of the accessory it names; for
    /// the bridge's requests (the picker, `health`, one that could not be decoded), the holder
    /// of partition 0. Exactly one live instance answers each.
    func answers(_ request: IncomingRequest) -> Bool {
        guard let ownership = cluster?.ownership else { return true }
        return request.accessory.map(ownership.owns) ?? ownership.ownsBridge
    }

    /// Whether this instance does the bridge's work (the picker, the pairing form).
    var doesBridgeWork: Bool { cluster?.ownership.ownsBridge ?? true }

    /// One event of the membership thread.
    func handle(_ event: ClusterEvent) async {
        guard cluster != nil else { return }
        switch event {
        case .ownership(let held, let members): await ownershipChanged(held: held, members: members)
        case .releasing(let partitions): await release(partitions)
        case .changed(let ids): await reload(ids)
        case .loadAgain:
            guard let state = cluster else { return }
            await ownershipChanged(held: state.reported, members: state.members)
        }
    }

    /// Partitions gained are loaded from storage and their retained topics republished;
    /// partitions lost (the session ended) are dropped with the writes that wait for them.
    private func ownershipChanged(held: [Int: Int64], members: [String]) async {
        guard var state = cluster else { return }
        state.reported = held
        let before = state.ownership
        let departed = state.members.filter { !members.contains($0) && $0 != before.instance }
        state.ownership.held = held
        state.members = members
        setOwnership(state)
        let lost = Set(before.held.keys).subtracting(held.keys)
        if !lost.isEmpty {
            core.dropDeferredWrites { lost.contains(before.partitioning.partition(of: $0)) }
            logger.warning("cluster: lost partitions \(Self.list(lost)) (the database session ended); another instance takes them over")
        }
        if held[0] != nil {
            // A peer that died cannot say so itself: its instance topic is set offline by
            // the holder of partition 0.
            for instance in departed { publisher.publishInstance(instance, online: false, partitions: [], accessories: 0, at: clock()) }
        }
        let gained = held.filter { before.held[$0.key] != $0.value }
        if !gained.isEmpty {
            guard await takeOver(Set(gained.keys)) else {
                // Not loaded, so not owned yet: working from what the engine knew could write an
                // older registration over one the previous owner stored (and acknowledged).
                // The latest holdings are loaded again in a second.
                state.ownership.held = held.filter { gained[$0.key] == nil }
                setOwnership(state)
                let sink = eventSink
                Task {
                    try? await Task.sleep(for: .seconds(1))
                    sink.yield(.cluster(.loadAgain))
                }
                publishInstanceState()
                return
            }
            logger.info(
                "cluster: holding partitions \(Self.list(Set(gained.keys))) (now \(held.count) of \(state.ownership.partitioning.count))")
            // Every retained topic this instance now answers for: the new owner republishes
            // what the previous one published (its state, availability, discovery, routes).
            republishEverything()
        }
        publishInstanceState()
    }

    /// Hands `partitions` over to the instances that joined: nothing more is handled or
    /// published for them, the writes that wait are stored, then the locks are released.
    private func release(_ partitions: Set<Int>) async {
        guard var state = cluster else { return }
        for partition in partitions { state.ownership.held[partition] = nil }
        setOwnership(state)
        await core.flushDeferredWrites(at: clock(), context: "hand-over")
        state.membership?.released(partitions)
        logger.info("cluster: handing partitions \(Self.list(partitions)) over to a joining instance")
        publishInstanceState()
    }

    /// Another instance committed changes to `ids`: only those accessories are read.
    private func reload(_ ids: Set<BluetoothAddress>) async {
        guard let stored = await load(ids.sorted(), reason: "changed by another instance") else { return }
        take(stored, ids: ids, routes: [:])
    }

    /// This instance took `partitions`: every accessory in them, known here or stored since by
    /// another instance, is taken from storage, with the routes the previous owner published
    /// (so that this instance routes nothing again that it had already routed).
    /// - Returns: false when storage could not be read (nothing changed).
    private func takeOver(_ partitions: Set<Int>) async -> Bool {
        guard let partitioning = cluster?.ownership.partitioning, let stored = await load(nil, reason: "taken over") else {
            return false
        }
        let inPartitions = { (id: BluetoothAddress) in partitions.contains(partitioning.partition(of: id)) }
        var ids = Set(core.engine.accessories.map(\.id).filter(inPartitions))
        ids.formUnion(stored.accessories.map(\.id).filter(inPartitions))
        take(stored, ids: ids, routes: publisher.mirroredRoutes.filter { inPartitions($0.value) })
        return true
    }

    /// The stored state of `ids` (all with nil), or nil when storage could not be read.
    private func load(_ ids: [BluetoothAddress]?, reason: String) async -> RestoredState? {
        switch await core.storage.load(accessories: ids) {
        case .success(let state): return state
        case .failure(let error):
            diagnostics.storageFailed(error, context: "cluster reload (\(reason))")
            return nil
        }
    }

    /// Takes `stored`'s state of `ids` into the engine and publishes what changes for the
    /// accessories this instance owns.
    private func take(_ stored: RestoredState, ids: Set<BluetoothAddress>, routes: [BluetoothAddress: BluetoothAddress]) {
        let now = clock()
        let outputs = core.reload(ids.sorted(), from: stored, routes: routes, at: now)
        // Products and keys come with the outputs; followed addresses only from storage (a
        // changed one alone makes no output). Learning everything again (`know`) would rebuild
        // the resolver and drop its cache at every change another instance makes.
        ingest.track(outputs)
        ingest.adoptFollowed(stored.followedAddresses.filter { ids.contains($0.key) })
        guard !outputs.isEmpty else { return }
        publisher.publish(outputs, at: now, engine: core.engine)
    }

    /// `bridge/instances/<instance>`: this instance's partitions and how many accessories they hold.
    func publishInstanceState() {
        guard let ownership = cluster?.ownership else { return }
        let owned = core.engine.accessories.count { ownership.owns($0.id) }
        publisher.publishInstance(
            ownership.instance, online: true, partitions: ownership.held.keys.sorted(), accessories: owned, at: clock())
    }

    /// The cluster's own subscriptions: `bridge/state`, every accessory's state and every
    /// source's route.
    func clusterMessage(_ message: MQTTMessage) {
        if message.topic == topics.bridgeState {
            bridgeStateMessage(message.payload)
        } else if let id = topics.accessoryID(inStateTopic: message.topic) {
            publisher.mirrorState(of: id, message.payload)
        } else if let source = topics.sourceID(inRouteTopic: message.topic) {
            // `"target"` is the accessory's address, or `fallback`; an empty payload clears it.
            let target = (try? JSONParser.parse(message.payload))?["target"]?.stringValue.flatMap { BluetoothAddress($0) }
            publisher.mirroredRoutes[source] = target
        }
    }

    /// A peer's will said `offline` on `bridge/state` while this instance is alive: the bridge
    /// as a whole is still online, so the state is set back.
    private func bridgeStateMessage(_ payload: [UInt8]) {
        guard !shuttingDown, connection.isConnected, payload == Publisher.offlinePayload else { return }
        logger.info("cluster: bridge/state said offline (an instance's will); this instance is alive, so it is online again")
        publisher.publishOnline()
    }

    private func setOwnership(_ state: ClusterState) {
        cluster = state
        core.ownership = state.ownership
        publisher.ownership = state.ownership
    }

    private static func list(_ partitions: Set<Int>) -> String {
        partitions.sorted().map(String.init).joined(separator: ",")
    }
}

extension BridgeRuntime {
    /// Starts the membership thread: this instance's PostgreSQL session, its locks, its
    /// heartbeat and the notifications of other instances' changes.
    func joinCluster() {
        guard var state = cluster, state.membership == nil else { return }
        let sink = eventSink
        let membership = ClusterMembership(
            configuration: configuration, logger: logger, report: { event in sink.yield(.cluster(event)) })
        state.membership = membership
        cluster = state
        membership.start()
    }

    /// Leaves the cluster at shutdown, after the last writes: this instance's topic says
    /// `offline`, and closing its session releases its partitions to the others at once.
    /// - Returns: whether this was the bridge's last live instance (always true for a single
    ///   bridge), which then says `offline` on `bridge/state`.
    func leaveCluster() async -> Bool {
        guard let state = cluster else { return true }
        publisher.publishInstance(state.ownership.instance, online: false, partitions: [], accessories: 0, at: clock())
        await state.membership?.stop()
        return state.members.allSatisfy { $0 == state.ownership.instance }
    }
}

extension ResponseError {
    /// A request over HTTP that another instance of the cluster answers.
    static func misdirected(_ request: IncomingRequest, cluster: ClusterState?) -> ResponseError {
        let what: String
        if let accessory = request.accessory, let partitioning = cluster?.ownership.partitioning {
            what =
                "accessory \(accessory) is in partition \(partitioning.partition(of: accessory)), which another instance of the cluster holds"
        } else {
            what = "the bridge's requests are answered by the instance of the cluster that holds partition 0"
        }
        return .unknown("\(what); send it on MQTT, or to that instance", accessoryControl: request.isAccessoryControl)
    }
}
