import AccessoryKit
import JSON

/// What this instance owns: the accessories it changes, stores, publishes and answers for,
/// and whether it does the bridge's own work (docs/scaling.md).
///
/// There is always one, handed once to ``RuntimeCore`` and ``Publisher``. A single bridge is
/// the cluster of one (``solo()``): it holds the only partition, so it owns every accessory
/// and the bridge, and its ``stamped(_:for:)`` adds nothing. In a cluster (`cluster.enabled`)
/// ``ClusterComponent`` changes what is held as the membership takes and hands over
/// partitions; an accessory is this instance's only while it holds the advisory lock of its
/// partition, and bridge-wide work (the picker, `health`, the bridge topics) belongs to
/// whoever holds partition 0. Everything here reads the same for both: nothing asks which
/// one it is.
final class Ownership {
    /// What stamps this instance's publications.
    enum Stamp: Sendable, Hashable {
        /// Nothing: a single bridge's payloads are the contract's as they are.
        case none
        /// `instance` and the epoch of the partition (mqtt-api.md, cluster mode).
        case instance(String)
    }

    let stamp: Stamp
    let partitioning: Partitioning
    /// The epoch of each partition held and loaded, by partition (nil: not held):
    /// `cluster_partitions.epoch` after this instance took it, higher than that of every
    /// earlier owner. An array, not a dictionary: it is asked for every output and message.
    private var epochs: [Int64?]
    /// How many partitions are held.
    private(set) var heldCount = 0
    /// Where each source's route goes as last published (by this instance, or as the broker
    /// delivered another instance's), source -> accessory; absent for `fallback`. A release
    /// must not put back to `fallback` a route another instance has since taken.
    private(set) var routes: [BluetoothAddress: BluetoothAddress] = [:]

    private init(stamp: Stamp, partitions: Int, held: [Int: Int64]) {
        self.stamp = stamp
        partitioning = Partitioning(count: partitions)
        epochs = Array(repeating: nil, count: partitions)
        hold(held)
    }

    /// A single bridge: the one partition, held from the start.
    static func solo() -> Ownership { Ownership(stamp: .none, partitions: 1, held: [0: 0]) }

    /// A cluster instance, holding `held` (nothing until the membership has taken partitions:
    /// until then nothing about an accessory is published, stored or answered).
    convenience init(instance: String, partitions: Int, held: [Int: Int64] = [:]) {
        self.init(stamp: .instance(instance), partitions: partitions, held: held)
    }

    // MARK: - What is owned

    /// The partitions held, each with its epoch.
    var held: [Int: Int64] {
        Dictionary(uniqueKeysWithValues: epochs.enumerated().compactMap { partition, epoch in epoch.map { (partition, $0) } })
    }

    /// Whether the accessory's partition is held.
    func owns(_ accessory: BluetoothAddress) -> Bool {
        epochs[partitioning.partition(of: accessory)] != nil
    }

    /// The epoch the accessory's partition is held at (nil: not held).
    func epoch(of accessory: BluetoothAddress) -> Int64? {
        epochs[partitioning.partition(of: accessory)]
    }

    /// Whether this instance does the bridge-wide work: partition 0 is held.
    var ownsBridge: Bool { epochs[0] != nil }

    /// Whether every partition is held: nobody else can own an accessory, or have routed a
    /// source.
    var ownsEverything: Bool { heldCount == partitioning.count }

    /// The epoch of partition 0 (bridge-wide responses carry it).
    var bridgeEpoch: Int64? { epochs[0] }

    // MARK: - What is handled, answered and published

    /// Whether this instance handles the telemetry `input`: the owner of the accessory it is
    /// about; for an advertisement of no paired accessory (a picker candidate), the holder of
    /// partition 0, whose picker it is. Every engine holds every accessory (to recognise them),
    /// but only the owner changes one.
    func handles(_ input: EngineInput, engine: EngineView) -> Bool {
        if ownsEverything { return true }
        switch input {
        case .sighting(let sighting):
            guard engine.knows(sighting.accessoryID) else { return ownsBridge }
            return owns(sighting.accessoryID)
        case .report(let report): return owns(report.accessory)
        case .undoReattach(let id, _): return owns(id)
        case .activate, .invalidate, .request, .tick, .reload: return true
        }
    }

    /// Whether this instance answers `request`: the owner of the accessory it names; for the
    /// bridge's requests (the picker, `health`, one that could not be decoded), the holder of
    /// partition 0. Exactly one live instance answers each.
    func answers(_ request: IncomingRequest) -> Bool {
        request.accessory.map(owns) ?? ownsBridge
    }

    /// Whether this instance publishes what `output` says: an accessory's output only while it
    /// owns the accessory, the picker's and the session's only while it does the bridge's work.
    func publishes(_ output: EngineOutput) -> Bool {
        switch output {
        case .event, .pickerChanged: return ownsBridge
        case .accessoryChanged(let status): return owns(status.accessory.id)
        case .accessoryRemoved(let id), .availabilityChanged(let id, _), .registrationChanged(let id, _), .accessoryError(let id, _),
            .registrationReevaluated(let id, _, _), .keysChanged(let id, _), .sensorFrame(let id, _), .sensorFrameRefused(let id, _):
            return owns(id)
        case .decision(let decision): return owns(decision.accessory)
        case .routeChanged(let change):
            // By the owner of the accessory it goes to or, back to `fallback`, of the one it left.
            guard let accessory = change.target.accessory ?? change.previous.accessory else { return ownsBridge }
            return owns(accessory)
        // Every instance renders the name; the route goes out again from its target's owner.
        case .storage, .sourceNamed: return true
        }
    }

    /// Whether `change` puts back to `fallback` a route the broker shows going to another
    /// instance's accessory: a source two instances' accessories list, each engine hearing only
    /// its own. That release is not published (the decision still says it).
    func leavesRoute(_ change: RouteChange) -> Bool {
        guard change.target == .fallback, let current = routes[change.source] else { return false }
        return !owns(current)
    }

    /// Whether a route this instance published is republished (after a connection): the
    /// owner of its target publishes it; a route to `fallback` only an instance that holds
    /// everything, since any other may have routed the source to an accessory it owns.
    func republishes(routeTo target: BluetoothAddress?) -> Bool {
        target.map(owns) ?? ownsEverything
    }

    /// `payload` with the instance and the epoch (of the accessory's partition, or partition
    /// 0's), as the ``stamp`` says; a single bridge's as it is.
    func stamped(_ payload: JSONValue, for accessory: BluetoothAddress?) -> JSONValue {
        guard case .instance(let instance) = stamp, case .object(var pairs) = payload else { return payload }
        let epoch = accessory.map { self.epoch(of: $0) } ?? bridgeEpoch
        pairs.append(("instance", .string(instance)))
        pairs.append(("epoch", epoch.map { .int(Int($0)) } ?? .null))
        return .object(pairs)
    }

    // MARK: - Changes (ClusterComponent)

    /// The partitions held and loaded now (partitions outside the count are not).
    func hold(_ partitions: [Int: Int64]) {
        epochs = epochs.indices.map { partitions[$0] }
        heldCount = epochs.count { $0 != nil }
    }

    /// Where `source`'s route goes now (nil: `fallback`, or cleared).
    func route(_ source: BluetoothAddress, goesTo accessory: BluetoothAddress?) { routes[source] = accessory }
}
