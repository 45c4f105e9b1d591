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
    private let configuration: BridgeConfiguration
    private let instance: String
    private let topics: Topics
    private let ownership: Ownership
    /// Every accessory's state as the broker holds it: the cluster's `bridge/accessories`.
    private let states = MirroredStates()
    var accessoryListing: (any AccessoryListing)? { states }

    /// Where this instance is in the cluster's life.
    enum Life {
        /// Not started yet; `joins`: whether ``start(_:)`` starts the membership thread (tests
        /// that post ``ClusterEvent``s themselves turn it off).
        case notStarted(joins: Bool)
        /// A member: the thread holding this instance's PostgreSQL session and locks (nil when
        /// a test posts the events), and the partitions it last said are held (a partition
        /// whose state could not be loaded yet is here but not in ``ownership``).
        case member(ClusterMembership?, reported: [Int: Int64])
        /// Left at shutdown.
        case left
    }

    private(set) var life = Life.notStarted(joins: true)
    /// The live instances, sorted, as the membership last saw them.
    private var members: [String] = []

    /// The topics it mirrors, by tag.
    private enum Mirror: Int {
        case bridgeState, accessoryState, sourceRoute
    }

    init(configuration: BridgeConfiguration, ownership: Ownership) {
        self.configuration = configuration
        instance = configuration.cluster.instance
        topics = Topics(base: configuration.mqtt.baseTopic)
        self.ownership = ownership
    }

    /// For tests that post ``ClusterEvent``s themselves: the membership thread is not started.
    func postsItsOwnEvents() { life = .notStarted(joins: false) }

    /// A peer's will says `offline` on `bridge/state`; the states of all instances' accessories
    /// make the cluster's `bridge/accessories`; the routes are taken over with the accessories.
    var claims: [TopicClaim] {
        [
            .mirrored(topics.bridgeState, tag: Mirror.bridgeState.rawValue),
            .mirrored(topics.accessoryStateFilter, tag: Mirror.accessoryState.rawValue),
            .mirrored(topics.sourceRouteFilter, tag: Mirror.sourceRoute.rawValue),
        ]
    }

    /// Starts the membership thread: this instance's PostgreSQL session, its locks, its
    /// heartbeat and the notifications of other instances' changes.
    func start(_ context: ComponentContext) async {
        guard case .notStarted(let joins) = life else { return }
        guard joins else { return life = .member(nil, reported: [:]) }
        let mailbox = context.mailbox
        let membership = ClusterMembership(configuration: configuration, logger: context.logger, report: { mailbox.post($0) })
        life = .member(membership, reported: [:])
        membership.start()
    }

    private var membership: ClusterMembership? { if case .member(let membership, _) = life { membership } else { nil } }

    private var reported: [Int: Int64] { if case .member(_, let reported) = life { reported } else { [:] } }

    // MARK: - What the broker shows

    func handle(_ message: MQTTMessage, tag: Int, at now: Timestamp, _ context: ComponentContext) async {
        switch Mirror(rawValue: tag) {
        case .bridgeState:
            // A peer's will said `offline` while this instance is alive: the bridge as a whole
            // is still online, so the state is set back.
            guard !context.isShuttingDown, context.isConnected, message.payload == Publisher.offlinePayload else { return }
            context.logger.info("cluster: bridge/state said offline (an instance's will); this instance is alive, so it is online again")
            context.publish(topics.bridgeState, Publisher.onlinePayload.bytes, retain: true)
        case .accessoryState:
            guard let id = topics.accessoryID(inStateTopic: message.topic) else { return }
            states.delivered(id, message.payload)
        case .sourceRoute:
            guard let source = topics.sourceID(inRouteTopic: message.topic) else { return }
            // `"target"` is the accessory's address, or `fallback`; an empty payload clears it.
            let target = (try? JSONParser.parse(message.payload))?["target"]?.stringValue.flatMap { BluetoothAddress($0) }
            ownership.route(source, goesTo: target)
        case nil:
            break
        }
    }

    /// The routes this instance published go where they say at once, before the broker
    /// delivers them back.
    func applied(_ outputs: [EngineOutput], at now: Timestamp, _ context: ComponentContext) {
        for case .routeChanged(let change) in outputs
        where ownership.publishes(.routeChanged(change)) && !ownership.leavesRoute(change) {
            ownership.route(change.source, goesTo: change.target.accessory)
        }
    }

    // MARK: - The membership's events

    func handle(event: any Sendable, _ context: ComponentContext) async {
        guard let event = event as? ClusterEvent else { return }
        switch event {
        case .ownership(let held, let members): await ownershipChanged(held: held, members: members, context)
        case .releasing(let partitions): await release(partitions, context)
        case .changed(let ids): await reload(ids, context)
        case .loadAgain: await ownershipChanged(held: reported, members: members, context)
        }
    }

    /// Partitions gained are loaded from storage and their retained topics republished;
    /// partitions lost (the session ended) are dropped with the writes that wait for them.
    private func ownershipChanged(held: [Int: Int64], members: [String], _ context: ComponentContext) async {
        if case .member(let membership, _) = life { life = .member(membership, reported: held) }
        let before = ownership.held
        let departed = self.members.filter { !members.contains($0) && $0 != instance }
        ownership.hold(held)
        self.members = members
        let lost = Set(before.keys).subtracting(held.keys)
        if !lost.isEmpty {
            let partitioning = ownership.partitioning
            context.storage.dropDeferredWrites { lost.contains(partitioning.partition(of: $0)) }
            context.logger.warning(
                "cluster: lost partitions \(Self.list(lost)) (the database session ended); another instance takes them over")
        }
        if held[0] != nil {
            // A peer that died cannot say so itself: its instance topic is set offline by
            // the holder of partition 0.
            for peer in departed {
                publishInstance(peer, online: false, partitions: [], accessories: 0, context)
            }
        }
        let gained = held.filter { before[$0.key] != $0.value }
        if !gained.isEmpty {
            guard await takeOver(Set(gained.keys), context) else {
                // Not loaded, so not owned yet: working from what the engine knew could write an
                // older registration over one the previous owner stored (and acknowledged).
                // The latest holdings are loaded again in a second.
                ownership.hold(held.filter { gained[$0.key] == nil })
                context.mailbox.post(ClusterEvent.loadAgain, after: .seconds(1))
                publishInstanceState(context)
                return
            }
            context.logger.info(
                "cluster: holding partitions \(Self.list(Set(gained.keys))) (now \(held.count) of \(ownership.partitioning.count))")
            // Every retained topic this instance now answers for: the new owner republishes
            // what the previous one published (its state, availability, discovery, routes).
            // This component's own instance topic goes out with it.
            context.republishEverything()
            return
        }
        publishInstanceState(context)
    }

    /// Hands `partitions` over to the instances that joined: nothing more is handled or
    /// published for them, the writes that wait are stored, then the locks are released.
    private func release(_ partitions: Set<Int>, _ context: ComponentContext) async {
        ownership.hold(ownership.held.filter { !partitions.contains($0.key) })
        await context.storage.flushDeferredWrites(at: context.now(), context: "hand-over")
        membership?.released(partitions)
        context.logger.info("cluster: handing partitions \(Self.list(partitions)) over to a joining instance")
        publishInstanceState(context)
    }

    /// Another instance committed changes to `ids`: only those accessories are read.
    private func reload(_ ids: Set<BluetoothAddress>, _ context: ComponentContext) async {
        guard let stored = await load(ids.sorted(), reason: "changed by another instance", context) else { return }
        await context.perform(.reload(ids.sorted(), from: stored, routes: [:]))
    }

    /// This instance took `partitions`: every accessory in them, known here or stored since by
    /// another instance, is taken from storage, with the routes the previous owner published
    /// (so that this instance routes nothing again that it had already routed).
    /// - Returns: false when storage could not be read (nothing changed).
    private func takeOver(_ partitions: Set<Int>, _ context: ComponentContext) async -> Bool {
        guard let stored = await load(nil, reason: "taken over", context) else { return false }
        let partitioning = ownership.partitioning
        let inPartitions = { (id: BluetoothAddress) in partitions.contains(partitioning.partition(of: id)) }
        var ids = Set(context.engine.engine.accessories.map(\.id).filter(inPartitions))
        ids.formUnion(stored.accessories.map(\.id).filter(inPartitions))
        let routes = ownership.routes.filter { inPartitions($0.value) }
        await context.perform(.reload(ids.sorted(), from: stored, routes: routes))
        return true
    }

    /// The stored state of `ids` (all with nil), or nil when storage could not be read.
    private func load(_ ids: [BluetoothAddress]?, reason: String, _ context: ComponentContext) async -> RestoredState? {
        switch await context.storage.load(accessories: ids) {
        case .success(let state): return state
        case .failure(let error):
            context.storage.failed(error, context: "cluster reload (\(reason))")
            return nil
        }
    }

    // MARK: - Retained topics, metrics, shutdown

    func republish(at now: Timestamp, _ context: ComponentContext) { publishInstanceState(context) }

    /// `bridge/instances/<instance>`: this instance's partitions and how many accessories they hold.
    private func publishInstanceState(_ context: ComponentContext) {
        publishInstance(instance, online: true, partitions: ownership.held.keys.sorted(), accessories: ownedCount(context), context)
    }

    /// `bridge/instances/<instance>`: a cluster instance's state, partitions and accessory count.
    private func publishInstance(_ instance: String, online: Bool, partitions: [Int], accessories: Int, _ context: ComponentContext) {
        let payload: JSONValue = [
            "instance": .string(instance), "state": .string(online ? "online" : "offline"),
            "partitions": .array(partitions.map { .int($0) }), "accessories": .int(accessories),
            "at": .string(ISO8601.string(context.now())),
        ]
        context.publish(topics.bridgeInstance(instance), payload.bytes, retain: true)
    }

    private func ownedCount(_ context: ComponentContext) -> Int {
        context.engine.engine.accessories.count { ownership.owns($0.id) }
    }

    func metrics(_ text: inout MetricsText, _ context: ComponentContext) {
        text.gauge("aabridge_cluster_partitions_held", "Partitions this instance holds (cluster mode).", ownership.heldCount)
        text.gauge("aabridge_cluster_members", "Live instances of the cluster, this one included.", members.count)
        text.gauge("aabridge_cluster_accessories_owned", "Accessories in the partitions this instance holds.", ownedCount(context))
    }

    var keepsBridgeOnline: Bool { !members.allSatisfy { $0 == instance } }

    /// Leaves the cluster, after the last writes: this instance's topic says `offline`, and
    /// closing its session releases its partitions to the others at once.
    func stop(_ context: ComponentContext) async {
        publishInstance(instance, online: false, partitions: [], accessories: 0, context)
        let membership = self.membership
        life = .left
        await membership?.stop()
    }

    private static func list(_ partitions: Set<Int>) -> String {
        partitions.sorted().map(String.init).joined(separator: ",")
    }
}
