import Testing

@testable import AccessoryKit

/// AudioAccessoryKit as iOS 27 extends it (domain.md): the `headTracking` and
/// `audioSpatialization` capabilities under the registry's rules, the head-tracking session and
/// the sensor frames with their two errors.
@Suite("Head tracking (iOS 27)")
struct HeadTrackingTests {
    static let spatial = Product(
        name: "Spatial Buds", hardware: .inEarBud, capabilities: [.audioSwitching, .placement, .headTracking, .audioSpatialization],
        descriptor: DiscoveryDescriptor(bluetoothCompanyIdentifier: Fixtures.acmeCompany))
    let id = Fixtures.address(7)
    let other = Fixtures.address(8)

    /// An engine with `spatial` paired (and registered with `capabilities` unless nil).
    func harness(
        registering capabilities: AccessoryControlDevice.Capabilities? = [.audioSwitching, .placement, .headTracking]
    )
        -> Harness
    {
        var harness = Harness(Fixtures.configuration(products: [Fixtures.buds, Fixtures.studio, Self.spatial]))
        if let capabilities {
            harness.pairAndRegister(id, Self.spatial, capabilities: capabilities)
        } else {
            harness.pair(id, Self.spatial)
        }
        return harness
    }

    func frames(_ step: EngineStep) -> [[UInt8]] {
        step.outputs.compactMap { if case .sensorFrame(_, let frame) = $0 { frame } else { nil } }
    }

    func refusals(_ step: EngineStep) -> [AudioAccessoryError.Code] {
        step.outputs.compactMap { if case .sensorFrameRefused(_, let error) = $0 { error.code } else { nil } }
    }

    @Test("the two capabilities have Apple's names, after audioSwitching and placement, and read back")
    func capabilityNames() {
        let all: AccessoryControlDevice.Capabilities = [.audioSwitching, .placement, .headTracking, .audioSpatialization]
        #expect(all.names == ["audioSwitching", "placement", "headTracking", "audioSpatialization"])
        #expect(AccessoryControlDevice.Capabilities.allNames == all.names)
        #expect(AccessoryControlDevice.Capabilities(name: "headTracking") == .headTracking)
        #expect(AccessoryControlDevice.Capabilities(name: "audioSpatialization") == .audioSpatialization)
        #expect(AccessoryControlDevice.Capabilities(name: "headtracking") == nil)
        // The existing two keep their values (stored registrations carry the raw value).
        #expect(AccessoryControlDevice.Capabilities.audioSwitching.rawValue == 1)
        #expect(AccessoryControlDevice.Capabilities.placement.rawValue == 2)
    }

    @Test(
        "register: within the product's hardware, else accessoryNotCapable and nothing registered",
        arguments: [
            AccessoryControlDevice.Capabilities.headTracking, .audioSpatialization,
        ])
    func registerWithinHardware(capability: AccessoryControlDevice.Capabilities) throws {
        var harness = Harness()
        harness.pair(id, Fixtures.buds) // audioSwitching and placement only
        let step = harness.request(.register(id, RegistrationRequest(capabilities: [.audioSwitching, capability])))
        #expect(step.controlErrorCode == .accessoryNotCapable)
        #expect(step.controlError?.field == .deviceCapabilities)
        #expect(harness.engine.registry[id] == nil)

        var capable = self.harness(registering: nil)
        let registered = capable.request(.register(id, RegistrationRequest(capabilities: [.audioSwitching, capability])))
        #expect(registered.succeeded)
        #expect(capable.configuration(id)?.deviceCapabilities == [.audioSwitching, capability])
    }

    @Test("register: an unknown capability name is invalidRequest; either capability alone is a registration")
    func registerNames() {
        var harness = harness(registering: nil)
        #expect(harness.request(.register(id, RegistrationRequest(capabilities: ["headTracked"]))).controlErrorCode == .invalidRequest)
        #expect(harness.engine.registry[id] == nil)
        #expect(harness.request(.register(id, RegistrationRequest(capabilities: ["headTracking"]))).succeeded)
        #expect(harness.engine.status(of: id)?.headTracking == .inactive)
        #expect(harness.request(.register(id, RegistrationRequest(capabilities: ["audioSpatialization"]))).succeeded)
        #expect(harness.engine.status(of: id)?.headTracking == nil)
    }

    @Test("update: the capabilities are fixed by registration, the new ones too")
    func updateKeepsCapabilities() {
        var harness = harness()
        var configuration = harness.configuration(id)!
        configuration.deviceCapabilities.remove(.headTracking)
        var registry = harness.engine.registry
        #expect(throws: AccessoryControlDevice.Error.self) { try registry.update(configuration, id: id) }
        do {
            try registry.update(configuration, id: id)
        } catch {
            #expect(error.code == .invalidRequest)
            #expect(error.field == .deviceCapabilities)
        }
        #expect(registry == harness.engine.registry)
        // current(for:) reads them back.
        let device = harness.request(.current(id))
        guard case .success(.device(let current)) = device.result else {
            Issue.record("current failed")
            return
        }
        #expect(current.configuration.deviceCapabilities.contains(.headTracking))
    }

    @Test("the state: null without a session, inactive once registered with headTracking")
    func stateShowsTheSession() {
        #expect(harness(registering: nil).engine.status(of: id)?.headTracking == nil)
        #expect(harness(registering: [.audioSwitching]).engine.status(of: id)?.headTracking == nil)
        #expect(harness().engine.status(of: id)?.headTracking == .inactive)
    }

    @Test("accessory/head_tracking turns it on and off: headTrackingChanged and the state, once per change")
    func activateAndDeactivate() {
        var harness = harness()
        let on = harness.request(.setHeadTracking(id, active: true))
        #expect(on.succeeded)
        #expect(on.eventTypes == [.headTrackingChanged])
        #expect(on.events.first?.accessory?.id == id)
        #expect(harness.engine.status(of: id)?.headTracking == .active)
        #expect(on.outputs.contains { if case .accessoryChanged(let status) = $0 { status.headTracking == .active } else { false } })
        // Asked again: nothing changes, nothing is said.
        let again = harness.request(.setHeadTracking(id, active: true))
        #expect(again.succeeded)
        #expect(again.outputs.isEmpty)
        let off = harness.request(.setHeadTracking(id, active: false))
        #expect(off.eventTypes == [.headTrackingChanged])
        #expect(harness.engine.status(of: id)?.headTracking == .inactive)
        // Never stored: the session is the run's, as an app's is.
        #expect(on.storage.isEmpty && off.storage.isEmpty)
    }

    @Test("a session without headTracking is invalidRequest, and nothing changes")
    func sessionNeedsTheCapability() {
        var harness = harness(registering: [.audioSwitching, .placement, .audioSpatialization])
        let before = harness.engine.status(of: id)
        let step = harness.request(.setHeadTracking(id, active: true))
        #expect(step.controlErrorCode == .invalidRequest)
        #expect(step.controlError?.operation == .headTracking)
        #expect(step.controlError?.field == .deviceCapabilities)
        #expect(step.eventTypes.isEmpty)
        #expect(harness.engine.status(of: id)?.headTracking == nil)
        #expect(harness.engine.registry[id] == before?.registration)
    }

    @Test("accessory/head_tracking follows current(for:)'s rules: never registered, invalidated, unknown")
    func sessionNeedsARegistration() {
        var unregistered = harness(registering: nil)
        let never = unregistered.request(.setHeadTracking(id, active: true))
        #expect(never.controlErrorCode == .invalidRequest)
        #expect(never.controlError?.operation == .headTracking)

        var invalidated = harness()
        invalidated.request(.invalidate(id))
        let refused = invalidated.request(.setHeadTracking(id, active: true))
        #expect(refused.controlErrorCode == .invalidated)
        #expect(refused.controlError?.recovery == .needsContainerRegistrationEvaluation)
        #expect(invalidated.engine.status(of: id)?.headTracking == nil)

        var unknown = harness()
        #expect(unknown.request(.setHeadTracking(other, active: true)).controlErrorCode == .invalidRequest)
    }

    @Test("accessory/head_tracking is the container role's: refused through /set")
    func containerRoleOnly() {
        var harness = harness()
        let step = harness.request(.setHeadTracking(id, active: true), role: .extension)
        #expect(step.controlErrorCode == .invalidRequest)
        #expect(harness.engine.status(of: id)?.headTracking == .inactive)
    }

    @Test("invalidation ends an active session: null, headTrackingChanged; registering again starts inactive")
    func invalidationEndsIt() {
        var harness = harness()
        harness.request(.setHeadTracking(id, active: true))
        let step = harness.request(.invalidate(id))
        #expect(step.eventTypes.contains(.headTrackingChanged))
        #expect(harness.engine.status(of: id)?.headTracking == nil)
        harness.request(.register(id, RegistrationRequest(capabilities: [.audioSwitching, .headTracking])))
        #expect(harness.engine.status(of: id)?.headTracking == .inactive)
        // Frames after the re-registration are refused until the user turns it on again.
        #expect(refusals(harness.report(id, .sensorFrame([1]))) == [.notActivated])
    }

    @Test("a new registration ends the old one's session")
    func reregistrationEndsIt() {
        var harness = harness()
        harness.request(.setHeadTracking(id, active: true))
        let step = harness.request(.register(id, RegistrationRequest(capabilities: [.audioSwitching, .placement, .headTracking])))
        #expect(step.eventTypes == [.headTrackingChanged])
        #expect(harness.engine.status(of: id)?.headTracking == .inactive)
    }

    @Test("removal ends an active session: headTrackingChanged, then the accessory is gone; its frames are nobody's")
    func removalEndsIt() {
        var harness = harness()
        harness.request(.setHeadTracking(id, active: true))
        let step = harness.request(.remove(id))
        #expect(step.eventTypes.contains(.headTrackingChanged))
        #expect(step.outputs.contains(.accessoryRemoved(id)))
        #expect(harness.engine.status(of: id) == nil)
        #expect(harness.report(id, .sensorFrame([1, 2, 3])).outputs.isEmpty)
    }

    @Test("an inactive session ends without a word: nothing was active")
    func inactiveEndsQuietly() {
        var harness = harness()
        #expect(!harness.request(.invalidate(id)).eventTypes.contains(.headTrackingChanged))
    }

    @Test("frames of 1 and 70 bytes are forwarded unchanged while the session is active", arguments: [1, 70])
    func framesForwarded(size: Int) {
        var harness = harness()
        harness.request(.setHeadTracking(id, active: true))
        let frame = (0..<size).map { UInt8(truncatingIfNeeded: $0 * 37 + 5) }
        let step = harness.report(id, .sensorFrame(frame))
        #expect(frames(step) == [frame])
        #expect(refusals(step).isEmpty)
        #expect(step.outputs.contains(.sensorFrame(id, frame)))
    }

    @Test("an empty frame or one over 70 bytes is invalidDataSize, active or not, and forwards nothing", arguments: [0, 71, 200])
    func invalidDataSize(size: Int) {
        var active = harness()
        active.request(.setHeadTracking(id, active: true))
        let step = active.report(id, .sensorFrame([UInt8](repeating: 0xAB, count: size)))
        #expect(frames(step).isEmpty)
        #expect(refusals(step) == [.invalidDataSize])
        var inactive = harness()
        #expect(refusals(inactive.report(id, .sensorFrame([UInt8](repeating: 0, count: size)))) == [.invalidDataSize])
    }

    @Test("a frame while the session is not active is notActivated: inactive, no headTracking, invalidated, never registered")
    func notActivated() {
        var inactive = harness()
        #expect(refusals(inactive.report(id, .sensorFrame([1, 2]))) == [.notActivated])
        var without = harness(registering: [.audioSwitching, .placement, .audioSpatialization])
        #expect(refusals(without.report(id, .sensorFrame([1, 2]))) == [.notActivated])
        var invalidated = harness()
        invalidated.request(.setHeadTracking(id, active: true))
        invalidated.request(.invalidate(id))
        #expect(refusals(invalidated.report(id, .sensorFrame([1, 2]))) == [.notActivated])
        var unregistered = harness(registering: nil)
        #expect(refusals(unregistered.report(id, .sensorFrame([1, 2]))) == [.notActivated])
        var deactivated = harness()
        deactivated.request(.setHeadTracking(id, active: true))
        deactivated.request(.setHeadTracking(id, active: false))
        let step = deactivated.report(id, .sensorFrame([1, 2]))
        #expect(refusals(step) == [.notActivated])
        #expect(frames(step).isEmpty)
    }

    @Test("a refused frame changes nothing: not the registration, the session or last_error")
    func refusalChangesNothing() {
        var harness = harness()
        harness.report(id, .rssi(-50))
        let before = harness.engine.status(of: id)
        let step = harness.report(id, .sensorFrame([]), .sensorFrame([1]))
        #expect(refusals(step) == [.invalidDataSize, .notActivated])
        #expect(step.errors.isEmpty) // never accessoryError: the state's last_error stays
        #expect(harness.engine.status(of: id)?.lastError == nil)
        #expect(harness.engine.registry[id] == before?.registration)
        #expect(harness.engine.status(of: id)?.headTracking == .inactive)
        #expect(!step.outputs.contains { if case .accessoryChanged = $0 { true } else { false } })
    }

    @Test("AudioAccessoryError: Apple's two codes, operation headTracking, apart from the registry's four")
    func errorCodes() {
        #expect(AudioAccessoryError.Code.allCases.map(\.rawValue) == ["invalidDataSize", "notActivated"])
        #expect(AudioAccessoryError(.notActivated, message: "x").operation == .headTracking)
        #expect(AccessoryControlDevice.Operation.headTracking.rawValue == "headTracking")
        #expect(BridgeEngine.maximumSensorFrameSize == 70)
    }
}
