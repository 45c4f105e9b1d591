extension BridgeEngine {
    /// Recomputes the routes of some sources and publishes a route change and its
    /// decisions for each one that changed (and nothing for the others).
    /// - Parameters:
    ///   - subject: the accessory whose change caused the recomputation, if one did. When a
    ///     source moves from it to another accessory, that accessory's route (and the source's
    ///     route topic) says `other_accessory_released`: the subject's change is not its cause.
    ///   - reason: the cause, per source.
    mutating func recomputeRoutes(
        _ sources: [BluetoothAddress], subject: BluetoothAddress?, now: Timestamp, reason: (BluetoothAddress) -> DecisionReason
    ) {
        var seen: [BluetoothAddress] = []
        for source in sources where !seen.contains(source) {
            seen.append(source)
            var best: SwitchingPolicy.Contender?
            for id in sourceIndex[source] ?? [] {
                guard let record = records[id],
                    let isPrimary = SwitchingPolicy.eligibility(of: registry[id], available: record.available, for: source)
                else { continue }
                let contender = SwitchingPolicy.Contender(accessory: id, isPrimary: isPrimary, wornSince: record.wornSince)
                if best.map({ SwitchingPolicy.beats(contender, $0) }) ?? true { best = contender }
            }
            let old = routes[source]
            let new = best?.accessory
            guard old != new else { continue }
            routes[source] = new
            let why = reason(source)
            let routeReason: DecisionReason =
                if let subject, old == subject, let new, new != subject { .otherAccessoryReleased } else { why }
            emit(
                .routeChanged(
                    RouteChange(
                        source: source, previous: old.map(RouteTarget.accessory) ?? .fallback,
                        target: new.map(RouteTarget.accessory) ?? .fallback, reason: routeReason)))
            if let old {
                emit(
                    .decision(
                        Decision(
                            action: .release, accessory: old, source: source, reason: why,
                            placement: registry[old]?.configuration.devicePlacement)))
                markChanged(old)
            }
            if let new {
                emit(
                    .decision(
                        Decision(
                            action: .route, accessory: new, source: source, reason: routeReason,
                            placement: registry[new]?.configuration.devicePlacement)))
                markChanged(new)
            }
        }
    }

    /// Every source some registration lists, sorted: each has a route (maybe `fallback`).
    public var listedSourceAddresses: [BluetoothAddress] { sourceIndex.keys.sorted() }

    /// The sources an accessory's registration lists (routes to it are a subset).
    func listedSources(_ id: BluetoothAddress) -> [BluetoothAddress] {
        registry[id]?.configuration.sources ?? []
    }
}
