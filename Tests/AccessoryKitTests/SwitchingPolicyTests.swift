import Testing

@testable import AccessoryKit

@Suite("Switching policy and decisions")
struct SwitchingPolicyTests {
    let a = Fixtures.address(1), b = Fixtures.address(2)
    let phone = Fixtures.phone, laptop = Fixtures.laptop
    let buds = Fixtures.buds

    // MARK: Pure tie-break

    @Test func primaryBeatsSecondaryEvenWhenPutOnEarlier() {
        let older = SwitchingPolicy.Contender(accessory: b, isPrimary: true, wornSince: Timestamp(milliseconds: 1))
        let newer = SwitchingPolicy.Contender(accessory: a, isPrimary: false, wornSince: Timestamp(milliseconds: 9))
        #expect(SwitchingPolicy.choose([newer, older]) == b)
        #expect(SwitchingPolicy.choose([older, newer]) == b)
    }

    @Test func mostRecentlyPutOnWinsAmongEquals() {
        let older = SwitchingPolicy.Contender(accessory: a, isPrimary: true, wornSince: Timestamp(milliseconds: 1))
        let newer = SwitchingPolicy.Contender(accessory: b, isPrimary: true, wornSince: Timestamp(milliseconds: 2))
        #expect(SwitchingPolicy.choose([older, newer]) == b)
        #expect(SwitchingPolicy.choose([newer, older]) == b)
    }

    @Test func lowestIdBreaksTheLastTie() {
        let x = SwitchingPolicy.Contender(accessory: b, isPrimary: false, wornSince: Timestamp(milliseconds: 5))
        let y = SwitchingPolicy.Contender(accessory: a, isPrimary: false, wornSince: Timestamp(milliseconds: 5))
        #expect(SwitchingPolicy.choose([x, y]) == a)
        #expect(SwitchingPolicy.choose([y, x]) == a)
        #expect(SwitchingPolicy.choose([]) == nil)
    }

    @Test(
        "eligibility",
        arguments: [
            (
                "worn primary",
                Registration(
                    configuration: .init(
                        devicePlacement: .inEar, deviceCapabilities: [.audioSwitching, .placement],
                        primaryAudioSourceDeviceIdentifier: Fixtures.phone)), true, Bool?.some(true)
            ),
            (
                "worn secondary",
                Registration(
                    configuration: .init(
                        devicePlacement: .onHead, deviceCapabilities: [.audioSwitching, .placement],
                        primaryAudioSourceDeviceIdentifier: Fixtures.laptop, secondaryAudioSourceDeviceIdentifier: Fixtures.phone)), true,
                false
            ),
            (
                "off head",
                Registration(
                    configuration: .init(
                        devicePlacement: .offHead, deviceCapabilities: [.audioSwitching, .placement],
                        primaryAudioSourceDeviceIdentifier: Fixtures.phone)), true, nil
            ),
            (
                "unavailable",
                Registration(
                    configuration: .init(
                        devicePlacement: .inEar, deviceCapabilities: [.audioSwitching, .placement],
                        primaryAudioSourceDeviceIdentifier: Fixtures.phone)), false, nil
            ),
            (
                "invalidated",
                Registration(
                    configuration: .init(
                        devicePlacement: .inEar, deviceCapabilities: [.audioSwitching, .placement],
                        primaryAudioSourceDeviceIdentifier: Fixtures.phone), isInvalidated: true), true, nil
            ),
            (
                "other source",
                Registration(
                    configuration: .init(
                        devicePlacement: .inEar, deviceCapabilities: [.audioSwitching, .placement],
                        primaryAudioSourceDeviceIdentifier: Fixtures.laptop)), true, nil
            ),
            ("no audioSwitching", Registration(configuration: .init(devicePlacement: .inEar, deviceCapabilities: [.placement])), true, nil),
            (
                "without placement counts as worn while available",
                Registration(
                    configuration: .init(deviceCapabilities: [.audioSwitching], primaryAudioSourceDeviceIdentifier: Fixtures.phone)), true,
                true
            ),
        ])
    func eligibility(name: String, registration: Registration, available: Bool, expected: Bool?) {
        #expect(SwitchingPolicy.eligibility(of: registration, available: available, for: phone) == expected, "\(name)")
    }

    // MARK: Decisions from the engine

    @Test func puttingOnRoutesAndTakingOffReleases() throws {
        var harness = Harness()
        harness.pairAndRegister(a, buds, primary: phone)
        #expect(harness.engine.route(for: phone) == .fallback)
        let on = harness.report(a, .worn(true, hardware: nil))
        #expect(on.decisions == [Decision(action: .route, accessory: a, source: phone, reason: .placement(.inEar), placement: .inEar)])
        #expect(on.routeChanges == [RouteChange(source: phone, previous: .fallback, target: .accessory(a), reason: .placement(.inEar))])
        #expect(on.routeChanges.first?.reason.description == "placement:inEar")
        #expect(harness.engine.route(for: phone) == .accessory(a))
        #expect(harness.engine.status(of: a)?.routes == [phone])

        let off = harness.report(a, .worn(false, hardware: nil))
        #expect(off.decisions.map(\.action) == [.release])
        #expect(off.decisions.first?.reason.description == "placement:offHead")
        #expect(harness.engine.route(for: phone) == .fallback)
    }

    @Test func noDecisionWhenNothingChanged() {
        var harness = Harness()
        harness.pairAndRegister(a, buds, primary: phone)
        harness.report(a, .worn(true, hardware: nil))
        let same = harness.report(a, .worn(true, hardware: nil), .placement(.inEar), .rssi(-40), .sourceConnected(phone))
        #expect(same.decisions.isEmpty)
        #expect(same.routeChanges.isEmpty)
        #expect(!same.outputs.contains { if case .registrationChanged = $0 { true } else { false } })
        // A third source changes neither identifier: no update, no decision.
        harness.report(a, .sourceConnected(laptop))
        let third = harness.report(a, .sourceConnected(Fixtures.tv))
        #expect(third.decisions.isEmpty)
        #expect(!third.outputs.contains { if case .registrationChanged = $0 { true } else { false } })
        #expect(harness.engine.status(of: a)?.sources == [phone, laptop, Fixtures.tv])
    }

    @Test func mostRecentlyPutOnTakesTheSource() {
        var harness = Harness()
        harness.pairAndRegister(a, buds, primary: phone)
        harness.pairAndRegister(b, buds, primary: phone)
        harness.report(a, .worn(true, hardware: nil))
        harness.now = harness.now.advanced(byMilliseconds: 1000)
        let second = harness.report(b, .worn(true, hardware: nil))
        #expect(second.decisions.map(\.action) == [.release, .route])
        #expect(second.decisions.map(\.accessory) == [a, b])
        #expect(harness.engine.route(for: phone) == .accessory(b))
        let off = harness.report(b, .worn(false, hardware: nil))
        #expect(off.decisions.map(\.accessory) == [b, a])
        #expect(harness.engine.route(for: phone) == .accessory(a))
    }

    @Test func primaryBeatsSecondaryInTheEngine() {
        var harness = Harness()
        harness.pairAndRegister(b, buds, primary: phone)
        harness.pairAndRegister(a, buds, primary: laptop, secondary: phone)
        harness.report(b, .worn(true, hardware: nil))
        harness.now = harness.now.advanced(byMilliseconds: 1000)
        let later = harness.report(a, .worn(true, hardware: nil))
        #expect(harness.engine.route(for: phone) == .accessory(b))
        #expect(harness.engine.route(for: laptop) == .accessory(a))
        #expect(later.decisions.map(\.source) == [laptop])
    }

    @Test func lowestIdWinsWhenPutOnTogether() {
        var harness = Harness()
        harness.pairAndRegister(b, buds, placement: .inEar, primary: phone)
        harness.pairAndRegister(a, buds, placement: .inEar, primary: phone)
        #expect(harness.engine.route(for: phone) == .accessory(a))
    }

    @Test func sourceConnectAndDisconnectRouteWithTheirReasons() {
        var harness = Harness()
        harness.pairAndRegister(a, buds, placement: .inEar)
        let connect = harness.report(a, .sourceConnected(phone))
        #expect(connect.decisions.map(\.reason) == [.sourceConnected])
        #expect(connect.decisions.first?.reason.description == "source_connected")
        let disconnect = harness.report(a, .sourceDisconnected(phone))
        #expect(disconnect.decisions.map(\.action) == [.release])
        #expect(disconnect.decisions.first?.reason.description == "source_disconnected")
    }

    @Test func preferredSourceReorders() {
        var harness = Harness()
        harness.pairAndRegister(b, buds, placement: .inEar, primary: phone, secondary: laptop)
        harness.now = harness.now.advanced(byMilliseconds: 1000)
        harness.pairAndRegister(a, buds, placement: .inEar, primary: laptop, secondary: phone)
        #expect(harness.engine.route(for: phone) == .accessory(b))
        #expect(harness.engine.route(for: laptop) == .accessory(a))
        let prefer = harness.report(a, .preferredSource(phone))
        #expect(harness.configuration(a)?.primaryAudioSourceDeviceIdentifier == phone)
        #expect(prefer.routeChanges.map(\.source) == [phone])
        #expect(prefer.routeChanges.first?.reason.description == "preferred_source")
        #expect(harness.engine.route(for: phone) == .accessory(a))
    }

    @Test func withoutPlacementAnAvailableAccessoryCountsAsWorn() {
        var harness = Harness()
        let step = harness.pairAndRegister(a, Fixtures.basic, primary: phone)
        #expect(step.decisions.map(\.action) == [.route])
        #expect(step.decisions.first?.placement == nil)
    }

    @Test func unavailabilityClearsSourcesAndReleases() throws {
        var harness = Harness()
        harness.pairAndRegister(a, buds, placement: .inEar, primary: phone, secondary: laptop)
        #expect(harness.engine.route(for: phone) == .accessory(a))
        #expect(harness.advance(120_000).decisions.isEmpty) // heard exactly at the timeout: still available
        let step = harness.advance(1)
        #expect(step.outputs.contains(.availabilityChanged(a, available: false)))
        #expect(Set(step.decisions.map(\.source)) == [phone, laptop])
        #expect(step.decisions.allSatisfy { $0.action == .release && $0.reason == .unavailable })
        #expect(step.decisions.first?.reason.description == "unavailable")
        let configuration = try #require(harness.configuration(a))
        #expect(configuration.primaryAudioSourceDeviceIdentifier == nil && configuration.secondaryAudioSourceDeviceIdentifier == nil)
        #expect(harness.engine.status(of: a)?.sources == [])
        #expect(step.storage.contains(.upsertRegistration(a, harness.engine.registry[a]!)))

        let back = harness.send(.sighting(Fixtures.sighting(a, for: buds)))
        #expect(back.outputs.contains(.availabilityChanged(a, available: true)))
        #expect(back.decisions.isEmpty)
    }

    @Test func invalidationReleasesAndRefusesUpdatesUntilRegisteredAgain() throws {
        var harness = Harness()
        harness.pairAndRegister(a, buds, placement: .inEar, primary: phone)
        let step = harness.request(.invalidate(a))
        #expect(step.decisions.map(\.action) == [.release])
        #expect(step.decisions.first?.reason.description == "invalidated")
        #expect(harness.engine.status(of: a)?.registrationState == "invalidated")

        let update = harness.report(a, .worn(false, hardware: nil))
        let error = try #require(update.errors.first)
        #expect(error.code == .invalidated && error.operation == .update)
        #expect(error.recovery == .needsContainerRegistrationEvaluation)
        #expect(harness.request(.current(a)).controlErrorCode == .invalidated)

        let again = harness.request(
            .register(a, RegistrationRequest(capabilities: [.audioSwitching, .placement], placement: .inEar, primarySource: phone)))
        #expect(again.succeeded)
        #expect(again.decisions.map(\.action) == [.route])
        #expect(harness.report(a, .worn(false, hardware: nil)).errors.isEmpty)
    }

    @Test func removalReleasesWithReasonRemoved() {
        var harness = Harness()
        harness.pairAndRegister(a, buds, placement: .inEar, primary: phone)
        let step = harness.request(.remove(a))
        #expect(step.decisions.map(\.reason) == [.removed])
        #expect(step.decisions.first?.reason.description == "removed")
        #expect(harness.engine.route(for: phone) == .fallback)
        #expect(harness.engine.sourceIndex.isEmpty)
    }

    @Test func startupRoutesNothingUntilHeard() throws {
        let accessory = Accessory(id: a, displayName: "Buds", product: buds.name, descriptor: buds.descriptor, state: .authorized)
        let registration = Registration(
            configuration: .init(
                devicePlacement: .inEar, deviceCapabilities: [.audioSwitching, .placement], primaryAudioSourceDeviceIdentifier: phone))
        var harness = Harness(
            restored: RestoredState(accessories: [accessory], registrations: [a: registration], migrationComplete: true), activate: false)
        let step = harness.send(.activate)
        // Nothing heard it yet: no route (the runtime publishes the source's `fallback` as `startup`).
        #expect(step.decisions.isEmpty)
        #expect(harness.engine.route(for: phone) == .fallback)
        #expect(harness.engine.listedSourceAddresses == [phone])
        #expect(harness.engine.registry[a] == registration)
        let heard = harness.send(.sighting(Fixtures.sighting(a, for: buds)))
        #expect(heard.decisions.map(\.reason) == [.sourceConnected])
    }

    @Test("every reason has the exact string of mqtt-api.md")
    func reasonStrings() {
        let expected: [(DecisionReason, String)] = [
            (.placement(.inEar), "placement:inEar"), (.placement(.onHead), "placement:onHead"),
            (.placement(.overTheEar), "placement:overTheEar"),
            (.placement(.offHead), "placement:offHead"), (.sourceConnected, "source_connected"),
            (.sourceDisconnected, "source_disconnected"),
            (.unavailable, "unavailable"), (.invalidated, "invalidated"), (.removed, "removed"), (.preferredSource, "preferred_source"),
            (.registered, "registered"), (.otherAccessoryReleased, "other_accessory_released"), (.startup, "startup"),
        ]
        for (reason, text) in expected { #expect(reason.description == text) }
    }
}
