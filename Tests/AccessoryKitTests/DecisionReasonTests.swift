import Testing

@testable import AccessoryKit

/// Each route names what caused it: the vocabulary of mqtt-api.md.
@Suite("Decision reasons name the cause of the route")
struct DecisionReasonTests {
    let a = Fixtures.address(1), b = Fixtures.address(2)
    let phone = Fixtures.phone, laptop = Fixtures.laptop
    let buds = Fixtures.buds

    @Test("a registration with a primary source routes with reason registered")
    func registrationRoutesAsRegistered() {
        var harness = Harness()
        let step = harness.pairAndRegister(a, buds, placement: .onHead, primary: phone)
        #expect(step.decisions.map(\.action) == [.route])
        #expect(step.decisions.map(\.reason.description) == ["registered"])
        #expect(step.routeChanges.map(\.reason.description) == ["registered"])
    }

    @Test("preferring a source not yet connected routes with reason preferred_source")
    func preferredSourceNotYetConnected() {
        var harness = Harness()
        harness.pairAndRegister(a, buds, placement: .inEar)
        let step = harness.report(a, .preferredSource(phone))
        #expect(harness.engine.route(for: phone) == .accessory(a))
        #expect(step.decisions.map(\.reason.description) == ["preferred_source"])
        #expect(step.routeChanges.map(\.reason.description) == ["preferred_source"])
    }

    @Test("a source connected routes with reason source_connected")
    func sourceConnected() {
        var harness = Harness()
        harness.pairAndRegister(a, buds, placement: .inEar)
        let step = harness.report(a, .sourceConnected(phone))
        #expect(step.decisions.map(\.reason.description) == ["source_connected"])
    }

    @Test("putting an accessory on routes with reason placement:<p>")
    func placementRoutes() {
        var harness = Harness()
        harness.pairAndRegister(a, buds, placement: .offHead, primary: phone)
        let step = harness.report(a, .placement(.inEar))
        #expect(step.decisions.map(\.reason.description) == ["placement:inEar"])
    }

    @Test("A taken off, the source moves to B: A's release says placement:offHead, B's route other_accessory_released")
    func otherAccessoryReleased() {
        var harness = Harness()
        harness.pairAndRegister(b, buds, placement: .inEar, primary: phone)
        harness.advance(10)
        harness.pairAndRegister(a, buds, placement: .inEar, primary: phone)
        #expect(harness.engine.route(for: phone) == .accessory(a))
        let step = harness.report(a, .placement(.offHead))
        #expect(harness.engine.route(for: phone) == .accessory(b))
        let release = step.decisions.first { $0.action == .release }
        let route = step.decisions.first { $0.action == .route }
        #expect(release?.accessory == a)
        #expect(release?.reason.description == "placement:offHead")
        #expect(route?.accessory == b)
        #expect(route?.reason.description == "other_accessory_released")
        #expect(route?.placement == .inEar)
        #expect(step.routeChanges.map(\.reason.description) == ["other_accessory_released"])
    }

    @Test("A unavailable, the source moves to B: B's route says other_accessory_released, to fallback unavailable")
    func unavailableMovesToOther() {
        var harness = Harness()
        harness.pairAndRegister(b, buds, placement: .inEar, primary: phone)
        harness.advance(60_000)
        harness.pairAndRegister(a, buds, placement: .inEar, primary: phone)
        #expect(harness.engine.route(for: phone) == .accessory(a))
        // b is heard again while a, last heard a minute later than b's pairing, is not.
        harness.now = harness.now.advanced(byMilliseconds: 59_000)
        harness.send(.sighting(Fixtures.sighting(b, for: buds)))
        let step = harness.advance(62_001)
        #expect(step.outputs.contains(.availabilityChanged(a, available: false)))
        let release = step.decisions.first { $0.action == .release }
        let route = step.decisions.first { $0.action == .route }
        #expect(release?.reason.description == "unavailable")
        #expect(route?.accessory == b)
        #expect(route?.reason.description == "other_accessory_released")
    }

    @Test("the documented vocabulary: every reason's exact string")
    func vocabulary() {
        let texts = [
            DecisionReason.placement(.inEar), .sourceConnected, .sourceDisconnected, .preferredSource, .unavailable, .invalidated,
            .removed, .startup,
        ].map(\.description)
        #expect(
            texts == [
                "placement:inEar", "source_connected", "source_disconnected", "preferred_source", "unavailable", "invalidated", "removed",
                "startup",
            ])
    }
}
