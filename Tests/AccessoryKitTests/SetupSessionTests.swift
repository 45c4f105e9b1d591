import Testing

@testable import AccessoryKit

@Suite("AccessorySetupKit session")
struct SetupSessionTests {
    let buds = Fixtures.buds
    let id = Fixtures.address(1)

    @Test("event types keep Apple's names and raw values")
    func eventRawValues() {
        let expected: [(SetupEvent.EventType, String, Int)] = [
            (.unknown, "unknown", 0), (.activated, "activated", 10), (.invalidated, "invalidated", 11),
            (.migrationComplete, "migrationComplete", 20), (.accessoryAdded, "accessoryAdded", 30),
            (.accessoryRemoved, "accessoryRemoved", 31), (.accessoryChanged, "accessoryChanged", 32),
            (.accessoryDiscovered, "accessoryDiscovered", 33), (.pickerDidPresent, "pickerDidPresent", 40),
            (.pickerDidDismiss, "pickerDidDismiss", 50), (.pickerSetupBridging, "pickerSetupBridging", 60),
            (.pickerSetupFailed, "pickerSetupFailed", 70), (.pickerSetupPairing, "pickerSetupPairing", 80),
            (.pickerSetupRename, "pickerSetupRename", 90),
        ]
        // aabridge's own events (household.md): no raw value of Apple's, `"raw":null` in the API.
        let own: [(SetupEvent.EventType, String)] = [
            (.accessoryReattached, "accessoryReattached"), (.lookalikeHeard, "lookalikeHeard"),
            (.headTrackingChanged, "headTrackingChanged"), (.reattachUndone, "reattachUndone"),
        ]
        #expect(expected.count + own.count == SetupEvent.EventType.allCases.count)
        for (type, name, raw) in expected {
            #expect(type.rawValue == raw)
            #expect(type.apiRaw == raw)
            #expect(type.name == name)
        }
        for (type, name) in own {
            #expect(type.apiRaw == nil)
            #expect(type.name == name)
        }
    }

    @Test("ASError codes keep Apple's names and raw values")
    func errorRawValues() {
        let expected: [(SetupError.Code, String, Int)] = [
            (.success, "success", 0), (.unknown, "unknown", 1), (.activationFailed, "activationFailed", 100),
            (.connectionFailed, "connectionFailed", 150), (.discoveryTimeout, "discoveryTimeout", 200),
            (.extensionNotFound, "extensionNotFound", 300), (.invalidated, "invalidated", 400),
            (.invalidRequest, "invalidRequest", 450), (.pickerAlreadyActive, "pickerAlreadyActive", 500),
            (.pickerRestricted, "pickerRestricted", 550), (.userCancelled, "userCancelled", 700),
            (.userRestricted, "userRestricted", 750),
        ]
        #expect(expected.count == SetupError.Code.allCases.count)
        for (code, name, raw) in expected {
            #expect(code.rawValue == raw)
            #expect(code.name == name)
        }
        #expect(SetupError.domain == "ASErrorDomain")
    }

    @Test("an event carries an accessory only for accessory events", arguments: SetupEvent.EventType.allCases)
    func accessoryOnlyOnAccessoryEvents(type: SetupEvent.EventType) {
        let accessory = Accessory(id: id, displayName: "x", product: buds.name, descriptor: buds.descriptor, state: .authorized)
        let event = SetupEvent(type, accessory: accessory)
        let isAccessoryEvent = [
            .accessoryAdded, .accessoryRemoved, .accessoryChanged, .accessoryDiscovered, .accessoryReattached, .headTrackingChanged,
            .reattachUndone,
        ].contains(type)
        #expect((event.accessory != nil) == isAccessoryEvent)
    }

    @Test func activationEmitsActivatedFirstWithRestoredAccessories() {
        let restored = Accessory(id: id, displayName: "Old", product: buds.name, descriptor: buds.descriptor, state: .authorized)
        var harness = Harness(restored: RestoredState(accessories: [restored]), activate: false)
        #expect(harness.engine.session.state == .idle)
        #expect(harness.engine.accessories.isEmpty)
        let step = harness.send(.activate)
        #expect(step.eventTypes.first == .activated)
        #expect(harness.engine.accessories == [restored])
        #expect(harness.send(.activate).setupErrorCode == .invalidRequest)
    }

    @Test func requestsBeforeActivationAreRefused() {
        var harness = Harness(activate: false)
        #expect(harness.request(.showPicker(products: nil, timeout: .default)).setupErrorCode == .invalidRequest)
    }

    @Test(
        "every operation on an invalidated session fails with invalidated",
        arguments: [
            Request.showPicker(products: nil, timeout: .default), .selectCandidate(Fixtures.address(1), name: nil), .finishDiscovery,
            .dismissPicker, .authorize(Fixtures.address(1)), .failAuthorization(Fixtures.address(1)),
            .rename(Fixtures.address(1), name: "x"),
            .remove(Fixtures.address(1)), .register(Fixtures.address(1), RegistrationRequest(capabilities: [.audioSwitching])),
            .current(Fixtures.address(1)), .invalidate(Fixtures.address(1)),
        ])
    func invalidatedSession(request: Request) {
        var harness = Harness()
        harness.pair(id, buds)
        let shutdown = harness.send(.invalidate)
        #expect(shutdown.eventTypes == [.invalidated])
        let step = harness.request(request)
        #expect(step.setupErrorCode == .invalidated)
        #expect(step.setupErrorCode?.rawValue == 400)
        #expect(harness.send(.invalidate).setupErrorCode == .invalidated)
    }

    @Test func shutdownWithPresentedPickerDismissesThenInvalidates() {
        var harness = Harness()
        harness.request(.showPicker(products: nil, timeout: .unbounded))
        #expect(harness.send(.invalidate).eventTypes == [.pickerDidDismiss, .invalidated])
    }

    @Test func pickerPresentsOnceAndRefusesASecond() {
        var harness = Harness()
        let first = harness.request(.showPicker(products: nil, timeout: .default))
        #expect(first.eventTypes == [.pickerDidPresent])
        #expect(harness.engine.picker?.products == ["AirPods Pro", "Acme Studio", "Basic"])
        let second = harness.request(.showPicker(products: nil, timeout: .default))
        #expect(second.setupErrorCode == .pickerAlreadyActive)
        #expect(second.setupErrorCode?.rawValue == 500)
        #expect(second.events.isEmpty)
    }

    @Test func pickerRefusesUnknownProducts() {
        var harness = Harness()
        #expect(harness.request(.showPicker(products: ["Nope"], timeout: .default)).setupErrorCode == .invalidRequest)
        #expect(harness.engine.picker == nil)
    }

    @Test(
        "discovery timeouts",
        arguments: [
            (DiscoveryTimeout.default, Int64(30_000)), (.short, 60_000), (.medium, 120_000), (.long, 300_000), (.seconds(7), 7_000),
        ])
    func discoveryTimeout(timeout: DiscoveryTimeout, milliseconds: Int64) throws {
        var harness = Harness()
        harness.request(.showPicker(products: nil, timeout: timeout))
        #expect(harness.advance(milliseconds - 1).events.isEmpty)
        #expect(harness.engine.picker != nil)
        let step = harness.advance(1)
        #expect(step.eventTypes == [.pickerDidDismiss])
        let error = try #require(step.events.first?.error)
        #expect(error.code == .discoveryTimeout)
        #expect(harness.engine.picker == nil)
    }

    @Test func unboundedPickerNeverTimesOut() {
        var harness = Harness()
        harness.request(.showPicker(products: nil, timeout: .unbounded))
        #expect(harness.advance(86_400_000).events.isEmpty)
        #expect(harness.engine.picker != nil)
    }

    @Test func timeoutDismissesEvenWithCandidates() {
        var harness = Harness()
        harness.request(.showPicker(products: nil, timeout: .default))
        harness.send(.sighting(Fixtures.sighting(id, for: buds)))
        let step = harness.advance(30_000)
        #expect(step.events.map(\.error?.code) == [.discoveryTimeout])
    }

    @Test func matchingAdvertisementBecomesOneCandidateWithOneDiscoveredEvent() throws {
        var harness = Harness()
        harness.request(.showPicker(products: [buds.name], timeout: .default))
        let first = harness.send(.sighting(Fixtures.sighting(id, for: buds)))
        #expect(first.eventTypes == [.accessoryDiscovered])
        let discovered = try #require(first.events.first?.accessory)
        #expect(discovered.id == id && discovered.product == buds.name && discovered.state == .unauthorized)
        #expect(harness.send(.sighting(Fixtures.sighting(id, for: buds, rssi: -40))).events.isEmpty)
        #expect(harness.engine.picker?.candidates.map(\.id) == [id])
        #expect(harness.engine.picker?.candidates.first?.rssi == -40)
    }

    @Test func productsNotShownAndNonMatchingAdvertisementsAreIgnored() {
        var harness = Harness()
        harness.request(.showPicker(products: [buds.name], timeout: .default))
        #expect(harness.send(.sighting(Fixtures.sighting(id, for: Fixtures.studio))).events.isEmpty)
        let noise = AdvertisementSighting(
            gateway: "gw", accessoryID: Fixtures.address(2), rssi: -60,
            manufacturerData: ManufacturerData(companyIdentifier: 0x0006, payload: []))
        #expect(harness.send(.sighting(noise)).events.isEmpty)
        #expect(harness.engine.picker?.candidates.isEmpty == true)
    }

    @Test func authorizedAccessoriesAreNotCandidates() {
        var harness = Harness()
        harness.pair(id, buds)
        harness.request(.showPicker(products: nil, timeout: .default))
        #expect(harness.send(.sighting(Fixtures.sighting(id, for: buds))).events.isEmpty)
    }

    @Test func candidatesAreBounded() {
        var harness = Harness()
        harness.request(.showPicker(products: nil, timeout: .default))
        for n in 0..<UInt64(Picker.maximumCandidates + 20) {
            harness.send(.sighting(Fixtures.sighting(Fixtures.address(100 + n), for: buds)))
        }
        #expect(harness.engine.picker?.candidates.count == Picker.maximumCandidates)
    }

    @Test func unknownAddressesLeaveNoStateWithoutPicker() {
        var harness = Harness()
        for n in 0..<UInt64(500) {
            #expect(harness.send(.sighting(Fixtures.sighting(Fixtures.address(100 + n), for: buds))).outputs.isEmpty)
        }
        #expect(harness.engine.records.isEmpty)
        #expect(harness.engine.session.accessories.isEmpty)
    }

    @Test(
        "pairing -> (rename) -> added -> dismiss, always in this order",
        arguments: [
            (String?.none, [SetupEvent.EventType.pickerSetupPairing, .accessoryAdded, .pickerDidDismiss]),
            ("Alice's AirPods", [.pickerSetupPairing, .pickerSetupRename, .accessoryAdded, .pickerDidDismiss]),
        ])
    func selectionEventOrder(name: String?, expected: [SetupEvent.EventType]) throws {
        var harness = Harness()
        let step = harness.pair(id, buds, name: name)
        #expect(step.eventTypes == expected)
        let added = try #require(step.events.first { $0.type == .accessoryAdded }?.accessory)
        #expect(added.state == .authorized)
        #expect(added.displayName == (name ?? "AirPods"))
        #expect(step.storage.contains(.upsertAccessory(added)))
        #expect(harness.engine.picker == nil)
        if case .success(.accessory(let answered)) = step.result {
            #expect(answered == added)
        } else {
            Issue.record("no accessory in response")
        }
    }

    @Test func renameNeedsTheRenameSetupOption() throws {
        var harness = Harness()
        let step = harness.pair(id, Fixtures.studio, name: "New name")
        #expect(step.eventTypes == [.pickerSetupPairing, .accessoryAdded, .pickerDidDismiss])
        #expect(harness.engine.accessories.first?.displayName == "Acme Studio 7")
    }

    @Test func transportBridgingSetsUpWithBridgingAndAnIdentifier() throws {
        var harness = Harness(Fixtures.configuration(products: [Fixtures.bridged]))
        let step = harness.pair(id, Fixtures.bridged)
        #expect(step.eventTypes == [.pickerSetupBridging, .accessoryAdded, .pickerDidDismiss])
        let added = try #require(step.events[1].accessory)
        #expect(added.bluetoothTransportBridgingIdentifier == id.bytes)
        #expect(added.bluetoothTransportBridgingIdentifier?.count == 6)
    }

    @Test("an advertised name is trimmed and cut to 128 characters; a blank one is no name")
    func advertisedNamesAreBounded() throws {
        var harness = Harness()
        harness.request(.showPicker(products: nil, timeout: .default))
        var long = Fixtures.sighting(id, for: buds)
        long.name = "  " + String(repeating: "é", count: 70_000) + "  "
        let step = harness.send(.sighting(long))
        #expect(step.events.first?.accessory?.displayName.count == Accessory.maximumNameLength)
        #expect(harness.engine.picker?.candidate(id)?.name?.count == Accessory.maximumNameLength)
        let added = try #require(harness.request(.selectCandidate(id, name: nil)).events.first { $0.type == .accessoryAdded }?.accessory)
        #expect(added.displayName.count == Accessory.maximumNameLength)

        let other = Fixtures.address(77)
        harness.request(.showPicker(products: nil, timeout: .default))
        var blank = Fixtures.sighting(other, for: buds)
        blank.name = " \t "
        harness.send(.sighting(blank))
        #expect(harness.engine.picker?.candidate(other)?.name == nil)
    }

    @Test func selectingANonCandidateIsInvalidRequest() {
        var harness = Harness()
        harness.request(.showPicker(products: nil, timeout: .default))
        let step = harness.request(.selectCandidate(id, name: nil))
        #expect(step.setupErrorCode == .invalidRequest)
        #expect(step.events.isEmpty)
        #expect(harness.engine.picker != nil)
        #expect(harness.request(.dismissPicker).succeeded)
        #expect(harness.request(.selectCandidate(id, name: nil)).setupErrorCode == .invalidRequest)
    }

    @Test func candidateNotHeardWithinAvailabilityTimeoutFailsWithConnectionFailed() throws {
        var harness = Harness()
        harness.request(.showPicker(products: nil, timeout: .unbounded))
        harness.send(.sighting(Fixtures.sighting(id, for: buds)))
        harness.now = harness.now.advanced(byMilliseconds: 120_001)
        let step = harness.request(.selectCandidate(id, name: nil))
        #expect(step.eventTypes == [.pickerSetupFailed, .pickerDidDismiss])
        #expect(step.events.first?.error?.code == .connectionFailed)
        #expect(step.setupErrorCode == .connectionFailed)
        #expect(step.setupErrorCode?.rawValue == 150)
        #expect(harness.engine.accessories.isEmpty)
        #expect(harness.engine.picker == nil)
    }

    @Test func candidateHeardAtTheTimeoutEdgeCanStillBeSetUp() {
        var harness = Harness()
        harness.request(.showPicker(products: nil, timeout: .unbounded))
        harness.send(.sighting(Fixtures.sighting(id, for: buds)))
        harness.now = harness.now.advanced(byMilliseconds: 120_000)
        #expect(harness.request(.selectCandidate(id, name: nil)).succeeded)
    }

    @Test func finishDiscoveryWithoutCandidatesDismissesWithDiscoveryTimeout() {
        var harness = Harness()
        harness.request(.showPicker(products: nil, timeout: .unbounded))
        let step = harness.request(.finishDiscovery)
        #expect(step.eventTypes == [.pickerDidDismiss])
        #expect(step.events.first?.error?.code == .discoveryTimeout)
        #expect(step.events.first?.error?.code.rawValue == 200)
        #expect(harness.engine.picker == nil)
    }

    @Test func finishDiscoveryWithCandidatesHasNoEffect() {
        var harness = Harness()
        harness.request(.showPicker(products: nil, timeout: .unbounded))
        harness.send(.sighting(Fixtures.sighting(id, for: buds)))
        let step = harness.request(.finishDiscovery)
        #expect(step.events.isEmpty)
        #expect(harness.engine.picker != nil)
    }

    @Test func dismissIsUserCancelled() {
        var harness = Harness()
        harness.request(.showPicker(products: nil, timeout: .default))
        let step = harness.request(.dismissPicker)
        #expect(step.eventTypes == [.pickerDidDismiss])
        #expect(step.events.first?.error?.code == .userCancelled)
        #expect(step.events.first?.error?.code.rawValue == 700)
        #expect(step.outputs.contains(.pickerChanged(nil)))
    }

    @Test func confirmAuthorizationWaitsThenAuthorizes() throws {
        var harness = Harness(Fixtures.configuration(products: [Fixtures.bridged]))
        let pairing = harness.pair(id, Fixtures.bridged)
        #expect(pairing.events.first { $0.type == .accessoryAdded }?.accessory?.state == .awaitingAuthorization)
        // Auto-register waits: an accessory awaiting authorization cannot be registered.
        #expect(harness.engine.registry[id] == nil)
        #expect(harness.request(.register(id, RegistrationRequest(capabilities: [.audioSwitching]))).controlErrorCode == .invalidRequest)
        let step = harness.request(.authorize(id))
        #expect(step.eventTypes == [.accessoryChanged])
        #expect(step.events.first?.accessory?.state == .authorized)
        #expect(harness.engine.registry[id]?.configuration.devicePlacement == .offHead)
        #expect(harness.request(.authorize(id)).setupErrorCode == .invalidRequest)
    }

    @Test func failedAuthorizationRemovesTheAccessory() {
        var harness = Harness(Fixtures.configuration(products: [Fixtures.bridged]))
        harness.pair(id, Fixtures.bridged)
        let step = harness.request(.failAuthorization(id))
        #expect(step.eventTypes == [.accessoryRemoved])
        #expect(step.storage.contains(.deleteAccessory(id)))
        #expect(harness.engine.accessories.isEmpty)
    }

    @Test func renameEmitsAccessoryChanged() {
        var harness = Harness()
        harness.pair(id, buds)
        let step = harness.request(.rename(id, name: "Bob's"))
        #expect(step.eventTypes == [.accessoryChanged])
        #expect(step.events.first?.accessory?.displayName == "Bob's")
        #expect(harness.request(.rename(Fixtures.address(9), name: "x")).setupErrorCode == .invalidRequest)
    }

    @Test func removeEmitsAccessoryRemovedAndInvalidatesTheRegistration() {
        var harness = Harness()
        harness.pairAndRegister(id, buds)
        let step = harness.request(.remove(id))
        #expect(step.eventTypes == [.accessoryRemoved])
        #expect(step.outputs.contains(.accessoryRemoved(id)))
        #expect(step.storage.contains(.deleteAccessory(id)) && step.storage.contains(.deleteRegistration(id)))
        #expect(harness.engine.registry[id]?.isInvalidated == true)
        #expect(harness.engine.accessories.isEmpty)
    }

    @Test func migrationAuthorizesWithoutPickerThenCompletesOnce() throws {
        let items = [
            MigrationItem(id: Fixtures.address(1), name: "Alice's AirPods", product: buds.name),
            MigrationItem(id: Fixtures.address(2), name: "Bob's Studio", product: Fixtures.studio.name),
        ]
        var harness = Harness(Fixtures.configuration(migrations: items), activate: false)
        let step = harness.send(.activate)
        #expect(step.eventTypes == [.activated, .accessoryAdded, .accessoryAdded, .migrationComplete])
        #expect(harness.engine.accessories.map(\.state) == [.authorized, .authorized])
        #expect(step.storage.contains(.migrationComplete))
        #expect(!step.eventTypes.contains(.pickerDidPresent))

        // Second start from storage: no migration again.
        let restored = RestoredState(accessories: harness.engine.accessories, migrationComplete: true)
        var again = Harness(Fixtures.configuration(migrations: items), restored: restored, activate: false)
        #expect(again.send(.activate).eventTypes == [.activated])
    }

    @Test func extensionRoleCannotDriveSetup() {
        var harness = Harness()
        #expect(harness.request(.showPicker(products: nil, timeout: .default), role: .extension).setupErrorCode == .invalidRequest)
        #expect(harness.engine.picker == nil)
    }
}
