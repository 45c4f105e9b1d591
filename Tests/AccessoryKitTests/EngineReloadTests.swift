import Testing

@testable import AccessoryKit

/// `EngineInput.reload`: bridge instances sharing one database, each engine holding every
/// accessory. The peer changes an accessory through ordinary requests, its storage writes go to
/// the shared store, and this instance takes the result with a reload instead of a rebuild.
@Suite("Engine: reload of state stored by another instance")
struct EngineReloadTests {
    let a = Fixtures.address(1), b = Fixtures.address(2), c = Fixtures.address(3), x = Fixtures.address(4)
    let phone = Fixtures.phone, laptop = Fixtures.laptop, tv = Fixtures.tv
    let buds = Fixtures.buds
    static let irk = AccessoryKey(bytes: Array(0..<16))!

    /// Two instances over one store: `peer` makes the changes, `here` reloads them.
    struct Cluster {
        var store: EngineStorageTests.Store
        var here: Harness
        var peer: Harness
        /// How much of the peer's log is in the store.
        var synced = 0

        init(_ restored: RestoredState, configuration: EngineConfiguration = Fixtures.configuration(), activate: Bool = true) {
            store = EngineStorageTests.Store(
                accessories: Dictionary(restored.accessories.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last }),
                registrations: restored.registrations, migrationComplete: restored.migrationComplete, keys: restored.keys,
                followed: restored.followedAddresses)
            here = Harness(configuration, restored: restored, activate: activate)
            peer = Harness(configuration, restored: restored)
            synced = peer.log.count
        }

        /// A request on the peer, its storage writes committed to the shared store.
        @discardableResult
        mutating func peerRequest(_ request: Request) -> EngineStep {
            let step = peer.request(request)
            sync()
            return step
        }

        mutating func sync() {
            store.apply(Array(peer.log[synced...]))
            synced = peer.log.count
        }

        @discardableResult
        mutating func reload(_ ids: [BluetoothAddress]) -> EngineStep {
            here.send(.reload(store.restored, ids: ids))
        }

        /// A gateway hears the accessory, for this instance.
        @discardableResult
        mutating func hear(_ id: BluetoothAddress, _ product: Product = Fixtures.buds, rssi: Int = -60) -> EngineStep {
            here.send(.sighting(Fixtures.sighting(id, for: product, rssi: rssi)))
        }
    }

    func accessory(_ id: BluetoothAddress, _ name: String, _ product: Product = Fixtures.buds) -> Accessory {
        Accessory(id: id, displayName: name, product: product.name, descriptor: product.descriptor, state: .authorized)
    }

    func registration(placement: AccessoryControlDevice.Placement = .inEar, primary: BluetoothAddress?) -> Registration {
        Registration(
            configuration: .init(
                devicePlacement: placement, deviceCapabilities: [.audioSwitching, .placement], primaryAudioSourceDeviceIdentifier: primary))
    }

    /// `a` registered in the ear with the phone; `b` paired, not registered.
    var restored: RestoredState {
        RestoredState(
            accessories: [accessory(a, "Buds"), accessory(b, "Other buds")], registrations: [a: registration(primary: phone)],
            migrationComplete: true)
    }

    func changes(_ step: EngineStep, of id: BluetoothAddress) -> [AccessoryStatus] {
        step.outputs.compactMap { if case .accessoryChanged(let status) = $0, status.accessory.id == id { status } else { nil } }
    }

    func registrationChanges(_ step: EngineStep) -> [BluetoothAddress] {
        step.outputs.compactMap { if case .registrationChanged(let id, _) = $0 { id } else { nil } }
    }

    // MARK: Routes taken over

    @Test("a takeover goes on with the previous owner's routes: no decision at the reload, none at the next sighting")
    func inheritedRoutesRepeatNoDecision() throws {
        var cluster = Cluster(restored)
        #expect(cluster.here.engine.route(for: phone) == .fallback, "this instance never heard a")
        let step = cluster.here.send(.reload(cluster.store.restored, ids: [a, b], routes: [phone: a]))
        #expect(cluster.here.engine.route(for: phone) == .accessory(a))
        #expect(step.decisions.isEmpty && step.routeChanges.isEmpty && step.storage.isEmpty)
        #expect(changes(step, of: a).last?.available == true, "counted as heard now")
        let heard = cluster.hear(a)
        #expect(heard.decisions.isEmpty, "the previous owner made this decision already: \(heard.decisions)")
        #expect(heard.routeChanges.isEmpty)
        #expect(cluster.here.engine.route(for: phone) == .accessory(a))
    }

    @Test("an inherited route whose accessory is never heard again is released when its availability expires")
    func inheritedRouteExpires() throws {
        var cluster = Cluster(restored)
        cluster.here.send(.reload(cluster.store.restored, ids: [a], routes: [phone: a]))
        let timeout = cluster.here.engine.configuration.switching.availabilityTimeoutSeconds * 1000
        let expired = cluster.here.advance(timeout + 2)
        #expect(expired.decisions.map(\.action) == [.release])
        #expect(expired.routeChanges == [RouteChange(source: phone, previous: .accessory(a), target: .fallback, reason: .unavailable)])
        #expect(cluster.here.engine.route(for: phone) == .fallback)
    }

    @Test("a route is taken over only for a source the stored registration lists and allows, where this engine routes nothing")
    func inheritedRoutesAreChecked() throws {
        var cluster = Cluster(restored)
        // b is not registered; a does not list the laptop; the tv goes to an accessory not reloaded.
        let step = cluster.here.send(.reload(cluster.store.restored, ids: [a, b], routes: [laptop: a, tv: x, phone: b]))
        #expect(step.decisions.isEmpty)
        #expect(cluster.here.engine.route(for: laptop) == .fallback)
        #expect(cluster.here.engine.route(for: phone) == .fallback)
        #expect(cluster.here.engine.route(for: tv) == .fallback)
        #expect(cluster.here.engine.status(of: b)?.available == false)

        // Routed here already (heard): the inherited route does not replace it.
        var routed = Cluster(restored)
        routed.hear(a)
        let again = routed.here.send(.reload(routed.store.restored, ids: [a, b], routes: [phone: b]))
        #expect(again.routeChanges.isEmpty)
        #expect(routed.here.engine.route(for: phone) == .accessory(a))
    }

    // MARK: Accessories both know

    @Test("a rename in storage changes the name and publishes the status, and nothing else")
    func renameFromStorage() {
        var cluster = Cluster(restored)
        cluster.hear(a)
        cluster.peerRequest(.rename(a, name: "Kitchen buds"))
        let step = cluster.reload([a])
        #expect(cluster.here.engine.session.accessories[a]?.displayName == "Kitchen buds")
        #expect(changes(step, of: a).map(\.accessory.displayName) == ["Kitchen buds"])
        #expect(registrationChanges(step).isEmpty)
        #expect(step.routeChanges.isEmpty)
        #expect(step.events.isEmpty)
        #expect(step.storage.isEmpty)
        #expect(step.result == nil)
    }

    @Test("a reload of an accessory whose stored state did not change publishes nothing")
    func unchangedPublishesNothing() {
        var cluster = Cluster(restored)
        cluster.hear(a)
        let before = cluster.here.engine.statuses
        #expect(cluster.reload([a, b]).outputs.isEmpty)
        #expect(cluster.here.engine.statuses == before)
    }

    @Test("a registration added in storage is indexed and routes its source to the worn accessory")
    func registrationAddedRoutes() throws {
        var cluster = Cluster(restored)
        cluster.hear(b)
        #expect(cluster.here.engine.route(for: laptop) == .fallback)
        cluster.peerRequest(
            .register(b, RegistrationRequest(capabilities: [.audioSwitching, .placement], placement: .inEar, primarySource: laptop)))
        let stored = try #require(cluster.store.registrations[b])
        let step = cluster.reload([b])
        #expect(cluster.here.engine.registry[b] == stored)
        #expect(step.outputs.contains(.registrationChanged(b, stored)))
        #expect(step.routeChanges == [RouteChange(source: laptop, previous: .fallback, target: .accessory(b), reason: .registered)])
        #expect(cluster.here.engine.route(for: laptop) == .accessory(b))
        #expect(cluster.here.engine.listedSourceAddresses == [phone, laptop].sorted())
        #expect(changes(step, of: b).last?.routes == [laptop])
        #expect(step.storage.isEmpty)
    }

    @Test("a registration changed in storage moves the routes, and later updates start from it")
    func registrationChangedMovesRoutes() throws {
        var cluster = Cluster(restored)
        cluster.hear(a)
        #expect(cluster.here.engine.route(for: phone) == .accessory(a))
        cluster.peerRequest(
            .register(a, RegistrationRequest(capabilities: [.audioSwitching, .placement], placement: .inEar, primarySource: laptop)))
        let step = cluster.reload([a])
        #expect(Set(step.routeChanges.map(\.source)) == [phone, laptop])
        #expect(cluster.here.engine.route(for: phone) == .fallback)
        #expect(cluster.here.engine.route(for: laptop) == .accessory(a))
        #expect(cluster.here.engine.listedSourceAddresses == [laptop])
        #expect(registrationChanges(step) == [a])
        let status = try #require(changes(step, of: a).last)
        #expect(status.sources == [laptop])
        #expect(status.available)
        #expect(step.storage.isEmpty)

        // The tracker follows the stored sources: a source connected here is added after them.
        cluster.here.report(a, .sourceConnected(tv))
        #expect(cluster.here.configuration(a)?.primaryAudioSourceDeviceIdentifier == laptop)
        #expect(cluster.here.configuration(a)?.secondaryAudioSourceDeviceIdentifier == tv)
    }

    @Test("a placement committed by the peer moves the route with its placement as the reason")
    func placementFromStorage() {
        var cluster = Cluster(restored)
        cluster.hear(a)
        cluster.peer.send(.sighting(Fixtures.sighting(a, for: buds)))
        cluster.peer.report(a, .worn(false, hardware: nil))
        cluster.sync()
        #expect(cluster.store.registrations[a]?.configuration.devicePlacement == .offHead)
        let step = cluster.reload([a])
        #expect(step.routeChanges == [RouteChange(source: phone, previous: .accessory(a), target: .fallback, reason: .placement(.offHead))])
        #expect(cluster.here.engine.status(of: a)?.worn == false)
        #expect(step.storage.isEmpty)
        // Put on again here: the filter starts from the stored placement, so this is a change.
        cluster.here.report(a, .worn(true, hardware: nil))
        #expect(cluster.here.engine.route(for: phone) == .accessory(a))
    }

    @Test("a registration invalidated in storage releases its routes as invalidated, and is not registered again here")
    func registrationInvalidatedInStorage() {
        var cluster = Cluster(restored)
        cluster.hear(a)
        cluster.peerRequest(.invalidate(a))
        let step = cluster.reload([a])
        #expect(cluster.here.engine.registry[a]?.isInvalidated == true)
        #expect(step.routeChanges == [RouteChange(source: phone, previous: .accessory(a), target: .fallback, reason: .invalidated)])
        #expect(step.storage.isEmpty)
    }

    @Test("a registration gone from storage is gone here: no registration, no listed source, route to fallback")
    func registrationRemovedInStorage() {
        var cluster = Cluster(restored)
        cluster.hear(a)
        cluster.store.registrations[a] = nil
        let step = cluster.reload([a])
        #expect(cluster.here.engine.registry[a] == nil)
        #expect(cluster.here.engine.listedSourceAddresses.isEmpty)
        #expect(step.routeChanges == [RouteChange(source: phone, previous: .accessory(a), target: .fallback, reason: .removed)])
        #expect(changes(step, of: a).last?.registration == nil)
        #expect(changes(step, of: a).last?.sources == [])
        #expect(step.storage.isEmpty)
    }

    @Test("keys and the followed address changed in storage are taken; keysChanged tells the resolver")
    func keysFromStorage() {
        var cluster = Cluster(restored)
        cluster.peerRequest(.setKeys(a, irk: .set(Self.irk), encryptionKey: .keep))
        cluster.store.followed[b] = x
        let step = cluster.reload([a, b])
        #expect(step.outputs.contains(.keysChanged(a, AccessoryKeys(irk: Self.irk))))
        #expect(cluster.here.engine.keys[a] == AccessoryKeys(irk: Self.irk))
        #expect(changes(step, of: a).last?.keys == KeyPresence(irk: true, encryptionKey: false))
        #expect(cluster.here.engine.followedAddresses[b] == x)
        #expect(step.storage.isEmpty)
    }

    @Test("the live state survives a reload of the same accessory: availability, last sighting, room, pending placement")
    func liveStateKept() throws {
        var cluster = Cluster(restored, configuration: Fixtures.configuration(debounce: 1000))
        cluster.hear(a, rssi: -55)
        let heardAt = cluster.here.now
        cluster.here.now = cluster.here.now.advanced(byMilliseconds: 10)
        // Taken off here; the debounce holds it for a second.
        cluster.here.report(a, .worn(false, hardware: nil), gateway: nil)
        cluster.peerRequest(.rename(a, name: "Kitchen buds"))
        cluster.reload([a])
        let status = try #require(cluster.here.engine.status(of: a))
        #expect(status.accessory.displayName == "Kitchen buds")
        #expect(status.available)
        #expect(status.lastSeen == heardAt)
        #expect(status.room == "kitchen")
        #expect(status.rssi == -55)
        #expect(status.worn == false)
        #expect(cluster.here.engine.route(for: phone) == .accessory(a))
        // The pending reading was kept: it commits when the window ends.
        let commit = cluster.here.advance(1000)
        #expect(commit.routeChanges.map(\.target) == [.fallback])
        #expect(cluster.here.configuration(a)?.devicePlacement == .offHead)
    }

    @Test("a product changed in storage makes another device: rebuilt, unavailable until heard")
    func productChanged() throws {
        var cluster = Cluster(restored)
        cluster.hear(a)
        cluster.store.accessories[a] = accessory(a, "Studio", Fixtures.studio)
        let step = cluster.reload([a])
        #expect(step.outputs.contains(.availabilityChanged(a, available: false)))
        #expect(step.routeChanges == [RouteChange(source: phone, previous: .accessory(a), target: .fallback, reason: .unavailable)])
        let status = try #require(cluster.here.engine.status(of: a))
        #expect(status.accessory.product == Fixtures.studio.name)
        #expect(!status.available)
        #expect(status.lastSeen == nil)
        #expect(step.storage.isEmpty)
        cluster.hear(a, Fixtures.studio)
        #expect(cluster.here.engine.route(for: phone) == .accessory(a))
    }

    // MARK: Added and removed

    @Test("an accessory added in storage behaves like one restored at the start")
    func addedLikeRestored() throws {
        var cluster = Cluster(restored)
        cluster.hear(a)
        cluster.peer.pairAndRegister(c, buds, placement: .inEar, primary: laptop)
        cluster.sync()
        let stored = try #require(cluster.store.registrations[c])
        let step = cluster.reload([c])
        #expect(changes(step, of: c).count == 1)
        #expect(step.outputs.contains(.registrationChanged(c, stored)))
        #expect(step.routeChanges.isEmpty)
        #expect(step.events.isEmpty)
        #expect(step.storage.isEmpty)

        // The same state as an engine that restored it at the start, at the same moment.
        var restarted = Harness(restored: cluster.store.restored, activate: false)
        restarted.now = cluster.here.now
        restarted.send(.activate)
        let status = try #require(cluster.here.engine.status(of: c))
        #expect(status == restarted.engine.status(of: c))
        #expect(!status.available)
        #expect(status.lastSeen == nil)
        #expect(status.worn == true)

        // Heard: available and routed, exactly as the restarted engine does it.
        let heard = cluster.hear(c)
        let heardThere = restarted.send(.sighting(Fixtures.sighting(c, for: buds)))
        #expect(heard.outputs == heardThere.outputs)
        #expect(cluster.here.engine.route(for: laptop) == .accessory(c))
    }

    @Test("an accessory added in storage and never heard loses its sources after the timeout, as a restored one")
    func addedNeverHeardLosesSources() {
        var cluster = Cluster(restored)
        cluster.peer.pairAndRegister(c, buds, placement: .inEar, primary: laptop)
        cluster.sync()
        cluster.reload([c])
        #expect(cluster.here.engine.nextDeadline != nil)
        cluster.here.advance(120_000)
        #expect(cluster.here.configuration(c)?.primaryAudioSourceDeviceIdentifier == laptop)
        cluster.here.advance(1)
        #expect(cluster.here.configuration(c)?.primaryAudioSourceDeviceIdentifier == nil)
    }

    @Test("an accessory removed from storage is removed: accessoryRemoved, routes to fallback, no storage write")
    func removedFromStorage() {
        var cluster = Cluster(restored)
        cluster.hear(a)
        cluster.peerRequest(.setKeys(a, irk: .set(Self.irk), encryptionKey: .keep))
        cluster.reload([a])
        #expect(cluster.here.engine.route(for: phone) == .accessory(a))
        cluster.peerRequest(.remove(a))
        let step = cluster.reload([a])
        #expect(step.outputs.contains(.accessoryRemoved(a)))
        #expect(step.routeChanges == [RouteChange(source: phone, previous: .accessory(a), target: .fallback, reason: .removed)])
        #expect(step.decisions.map(\.action) == [.release])
        #expect(changes(step, of: a).isEmpty)
        #expect(step.events.isEmpty)
        #expect(step.storage.isEmpty)
        #expect(cluster.here.engine.session.accessories[a] == nil)
        #expect(cluster.here.engine.status(of: a) == nil)
        #expect(cluster.here.engine.keys[a] == nil)
        #expect(cluster.here.engine.listedSourceAddresses.isEmpty)
        // Gone for good: a later reload of the same id changes nothing.
        #expect(cluster.reload([a]).outputs.isEmpty)
    }

    @Test("an accessory removed and set up again elsewhere comes back as a new one")
    func removedThenAddedAgain() throws {
        var cluster = Cluster(restored)
        cluster.hear(a)
        cluster.peerRequest(.remove(a))
        cluster.reload([a])
        cluster.store.accessories[a] = accessory(a, "Buds again")
        cluster.store.registrations[a] = registration(primary: laptop)
        let step = cluster.reload([a])
        #expect(registrationChanges(step) == [a])
        #expect(cluster.here.engine.listedSourceAddresses == [laptop])
        #expect(cluster.here.engine.status(of: a)?.available == false)
        cluster.hear(a)
        #expect(cluster.here.engine.route(for: laptop) == .accessory(a))
        #expect(cluster.here.engine.route(for: phone) == .fallback)
    }

    // MARK: Rules for every reload

    @Test("a reload never writes storage, whatever it does")
    func neverWritesStorage() {
        let bridged = Fixtures.bridged
        let configuration = Fixtures.configuration(products: [Fixtures.buds, Fixtures.studio, Fixtures.basic, bridged])
        var state = restored
        state.accessories.append(accessory(x, "Bridged", bridged))
        state.registrations[x] = registration(primary: tv)
        var cluster = Cluster(state, configuration: configuration)
        cluster.hear(a)
        cluster.hear(x, bridged)
        var steps: [EngineStep] = []
        // Added, registered, keys, rename, followed address.
        cluster.peer.pairAndRegister(c, buds, placement: .inEar, primary: laptop)
        cluster.peerRequest(.register(b, RegistrationRequest(capabilities: [.audioSwitching], primarySource: laptop)))
        cluster.peerRequest(.setKeys(a, irk: .set(Self.irk), encryptionKey: .keep))
        cluster.peerRequest(.rename(a, name: "Renamed"))
        cluster.store.followed[a] = Fixtures.address(7)
        steps.append(cluster.reload([a, b, c]))
        // An auto_register accessory invalidated elsewhere: re-registering is its owner's job.
        cluster.store.registrations[x]?.isInvalidated = true
        steps.append(cluster.reload([x]))
        #expect(cluster.here.engine.registry[x]?.isInvalidated == true)
        #expect(!steps[1].outputs.contains { if case .registrationReevaluated = $0 { true } else { false } })
        // Product changed, registration removed, accessory removed.
        cluster.store.accessories[b] = accessory(b, "Studio", Fixtures.studio)
        cluster.store.registrations[c] = nil
        cluster.peerRequest(.remove(a))
        steps.append(cluster.reload([a, b, c]))
        // Before activation.
        var idle = Cluster(state, configuration: configuration, activate: false)
        idle.store = cluster.store
        steps.append(idle.reload([a, b, c, x]))
        for step in steps { #expect(step.storage.isEmpty) }
        #expect(steps.prefix(3).allSatisfy { !$0.outputs.isEmpty })
    }

    @Test("ids not listed are untouched, even when the stored state differs for them")
    func unlistedIdsUntouched() {
        var cluster = Cluster(restored)
        cluster.hear(a)
        cluster.peerRequest(.rename(a, name: "Renamed"))
        cluster.peerRequest(.remove(b))
        cluster.store.accessories[c] = accessory(c, "New")
        let before = cluster.here.engine.statuses
        #expect(cluster.reload([x]).outputs.isEmpty)
        #expect(cluster.here.engine.statuses == before)
        let step = cluster.reload([a])
        #expect(cluster.here.engine.session.accessories[b] != nil)
        #expect(cluster.here.engine.session.accessories[c] == nil)
        #expect(!step.outputs.contains(.accessoryRemoved(b)))
        #expect(changes(step, of: a).map(\.accessory.displayName) == ["Renamed"])
        #expect(cluster.here.engine.statuses.filter { $0.accessory.id != a } == before.filter { $0.accessory.id != a })
    }

    @Test("the same reload gives the same outputs and state, whatever the order of the ids")
    func deterministic() {
        func run(_ ids: [BluetoothAddress]) -> (EngineStep, [AccessoryStatus], [BluetoothAddress: BluetoothAddress]) {
            var cluster = Cluster(restored)
            cluster.hear(a)
            cluster.hear(b)
            cluster.peer.pairAndRegister(c, buds, placement: .inEar, primary: laptop)
            cluster.peerRequest(.register(b, RegistrationRequest(capabilities: [.audioSwitching], primarySource: phone)))
            cluster.peerRequest(.remove(a))
            let step = cluster.reload(ids)
            return (step, cluster.here.engine.statuses, cluster.here.engine.routes)
        }
        let first = run([a, b, c])
        let second = run([c, b, a, b])
        let third = run([a, b, c])
        #expect(first.0 == second.0)
        #expect(first.1 == second.1)
        #expect(first.2 == second.2)
        #expect(first.0 == third.0)
        // Sorted ids: a's removal comes before b takes the phone.
        #expect(first.0.outputs.firstIndex(of: .accessoryRemoved(a)) != nil)
        #expect(first.2[phone] == b)
    }

    @Test("before activation a reload updates the state and publishes nothing; activation then treats it as restored")
    func beforeActivation() throws {
        var cluster = Cluster(restored, activate: false)
        cluster.peer.pairAndRegister(c, buds, placement: .inEar, primary: laptop)
        cluster.peerRequest(.rename(a, name: "Renamed"))
        cluster.peerRequest(.remove(b))
        cluster.store.migrationComplete = false
        let step = cluster.reload([a, b, c])
        #expect(step.outputs.isEmpty)
        #expect(step.result == nil)
        // migrationComplete is not an accessory's state: the reload leaves it as it was.
        #expect(cluster.here.engine.migrationComplete)
        #expect(cluster.here.engine.session.accessories[a]?.displayName == "Renamed")
        #expect(cluster.here.engine.session.accessories[b] == nil)

        let activated = cluster.here.send(.activate)
        #expect(activated.storage.isEmpty)
        #expect(cluster.here.engine.accessories.map(\.id) == [a, c])
        let status = try #require(cluster.here.engine.status(of: c))
        #expect(!status.available)
        #expect(status.lastSeen == nil)
        cluster.hear(c)
        #expect(cluster.here.engine.route(for: laptop) == .accessory(c))
    }
}
