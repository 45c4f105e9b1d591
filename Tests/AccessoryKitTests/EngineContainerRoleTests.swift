import Testing

@testable import AccessoryKit

/// What the bridge does as the container role by itself (identity.md, Sources without
/// firmware and Invalidation): registering an `auto_register` accessory with the sources given
/// at setup, and registering it again after an invalidation.
@Suite("Engine: sources at setup and invalidation recovery")
struct EngineContainerRoleTests {
    /// AirPods-like buds registered right after pairing.
    static let autoBuds = Product(
        name: "Auto Buds", hardware: .inEarBud, capabilities: [.audioSwitching, .placement], autoRegister: true,
        descriptor: Fixtures.buds.descriptor)

    static func harness(_ products: [Product] = [autoBuds, Fixtures.bridged, Fixtures.buds]) -> Harness {
        Harness(Fixtures.configuration(products: products))
    }

    static func reevaluations(_ step: EngineStep) -> [AccessoryControlDevice.Error?] {
        step.outputs.compactMap { if case .registrationReevaluated(_, .invalidated, let error) = $0 { error } else { nil } }
    }

    @Test("select with primary and secondary source: the auto_register registration lists them, in that order")
    func sourcesAtSelect() {
        var harness = Self.harness()
        let id = Fixtures.address(1)
        harness.request(.showPicker(products: [Self.autoBuds.name], timeout: .default))
        harness.send(.sighting(Fixtures.sighting(id, for: Fixtures.buds)))
        let step = harness.request(.selectCandidate(id, name: nil, sources: [Fixtures.phone, Fixtures.laptop]))
        #expect(step.succeeded)
        #expect(harness.configuration(id)?.primaryAudioSourceDeviceIdentifier == Fixtures.phone)
        #expect(harness.configuration(id)?.secondaryAudioSourceDeviceIdentifier == Fixtures.laptop)
        #expect(harness.configuration(id)?.deviceCapabilities == [.audioSwitching, .placement])
        // Worn, from an advertisement alone: the phone's audio goes to the buds.
        let worn = harness.send(.sighting(Fixtures.sighting(id, for: Fixtures.buds, decoded: .init(worn: true, placement: .inEar))))
        #expect(worn.decisions.map(\.source) == [Fixtures.phone, Fixtures.laptop])
        #expect(harness.engine.route(for: Fixtures.phone) == .accessory(id))
    }

    @Test("sources given at select wait for the authorization of a confirmAuthorization product")
    func sourcesWaitForAuthorization() {
        var harness = Self.harness()
        let id = Fixtures.address(2)
        harness.request(.showPicker(products: [Fixtures.bridged.name], timeout: .default))
        harness.send(
            .sighting(
                AdvertisementSighting(
                    gateway: "kitchen", accessoryID: id, rssi: -60, name: "Acme Bridge",
                    manufacturerData: ManufacturerData(companyIdentifier: Fixtures.acmeCompany, payload: [0x01]))))
        #expect(harness.request(.selectCandidate(id, name: nil, sources: [Fixtures.tv])).succeeded)
        #expect(harness.engine.registry[id] == nil, "not registered before the authorization")
        #expect(harness.request(.authorize(id)).succeeded)
        #expect(harness.configuration(id)?.primaryAudioSourceDeviceIdentifier == Fixtures.tv)
    }

    @Test("sources at select for a product without auto_register: set up, and they are its home sources, not registered")
    func sourcesWithoutAutoRegister() {
        var harness = Self.harness()
        let id = Fixtures.address(3)
        harness.request(.showPicker(products: [Fixtures.buds.name], timeout: .default))
        harness.send(.sighting(Fixtures.sighting(id, for: Fixtures.buds)))
        let step = harness.request(.selectCandidate(id, name: nil, sources: [Fixtures.phone]))
        #expect(step.succeeded)
        #expect(harness.engine.accessories.contains { $0.id == id })
        #expect(harness.engine.status(of: id)?.homeSources == [Fixtures.phone], "household.md: for every product")
        #expect(harness.engine.registry[id] == nil, "only an auto_register product is registered at setup")
        #expect(step.outputs.contains(.storage(.saveHomeSources(id, [Fixtures.phone]))))
    }

    @Test("an invalidated auto_register registration is registered again in the same step, with its sources")
    func reRegistersAfterInvalidation() {
        var harness = Self.harness()
        let id = Fixtures.address(4)
        harness.request(.showPicker(products: [Self.autoBuds.name], timeout: .default))
        harness.send(.sighting(Fixtures.sighting(id, for: Fixtures.buds)))
        harness.request(.selectCandidate(id, name: nil, sources: [Fixtures.phone]))
        harness.send(.sighting(Fixtures.sighting(id, for: Fixtures.buds, decoded: .init(worn: true, placement: .inEar))))
        #expect(harness.engine.route(for: Fixtures.phone) == .accessory(id))

        let step = harness.request(.invalidate(id))
        #expect(step.succeeded)
        #expect(Self.reevaluations(step).count == 1 && Self.reevaluations(step).first! == nil)
        #expect(harness.engine.registry[id]?.isInvalidated == false)
        #expect(harness.configuration(id)?.primaryAudioSourceDeviceIdentifier == Fixtures.phone)
        // The release and the return are both published, and the phone ends where it was.
        #expect(step.routeChanges.map(\.reason) == [.invalidated, .registered])
        #expect(harness.engine.route(for: Fixtures.phone) == .accessory(id))
        #expect(step.errors.isEmpty)
    }

    @Test("an accessory without auto_register stays invalidated until register")
    func othersWait() {
        var harness = Self.harness()
        let id = Fixtures.address(5)
        harness.pairAndRegister(id, Fixtures.buds, primary: Fixtures.phone)
        let step = harness.request(.invalidate(id))
        #expect(Self.reevaluations(step).isEmpty)
        #expect(harness.engine.registry[id]?.isInvalidated == true)
    }

    @Test("an auto_register accessory whose model has no wear sensor is registered again without placement, and routed")
    func wearlessModel() {
        var harness = Self.harness()
        let id = Fixtures.address(8)
        harness.request(.showPicker(products: [Self.autoBuds.name], timeout: .default))
        harness.send(.sighting(Fixtures.sighting(id, for: Fixtures.buds)))
        harness.request(.selectCandidate(id, name: nil, sources: [Fixtures.phone]))
        #expect(harness.configuration(id)?.deviceCapabilities == [.audioSwitching, .placement])
        #expect(harness.engine.route(for: Fixtures.phone) == .fallback, "offHead, and nothing will ever say otherwise")

        let solo = AdvertisementSighting.Decoded(model: "Beats Solo3", wearSensor: false)
        let step = harness.send(.sighting(Fixtures.sighting(id, for: Fixtures.buds, decoded: solo)))
        let reevaluated = step.outputs.compactMap { output -> ReevaluationReason? in
            if case .registrationReevaluated(id, let reason, nil) = output { reason } else { nil }
        }
        #expect(reevaluated == [.noWearSensor(model: "Beats Solo3")])
        #expect(harness.configuration(id)?.deviceCapabilities == [.audioSwitching])
        #expect(harness.configuration(id)?.primaryAudioSourceDeviceIdentifier == Fixtures.phone, "sources kept")
        #expect(harness.engine.route(for: Fixtures.phone) == .accessory(id), "worn while available")
        // Once: the next advertisements change nothing.
        let again = harness.send(.sighting(Fixtures.sighting(id, for: Fixtures.buds, decoded: solo)))
        #expect(!again.outputs.contains { if case .registrationReevaluated = $0 { true } else { false } })
    }

    @Test("a wearless model of a product without auto_register: its registration is the user's, left alone")
    func wearlessModelWithoutAutoRegister() {
        var harness = Self.harness()
        let id = Fixtures.address(9)
        harness.pairAndRegister(id, Fixtures.buds, primary: Fixtures.phone)
        let step = harness.send(
            .sighting(Fixtures.sighting(id, for: Fixtures.buds, decoded: .init(model: "Beats Studio3", wearSensor: false))))
        #expect(!step.outputs.contains { if case .registrationReevaluated = $0 { true } else { false } })
        #expect(harness.configuration(id)?.deviceCapabilities == [.audioSwitching, .placement])
    }

    /// An engine run that leaves `id` (product "Auto Buds", then without auto_register)
    /// registered with placement and invalidated, as a restart finds it.
    static func invalidatedState(_ id: BluetoothAddress) -> RestoredState {
        let manual = Product(
            name: autoBuds.name, hardware: .inEarBud, capabilities: [.audioSwitching, .placement], descriptor: autoBuds.descriptor)
        var harness = Harness(Fixtures.configuration(products: [manual]))
        harness.request(.showPicker(products: [manual.name], timeout: .default))
        harness.send(.sighting(Fixtures.sighting(id, for: Fixtures.buds)))
        harness.request(.selectCandidate(id, name: nil))
        harness.request(.register(id, RegistrationRequest(capabilities: manual.capabilities, primarySource: Fixtures.phone)))
        harness.request(.invalidate(id))
        return RestoredState(
            accessories: harness.engine.accessories, registrations: harness.engine.registry.registrations, migrationComplete: true)
    }

    @Test("a stored invalidation of an auto_register accessory is answered at the start")
    func reRegistersAtStart() {
        let id = Fixtures.address(6)
        let restored = Self.invalidatedState(id)
        #expect(restored.registrations[id]?.isInvalidated == true)
        var harness = Harness(Fixtures.configuration(products: [Self.autoBuds]), restored: restored, activate: false)
        let step = harness.send(.activate)
        #expect(Self.reevaluations(step).count == 1)
        #expect(harness.engine.registry[id]?.isInvalidated == false)
        #expect(harness.configuration(id)?.primaryAudioSourceDeviceIdentifier == Fixtures.phone)
        #expect(step.storage.contains { if case .upsertRegistration(id, _) = $0 { true } else { false } })
    }

    @Test("when registering again fails, the error is published, the registration stays invalidated, once")
    func reRegistrationFails() {
        let id = Fixtures.address(7)
        // The product lost placement since: the last configuration is no longer acceptable.
        let narrowed = Product(
            name: Self.autoBuds.name, hardware: .inEarBud, capabilities: [.audioSwitching], autoRegister: true,
            descriptor: Self.autoBuds.descriptor)
        var harness = Harness(Fixtures.configuration(products: [narrowed]), restored: Self.invalidatedState(id), activate: false)
        let step = harness.send(.activate)
        let outcome = Self.reevaluations(step)
        #expect(outcome.count == 1)
        #expect(outcome.first??.code == .accessoryNotCapable)
        #expect(step.errors.map(\.code) == [.accessoryNotCapable])
        #expect(harness.engine.registry[id]?.isInvalidated == true)
        // Nothing retries by itself: a later step leaves it alone.
        let later = harness.advance(60_000)
        #expect(Self.reevaluations(later).isEmpty)
    }
}
