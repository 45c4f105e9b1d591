import Testing

@testable import AccessoryKit

/// What a start may claim: nothing heard is nothing available, and
/// errors go to accessories that exist.
@Suite("Engine start and unknown accessories")
struct EngineStartTests {
    let a = Fixtures.address(1)
    let phone = Fixtures.phone
    let buds = Fixtures.buds

    func restored(placement: AccessoryControlDevice.Placement = .inEar) -> RestoredState {
        let accessory = Accessory(id: a, displayName: "Buds", product: buds.name, descriptor: buds.descriptor, state: .authorized)
        let registration = Registration(
            configuration: .init(
                devicePlacement: placement, deviceCapabilities: [.audioSwitching, .placement], primaryAudioSourceDeviceIdentifier: phone))
        return RestoredState(accessories: [accessory], registrations: [a: registration], migrationComplete: true)
    }

    @Test("a restored accessory is unavailable, never seen, worn as its placement says, until a gateway hears it")
    func restoredIsUnavailableUntilHeard() throws {
        var harness = Harness(restored: restored(), activate: false)
        let step = harness.send(.activate)
        let status = try #require(harness.engine.status(of: a))
        #expect(status.available == false)
        #expect(status.lastSeen == nil)
        #expect(status.placement == .inEar)
        #expect(status.worn == true)
        #expect(!step.outputs.contains(.availabilityChanged(a, available: true)))
        #expect(step.decisions.isEmpty)
        #expect(harness.engine.route(for: phone) == .fallback)

        let heard = harness.send(.sighting(Fixtures.sighting(a, for: buds)))
        #expect(heard.outputs.contains(.availabilityChanged(a, available: true)))
        #expect(harness.engine.status(of: a)?.lastSeen == harness.now)
        #expect(harness.engine.route(for: phone) == .accessory(a))
        #expect(heard.decisions.map(\.action) == [.route])
    }

    @Test("off the head at the restart: worn false, not unknown")
    func restoredOffHeadIsNotWorn() {
        var harness = Harness(restored: restored(placement: .offHead), activate: false)
        harness.send(.activate)
        #expect(harness.engine.status(of: a)?.worn == false)
    }

    @Test("a restored accessory never heard within the timeout loses its sources, with nothing published as a route")
    func restoredNeverHeardLosesSources() throws {
        var harness = Harness(restored: restored(), activate: false)
        harness.send(.activate)
        #expect(harness.advance(120_000).storage.isEmpty)
        let step = harness.advance(1)
        #expect(step.decisions.isEmpty)
        #expect(!step.outputs.contains(.availabilityChanged(a, available: false)))
        let configuration = try #require(harness.configuration(a))
        #expect(configuration.primaryAudioSourceDeviceIdentifier == nil)
        #expect(step.storage.contains(.upsertRegistration(a, harness.engine.registry[a]!)))
        #expect(harness.engine.nextDeadline == nil)
    }

    @Test("a migrated accessory is not available before a gateway hears it")
    func migratedIsUnavailableUntilHeard() throws {
        let migration = MigrationItem(id: a, name: "Buds", product: buds.name)
        var harness = Harness(Fixtures.configuration(migrations: [migration]))
        let status = try #require(harness.engine.status(of: a))
        #expect(status.available == false)
        #expect(status.lastSeen == nil)
        harness.send(.sighting(Fixtures.sighting(a, for: buds)))
        #expect(harness.engine.status(of: a)?.available == true)
    }

    @Test("a request for an unknown accessory fails without an error for that accessory")
    func unknownAccessoryGetsNoErrorOutput() {
        var harness = Harness()
        let unknown = Fixtures.address(9)
        let current = harness.request(.current(unknown))
        #expect(current.controlErrorCode == .invalidRequest)
        #expect(current.errors.isEmpty)
        let register = harness.request(.register(unknown, RegistrationRequest(capabilities: [.audioSwitching])))
        #expect(register.controlErrorCode == .invalidRequest)
        #expect(register.errors.isEmpty)
        #expect(harness.engine.status(of: unknown) == nil)
    }
}
