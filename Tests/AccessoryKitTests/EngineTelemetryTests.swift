import Testing

@testable import AccessoryKit

@Suite("Engine: extension role, telemetry and roles")
struct EngineTelemetryTests {
    let a = Fixtures.address(1)
    let phone = Fixtures.phone, laptop = Fixtures.laptop
    let buds = Fixtures.buds

    @Test func registerThroughTheTelemetryPathIsInvalidRequest() {
        var harness = Harness()
        harness.pair(a, buds)
        let step = harness.request(.register(a, RegistrationRequest(capabilities: [.audioSwitching])), role: .extension)
        #expect(step.controlErrorCode == .invalidRequest)
        #expect(step.errors.map(\.operation) == [.register])
        #expect(harness.engine.registry[a] == nil)
    }

    @Test func registerBeforePairingIsInvalidRequest() {
        var harness = Harness()
        let step = harness.request(.register(a, RegistrationRequest(capabilities: [.audioSwitching])))
        #expect(step.controlErrorCode == .invalidRequest)
        #expect(step.controlError?.field == .accessory)
        // An accessory the session does not know gets no error topic: the response carries it.
        #expect(!step.outputs.contains { if case .accessoryError(a, _) = $0 { true } else { false } })
    }

    @Test func registerAnswersWithTheStoredConfigurationAndIsDurable() throws {
        var harness = Harness()
        let step = harness.pairAndRegister(a, buds)
        let expected = AccessoryControlDevice.Configuration(devicePlacement: .offHead, deviceCapabilities: [.audioSwitching, .placement])
        #expect(step.result == .success(.configuration(expected)))
        #expect(step.storage == [.upsertRegistration(a, Registration(configuration: expected))])
        let current = harness.request(.current(a))
        guard case .success(.device(let device)) = current.result else { Issue.record("no device"); return }
        #expect(device.configuration == expected)
        #expect(device.accessory.id == a)
    }

    @Test func registerBeyondHardwareIsAccessoryNotCapableAndPublished() throws {
        var harness = Harness()
        harness.pair(a, Fixtures.basic)
        let step = harness.request(.register(a, RegistrationRequest(capabilities: [.audioSwitching, .placement])))
        #expect(step.controlErrorCode == .accessoryNotCapable)
        #expect(step.errors.first?.field == .deviceCapabilities)
        #expect(harness.engine.status(of: a)?.lastError?.code == .accessoryNotCapable)
        #expect(harness.engine.registry[a] == nil)
    }

    @Test func currentOfNeverRegisteredIsInvalidRequest() {
        var harness = Harness()
        harness.pair(a, buds)
        #expect(harness.request(.current(a)).controlErrorCode == .invalidRequest)
        #expect(harness.request(.current(a), role: .extension).controlErrorCode == .invalidRequest)
    }

    static let gated:
        [(
            String, AccessoryControlDevice.Capabilities, AccessoryReport.Change, AccessoryControlDevice.Error.Code,
            AccessoryControlDevice.Error.Field
        )] = [
            (
                "placement on audioSwitching-only", AccessoryControlDevice.Capabilities.audioSwitching,
                AccessoryReport.Change.placement(.inEar), AccessoryControlDevice.Error.Code.accessoryNotCapable,
                AccessoryControlDevice.Error.Field.devicePlacement
            ),
            ("worn on audioSwitching-only", .audioSwitching, .worn(true, hardware: nil), .accessoryNotCapable, .devicePlacement),
            (
                "sources on placement-only", .placement, .sourceConnected(Fixtures.phone), .accessoryNotCapable,
                .primaryAudioSourceDeviceIdentifier
            ),
            (
                "sources list on placement-only", .placement, .sources([Fixtures.phone]), .accessoryNotCapable,
                .primaryAudioSourceDeviceIdentifier
            ),
            (
                "duplicate sources", [.audioSwitching, .placement], .sources([Fixtures.phone, Fixtures.phone]), .invalidRequest,
                .secondaryAudioSourceDeviceIdentifier
            ),
        ]

    @Test("updates gated by registered capabilities", arguments: gated.indices)
    func gatedUpdate(row: Int) throws {
        let (name, capabilities, change, code, field) = Self.gated[row]
        var harness = Harness()
        harness.pairAndRegister(a, buds, capabilities: capabilities)
        let before = harness.engine.registry
        let sourcesBefore = harness.engine.status(of: a)?.sources
        let wornBefore = harness.engine.status(of: a)?.worn
        let step = harness.report(a, change)
        #expect(harness.engine.status(of: a)?.worn == wornBefore, "\(name): wear reading changed")
        let error = try #require(step.errors.first, "\(name)")
        #expect(error.code == code, "\(name)")
        #expect(error.field == field, "\(name)")
        #expect(error.operation == .update)
        #expect(harness.engine.registry == before, "\(name): state changed")
        #expect(harness.engine.status(of: a)?.sources == sourcesBefore, "\(name): tracker changed")
        #expect(step.decisions.isEmpty)
    }

    @Test func reportForUnregisteredAccessoryIsInvalidRequest() {
        var harness = Harness()
        harness.pair(a, buds)
        #expect(harness.report(a, .placement(.inEar)).errors.map(\.code) == [.invalidRequest])
    }

    @Test func invalidContentIsInvalidRequestNamingTheFieldAndChangesNothing() {
        var harness = Harness()
        harness.pairAndRegister(a, buds)
        let before = harness.engine.registry
        let step = harness.report(a, .invalid(field: "placement", message: "unknown placement 'onShoulder'"))
        #expect(step.errors.map(\.code) == [.invalidRequest])
        #expect(step.errors.first?.field == .devicePlacement)
        #expect(step.errors.first?.operation == .update)
        #expect(step.errors.first?.message == "unknown placement 'onShoulder'", "the message as the parser wrote it, not prefixed")
        #expect(harness.engine.registry == before)
    }

    @Test("read-modify-write: placement keeps sources, sources keep placement")
    func readModifyWrite() {
        var harness = Harness()
        harness.pairAndRegister(a, buds, placement: .inEar, primary: phone, secondary: laptop)
        harness.report(a, .placement(.offHead))
        #expect(
            harness.configuration(a)
                == .init(
                    devicePlacement: .offHead, deviceCapabilities: [.audioSwitching, .placement], primaryAudioSourceDeviceIdentifier: phone,
                    secondaryAudioSourceDeviceIdentifier: laptop))
        harness.report(a, .sourceDisconnected(phone))
        #expect(
            harness.configuration(a)
                == .init(
                    devicePlacement: .offHead, deviceCapabilities: [.audioSwitching, .placement], primaryAudioSourceDeviceIdentifier: laptop
                ))
    }

    @Test func wornUsesTheReportedHardwareOverTheProducts() {
        var harness = Harness()
        harness.pairAndRegister(a, buds)
        harness.report(a, .worn(true, hardware: .overEarHeadphone))
        #expect(harness.configuration(a)?.devicePlacement == .overTheEar)
        harness.report(a, .worn(false, hardware: nil))
        harness.report(a, .worn(true, hardware: nil))
        #expect(harness.configuration(a)?.devicePlacement == .inEar)
    }

    @Test func debounceInTheEngineCommitsOnTick() {
        var harness = Harness(Fixtures.configuration(debounce: 500))
        harness.pairAndRegister(a, buds, primary: phone)
        #expect(harness.report(a, .worn(true, hardware: nil)).decisions.isEmpty)
        #expect(harness.engine.nextDeadline == harness.now.advanced(byMilliseconds: 500))
        #expect(harness.advance(499).decisions.isEmpty)
        #expect(harness.configuration(a)?.devicePlacement == .offHead)
        let commit = harness.advance(1)
        #expect(commit.decisions.map(\.reason) == [.placement(.inEar)])
        #expect(harness.configuration(a)?.devicePlacement == .inEar)
    }

    @Test func flapInsideTheWindowSendsNothing() {
        var harness = Harness(Fixtures.configuration(debounce: 500))
        harness.pairAndRegister(a, buds, primary: phone)
        harness.report(a, .worn(true, hardware: nil))
        harness.now = harness.now.advanced(byMilliseconds: 200)
        harness.report(a, .worn(false, hardware: nil))
        let later = harness.advance(2_000)
        #expect(later.decisions.isEmpty)
        #expect(!later.outputs.contains { if case .registrationChanged = $0 { true } else { false } })
        #expect(harness.configuration(a)?.devicePlacement == .offHead)
    }

    @Test func failedCommitRevertsThePlacement() throws {
        var harness = Harness(Fixtures.configuration(debounce: 500))
        harness.pairAndRegister(a, buds, primary: phone)
        harness.report(a, .worn(true, hardware: nil))
        harness.now = harness.now.advanced(byMilliseconds: 100)
        harness.request(.invalidate(a))
        let commit = harness.advance(400)
        #expect(commit.errors.map(\.code) == [.invalidated])
        #expect(commit.decisions.isEmpty)
        #expect(harness.engine.records[a]?.filter.committed == .offHead)
        #expect(harness.configuration(a)?.devicePlacement == .offHead)
    }

    @Test func decodedAdvertisementFeedsPlacementWithoutErrorsWhenNotCapable() {
        var harness = Harness()
        harness.pairAndRegister(a, buds, primary: phone)
        let on = harness.send(.sighting(Fixtures.sighting(a, for: buds, decoded: .init(worn: true, battery: Battery(left: 80, right: 70)))))
        #expect(on.decisions.map(\.action) == [.route])
        #expect(harness.engine.status(of: a)?.battery == Battery(left: 80, right: 70))

        let b = Fixtures.address(2)
        harness.pairAndRegister(b, Fixtures.basic)
        let decoded = harness.send(.sighting(Fixtures.sighting(b, for: Fixtures.basic, decoded: .init(worn: false))))
        #expect(decoded.errors.isEmpty)
        #expect(harness.engine.status(of: b)?.worn == false)
    }

    @Test("a decoded battery without the case level keeps the earlier one; unavailability drops it (household.md)")
    func caseLevelKeptBetweenFrames() {
        var harness = Harness()
        harness.pairAndRegister(a, buds, primary: phone)
        let inCase = Battery(left: 80, right: 70, chargingCase: 50, leftCharging: true, rightCharging: false, caseCharging: true)
        harness.send(.sighting(Fixtures.sighting(a, for: buds, decoded: .init(battery: inCase))))
        #expect(harness.engine.status(of: a)?.battery == inCase)
        // The other bud broadcasts: no case level in its frame.
        harness.send(
            .sighting(
                Fixtures.sighting(
                    a, for: buds, decoded: .init(battery: Battery(left: 80, right: 60, leftCharging: false, rightCharging: false)))))
        #expect(
            harness.engine.status(of: a)?.battery
                == Battery(left: 80, right: 60, chargingCase: 50, leftCharging: false, rightCharging: false, caseCharging: true))
        // A newer case level wins.
        harness.send(.sighting(Fixtures.sighting(a, for: buds, decoded: .init(battery: Battery(chargingCase: 40, caseCharging: false)))))
        #expect(harness.engine.status(of: a)?.battery == Battery(chargingCase: 40, caseCharging: false))
        // Not heard for the availability timeout: the case level goes, the rest stays.
        harness.send(.sighting(Fixtures.sighting(a, for: buds, decoded: .init(battery: Battery(left: 90, leftCharging: false)))))
        let timeout = harness.engine.configuration.switching.availabilityTimeoutSeconds * 1000
        harness.advance(Int64(timeout) + 1_000)
        #expect(harness.engine.status(of: a)?.available == false)
        #expect(harness.engine.status(of: a)?.battery == Battery(left: 90, leftCharging: false))
    }

    @Test func sightingOfAKnownAccessoryUpdatesSignalWithoutPublishing() {
        var harness = Harness()
        harness.pairAndRegister(a, buds)
        // The first sighting tells the address it is heard from: that is a change of state.
        let first = harness.send(.sighting(Fixtures.sighting(a, for: buds, rssi: -50, gateway: "kitchen")))
        #expect(first.outputs.count == 1)
        #expect(harness.engine.status(of: a)?.heardFrom == a)
        // Within the room's 5 dB hysteresis, so the room (which would be published) stays.
        let step = harness.send(.sighting(Fixtures.sighting(a, for: buds, rssi: -47, gateway: "hall")))
        #expect(step.outputs.isEmpty)
        #expect(harness.engine.status(of: a)?.rssi == -47)
        #expect(harness.engine.status(of: a)?.gateway == "hall")
    }

    @Test func setPayloadDoesNotCountAsHeard() {
        var harness = Harness()
        harness.pairAndRegister(a, buds)
        let seen = harness.engine.status(of: a)?.lastSeen
        harness.now = harness.now.advanced(byMilliseconds: 5_000)
        harness.report(a, .placement(.inEar), gateway: nil)
        #expect(harness.engine.status(of: a)?.lastSeen == seen)
        harness.report(a, .rssi(-50), gateway: "kitchen")
        #expect(harness.engine.status(of: a)?.lastSeen == harness.now)
    }

    @Test func autoRegisterAfterPairing() {
        var product = Fixtures.studio
        product.autoRegister = true
        var harness = Harness(Fixtures.configuration(products: [product]))
        let step = harness.pair(a, product)
        #expect(harness.configuration(a) == .init(devicePlacement: .offHead, deviceCapabilities: [.audioSwitching, .placement]))
        #expect(step.storage.contains { if case .upsertRegistration(a, _) = $0 { true } else { false } })
    }

    @Test func snapshotsAreSortedById() {
        var harness = Harness()
        harness.pair(Fixtures.address(3), buds)
        harness.pair(Fixtures.address(1), buds)
        harness.pair(Fixtures.address(2), buds)
        #expect(harness.engine.accessories.map(\.id) == [1, 2, 3].map { Fixtures.address($0) })
        #expect(harness.engine.statuses.map(\.accessory.id) == [1, 2, 3].map { Fixtures.address($0) })
    }

    @Test func restoredRegistrationsOfUnknownAccessoriesAreDropped() {
        let registration = Registration(configuration: .init(deviceCapabilities: [.audioSwitching]))
        let engine = BridgeEngine(configuration: Fixtures.configuration(), restored: RestoredState(registrations: [a: registration]))
        #expect(engine.registry.registrations.isEmpty)
    }
}
