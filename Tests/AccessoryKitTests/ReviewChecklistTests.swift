import Testing

@testable import AccessoryKit

/// The seeds' AudioAccessoryKit review checklist (shared/reference/002_*.txt), one case per
/// line. Each case is a scenario that fails when the engine breaks what the line asks for;
/// lines about Xcode (imports, deployment target) are mapped to the bridge's analog, named in the case.
@Suite("Review checklist (002)")
struct ReviewChecklistTests {
    struct Item: Sendable, CustomTestStringConvertible {
        let line: String
        let check: @Sendable () -> Bool
        var testDescription: String { line }
    }

    static let a = Fixtures.address(1)
    static let b = Fixtures.address(2)
    static let phone = Fixtures.phone
    static let laptop = Fixtures.laptop
    static let buds = Fixtures.buds

    static let items: [Item] = [
        Item(line: "Accessory paired via AccessorySetupKit before AudioAccessoryKit registration") {
            var harness = Harness()
            let early = harness.request(.register(a, RegistrationRequest(capabilities: [.audioSwitching])))
            harness.pair(a, buds)
            let late = harness.request(.register(a, RegistrationRequest(capabilities: [.audioSwitching])))
            return early.controlErrorCode == .invalidRequest && late.succeeded
        },
        Item(
            line: "Both AccessorySetupKit and AudioAccessoryKit imported (analog: one engine drives the session and the registry together)"
        ) {
            var product = Fixtures.buds
            product.autoRegister = true
            var harness = Harness(Fixtures.configuration(products: [product]))
            let step = harness.pair(a, product)
            let added = step.eventTypes.contains(.accessoryAdded)
            let registered = step.outputs.contains { if case .registrationChanged(a, _) = $0 { true } else { false } }
            return added && registered
        },
        Item(line: "Container app calls register(_:_:) with AccessoryControlDevice.Configuration") {
            var harness = Harness()
            harness.pair(a, buds)
            let asExtension = harness.request(.register(a, RegistrationRequest(capabilities: [.audioSwitching])), role: .extension)
            let asContainer = harness.request(.register(a, RegistrationRequest(capabilities: [.audioSwitching])), role: .container)
            return asExtension.controlErrorCode == .invalidRequest
                && asContainer.result == .success(.configuration(.init(deviceCapabilities: [.audioSwitching])))
        },
        Item(line: "App extension calls current(for:) and update(_:)") {
            var harness = Harness()
            harness.pairAndRegister(a, buds)
            harness.report(a, .placement(.onHead))
            guard case .success(.device(let device)) = harness.request(.current(a), role: .extension).result else { return false }
            return device.configuration.devicePlacement == .onHead
        },
        Item(line: "Capabilities in the registration configuration match actual hardware support") {
            var harness = Harness()
            harness.pair(a, Fixtures.basic)
            return harness.request(.register(a, RegistrationRequest(capabilities: [.audioSwitching, .placement]))).controlErrorCode
                == .accessoryNotCapable
                && harness.request(.register(a, RegistrationRequest(capabilities: [.audioSwitching]))).succeeded
        },
        Item(line: "Updates only touch fields for capabilities declared during registration") {
            var harness = Harness()
            harness.pairAndRegister(a, buds, capabilities: [.audioSwitching], primary: phone)
            let before = harness.engine.registry
            let step = harness.report(a, .placement(.inEar))
            return step.errors.map(\.code) == [.accessoryNotCapable] && harness.engine.registry == before
        },
        Item(line: ".placement capability accompanied by ongoing placement updates") {
            var harness = Harness()
            harness.pairAndRegister(a, buds)
            var placements: [AccessoryControlDevice.Placement?] = [harness.configuration(a)?.devicePlacement]
            for worn in [true, false, true] {
                harness.report(a, .worn(worn, hardware: nil))
                placements.append(harness.configuration(a)?.devicePlacement)
            }
            return placements == [.offHead, .inEar, .offHead, .inEar]
        },
        Item(line: "Placement transitions (on/off head) reported promptly") {
            var harness = Harness(Fixtures.configuration(debounce: 500))
            harness.pairAndRegister(a, buds)
            harness.report(a, .worn(true, hardware: nil))
            let beforeWindow = harness.advance(499)
            let atWindow = harness.advance(1)
            return !beforeWindow.outputs.contains { if case .registrationChanged = $0 { true } else { false } }
                && harness.configuration(a)?.devicePlacement == .inEar
                && atWindow.outputs.contains { if case .registrationChanged = $0 { true } else { false } }
        },
        Item(line: "Audio source device identifiers updated on Bluetooth connection changes") {
            var harness = Harness()
            harness.pairAndRegister(a, buds)
            harness.report(a, .sourceConnected(phone), .sourceConnected(laptop))
            let both = harness.configuration(a)
            harness.report(a, .sourceDisconnected(phone))
            let shifted = harness.configuration(a)
            return both?.primaryAudioSourceDeviceIdentifier == phone && both?.secondaryAudioSourceDeviceIdentifier == laptop
                && shifted?.primaryAudioSourceDeviceIdentifier == laptop && shifted?.secondaryAudioSourceDeviceIdentifier == nil
        },
        Item(line: "All AccessoryControlDevice.Error cases handled, including @unknown default") {
            let codes = AccessoryControlDevice.Error.Code.allCases
            let dispositions = Set(codes.map(\.disposition))
            return codes.count == 4 && dispositions.count == 4
                && AccessoryControlDevice.Error.Code(rawValue: "unknown")?.disposition == .surface
        },
        Item(line: "update(_:) calls use try await and handle errors (analog: a failed update is published and loses no state)") {
            var harness = Harness()
            harness.pairAndRegister(a, buds, placement: .inEar, primary: phone)
            let before = harness.engine.registry
            let step = harness.report(a, .sources([phone, phone]))
            return step.errors.map(\.code) == [.invalidRequest] && harness.engine.registry == before
                && harness.engine.status(of: a)?.lastError?.code == .invalidRequest && harness.engine.route(for: phone) == .accessory(a)
        },
        Item(line: "Invalidated device references trigger container app registration recovery") {
            var harness = Harness()
            harness.pairAndRegister(a, buds)
            harness.request(.invalidate(a))
            let failed = harness.report(a, .placement(.inEar))
            let recovered = harness.request(.register(a, RegistrationRequest(capabilities: [.audioSwitching, .placement])))
            let after = harness.report(a, .placement(.inEar))
            return failed.errors.first?.recovery == .needsContainerRegistrationEvaluation && recovered.succeeded && after.errors.isEmpty
        },
        Item(line: "Deployment target set to iOS 26.4+ (analog: nothing runs before the session is activated)") {
            var harness = Harness(activate: false)
            let refused = harness.request(.showPicker(products: nil, timeout: .default)).setupErrorCode == .invalidRequest
            let ignored = harness.send(.sighting(Fixtures.sighting(a, for: buds))).outputs.isEmpty
            return refused && ignored && harness.send(.activate).eventTypes == [.activated]
        },
    ]

    @Test("checklist line", arguments: items)
    func checklistLine(item: Item) {
        #expect(item.check(), "\(item.line)")
    }

    @Test func everyChecklistLineHasACase() {
        #expect(Self.items.count == 13)
    }
}
