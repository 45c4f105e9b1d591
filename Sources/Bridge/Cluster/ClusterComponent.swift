import AccessoryKit
import Configuration
import JSON
import MQTT

/// Cluster mode (docs/scaling.md), as a component: the membership, what this instance holds,
/// takeovers and reloads, and what the broker shows of the other instances.
///
/// Every instance hears every gateway and holds every accessory in its engine (so identity
/// resolution works for all of them); only the owner of an accessory's partition changes it,
/// stores it, publishes it and answers for it. This component is the only writer of the
/// runtime's ``Ownership``: the membership thread reports what it holds
/// (``ClusterEvent``), and a partition counts as held once its state has been loaded.
final class ClusterComponent: RuntimeComponent {
    private let instance: String
    private let ownership: Ownership
    /// Every accessory's state as the broker holds it: the cluster's `bridge/accessories`.
    private let states = MirroredStates()
    var accessoryListing: (any AccessoryListing)? { states }
    /// The thread holding this instance's PostgreSQL session and locks (nil until started,
    /// and in tests that post ``ClusterEvent``s themselves).
    private var membership: ClusterMembership?
    /// Whether ``start(_:)`` starts the membership thread; tests that post ``ClusterEvent``s
    /// themselves turn it off.
    var joins = true
    /// The partitions the membership last said are held (a partition whose state could not be
    /// loaded yet is here but not in ``ownership``).
    private var reported: [Int: Int64] = [:]
    /// The live instances, sorted, as the membership last saw them.
    private var members: [String] = []

    init(instance: String, ownership: Ownership) {
        self.instance = instance
        self.ownership = ownership
    }

    var claims: Set<TopicClaim> { [.clusterMirrors] }

    /// Starts the membership thread: this instance's PostgreSQL session, its locks, its
    /// heartbeat and the notifications of other instances' changes.
    func start(_ runtime: BridgeRuntime) {
        guard joins else { return }
        let sink = runtime.eventSink
        let membership = ClusterMembership(
            configuration: runtime.configuration, logger: runtime.logger, report: { event in sink.yield(.cluster(event)) })
        self.membership = membership
        membership.start()
    }

    // MARK: - What the broker shows

    func handle(_ message: MQTTMessage, route: IngestRoute, _ runtime: BridgeRuntime) async {
        guard case .cluster(let topic) = route else { return }
        switch topic {
        case .bridgeState:
            // A peer's will said `offline` while this instance is alive: the bridge as a whole
            // is still online, so the state is set back.
            guard !runtime.shuttingDown, runtime.connection.isConnected, message.payload == Publisher.offlinePayload else { return }
            runtime.logger.info("cluster: bridge/state said offline (an instance's will); this instance is alive, so it is online again")
            runtime.publisher.publishOnline()
        case .accessoryState(let id):
            states.delivered(id, message.payload)
        case .sourceRoute(let source):
            // `"target"` is the accessory's address, or `fallback`; an empty payload clears it.
            let target = (try? JSONParser.parse(message.payload))?["target"]?.stringValue.flatMap { BluetoothAddress($0) }
            ownership.route(source, goesTo: target)
        }
    }

    /// The routes this instance published go where they say at once, before the broker
    /// delivers them back.
    func applied(_ outputs: [EngineOutput], _ runtime: BridgeRuntime) {
        for case .routeChanged(let change) in outputs
        where ownership.publishes(.routeChanged(change)) && !ownership.leavesRoute(change) {
            ownership.route(change.source, goesTo: change.target.accessory)
        }
    }

    // MARK: - The membership's events

    func handle(_ event: RuntimeEvent, _ runtime: BridgeRuntime) async {
        guard case .cluster(let event) = event else { return }
        switch event {
        case .ownership(let held, let members): await ownershipChanged(held: held, members: members, runtime)
        case .releasing(let partitions): await release(partitions, runtime)
        case .changed(let ids): await reload(ids, runtime)
        case .loadAgain: await ownershipChanged(held: reported, members: members, runtime)
        }
    }

    /// Partitions gained are loaded from storage and their retained topics republished;
    /// partitions lost (the session ended) are dropped with the writes that wait for them.
    private func ownershipChanged(held: [Int: Int64], members: [String], _ runtime: BridgeRuntime) async {
        reported = held
        let before = ownership.held
        let departed = self.members.filter { !members.contains($0) && $0 != instance }
        ownership.hold(held)
        self.members = members
        let lost = Set(before.keys).subtracting(held.keys)
        if !lost.isEmpty {
            let partitioning = ownership.partitioning
            runtime.core.dropDeferredWrites { lost.contains(partitioning.partition(of: $0)) }
            runtime.logger.warning(
                "cluster: lost partitions \(Self.list(lost)) (the database session ended); another instance takes them over")
        }
        if held[0] != nil {
            // A peer that died cannot say so itself: its instance topic is set offline by
            // the holder of partition 0.
            for peer in departed {
                runtime.publisher.publishInstance(peer, online: false, partitions: [], accessories: 0, at: runtime.clock())
            }
        }
        let gained = held.filter { before[$0.key] != $0.value }
        if !gained.isEmpty {
            guard await takeOver(Set(gained.keys), runtime) else {
                // Not loaded, so not owned yet: working from what the engine knew could write an
                // older registration over one the previous owner stored (and acknowledged).
                // The latest holdings are loaded again in a second.
                ownership.hold(held.filter { gained[$0.key] == nil })
                let sink = runtime.eventSink
                Task {
                    try? await Task.sleep(for: .seconds(1))
                    sink.yield(.cluster(.loadAgain))
                }
                publishInstanceState(runtime)
                return
            }
            runtime.logger.info(
                "cluster: holding partitions \(Self.list(Set(gained.keys))) (now \(held.count) of \(ownership.partitioning.count))")
            // Every retained topic this instance now answers for: the new owner republishes
            // what the previous one published (its state, availability, discovery, routes).
            // This component's own instance topic goes out with it.
            runtime.republishEverything()
            return
        }
        publishInstanceState(runtime)
    }

    /// Hands `partitions` over to the instances that joined: nothing more is handled or
    /// published for them, the writes that wait are stored, then the locks are released.
    private func release(_ partitions: Set<Int>, _ runtime: BridgeRuntime) async {
        ownership.hold(ownership.held.filter { !partitions.contains($0.key) })
        await runtime.core.flushDeferredWrites(at: runtime.clock(), context: "hand-over")
        membership?.released(partitions)
        runtime.logger.info("cluster: handing partitions \(Self.list(partitions)) over to a joining instance")
        publishInstanceState(runtime)
    }

    /// Another instance committed changes to `ids`: only those accessories are read.
    private func reload(_ ids: Set<BluetoothAddress>, _ runtime: BridgeRuntime) async {
        guard let stored = await load(ids.sorted(), reason: "changed by another instance", runtime) else { return }
        await runtime.perform(.reload(ids.sorted(), from: stored, routes: [:]), at: runtime.clock())
    }

    /// This instance took `partitions`: every accessory in them, known here or stored since by
    /// another instance, is taken from storage, with the routes the previous owner published
    /// (so that this instance routes nothing again that it had already routed).
    /// - Returns: false when storage could not be read (nothing changed).
    private func takeOver(_ partitions: Set<Int>, _ runtime: BridgeRuntime) async -> Bool {
        guard let stored = await load(nil, reason: "taken over", runtime) else { return false }
        let partitioning = ownership.partitioning
        let inPartitions = { (id: BluetoothAddress) in partitions.contains(partitioning.partition(of: id)) }
        var ids = Set(runtime.engine.engine.accessories.map(\.id).filter(inPartitions))
        ids.formUnion(stored.accessories.map(\.id).filter(inPartitions))
        let routes = ownership.routes.filter { inPartitions($0.value) }
        await runtime.perform(.reload(ids.sorted(), from: stored, routes: routes), at: runtime.clock())
        return true
    }

    /// The stored state of `ids` (all with nil), or nil when storage could not be read.
    private func load(_ ids: [BluetoothAddress]?, reason: String, _ runtime: BridgeRuntime) async -> RestoredState? {
        switch await runtime.core.storage.load(accessories: ids) {
        case .success(let state): return state
        case .failure(let error):
            runtime.diagnostics.storageFailed(error, context: "cluster reload (\(reason))")
            return nil
        }
    }

    // MARK: - Retained topics, metrics, shutdown

    func republish(_ runtime: BridgeRuntime) { publishInstanceState(runtime) }

    /// `bridge/instances/<instance>`: this instance's partitions and how many accessories they hold.
    private func publishInstanceState(_ runtime: BridgeRuntime) {
        runtime.publisher.publishInstance(
            instance, online: true, partitions: ownership.held.keys.sorted(), accessories: ownedCount(runtime), at: runtime.clock())
    }

    private func ownedCount(_ runtime: BridgeRuntime) -> Int {
        runtime.engine.engine.accessories.count { ownership.owns($0.id) }
    }

    func metrics(_ text: inout MetricsText, _ runtime: BridgeRuntime) {
        text.gauge("aabridge_cluster_partitions_held", "Partitions this instance holds (cluster mode).", ownership.heldCount)
        text.gauge("aabridge_cluster_members", "Live instances of the cluster, this one included.", members.count)
        text.gauge("aabridge_cluster_accessories_owned", "Accessories in the partitions this instance holds.", ownedCount(runtime))
    }

    var keepsBridgeOnline: Bool { !members.allSatisfy { $0 == instance } }

    /// Leaves the cluster, after the last writes: this instance's topic says `offline`, and
    /// closing its session releases its partitions to the others at once.
    func stop(_ runtime: BridgeRuntime) async {
        runtime.publisher.publishInstance(instance, online: false, partitions: [], accessories: 0, at: runtime.clock())
        await membership?.stop()
    }

    private static func list(_ partitions: Set<Int>) -> String {
        partitions.sorted().map(String.init).joined(separator: ",")
    }
}

extension ResponseError {
    /// A request over HTTP that another instance of the cluster answers.
    static func misdirected(_ request: IncomingRequest, partitioning: Partitioning) -> ResponseError {
        let what: String
        if let accessory = request.accessory {
            what =
                "accessory \(accessory) is in partition \(partitioning.partition(of: accessory)), which another instance of the cluster holds"
        } else {
            what = "the bridge's requests are answered by the instance of the cluster that holds partition 0"
        }
        return .unknown("\(what); send it on MQTT, or to that instance", accessoryControl: request.isAccessoryControl)
    }
}
