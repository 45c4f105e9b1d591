extension BridgeEngine {
    /// Recomputes the routes of some sources and publishes a route change and its
    /// decisions for each one that changed (and nothing for the others).
    mutating func recomputeRoutes(_ sources: [BluetoothAddress], now: Timestamp, reason: (BluetoothAddress) -> DecisionReason) {
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
            emit(
                .routeChanged(
                    RouteChange(
                        source: source, previous: old.map(RouteTarget.accessory) ?? .fallback,
                        target: new.map(RouteTarget.accessory) ?? .fallback, reason: why)))
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
                            action: .route, accessory: new, source: source, reason: why,
                            placement: registry[new]?.configuration.devicePlacement)))
                markChanged(new)
            }
        }
    }

    /// The sources an accessory's registration lists (routes to it are a subset).
    func listedSources(_ id: BluetoothAddress) -> [BluetoothAddress] {
        registry[id]?.configuration.sources ?? []
    }
}
