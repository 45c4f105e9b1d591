import Testing

@testable import AccessoryKit

@Suite("AccessoryControlDevice registry")
struct RegistryTests {
    typealias Configuration = AccessoryControlDevice.Configuration
    let buds = Fixtures.buds
    let id = Fixtures.address(1)
    let phone = Fixtures.phone
    let laptop = Fixtures.laptop

    var authorized: Accessory {
        Accessory(id: id, displayName: "Buds", product: buds.name, descriptor: buds.descriptor, state: .authorized)
    }
    let both: AccessoryControlDevice.Capabilities = [.audioSwitching, .placement]

    func registered(_ configuration: Configuration) throws -> AccessoryControlRegistry {
        var registry = AccessoryControlRegistry()
        try registry.register(authorized, configuration, hardware: both)
        return registry
    }

    /// The error code a call throws, nil when it succeeds.
    func code(_ body: () throws(AccessoryControlDevice.Error) -> Void) -> AccessoryControlDevice.Error.Code? {
        do {
            try body()
            return nil
        } catch {
            return error.code
        }
    }

    @Test(
        "register refuses accessories the setup session has not authorized",
        arguments: [Accessory.State.unauthorized, .awaitingAuthorization])
    func registerNeedsAuthorized(state: Accessory.State) {
        var registry = AccessoryControlRegistry()
        var accessory = authorized
        accessory.state = state
        let thrown = code { () throws(AccessoryControlDevice.Error) in
            try registry.register(accessory, Configuration(deviceCapabilities: [.audioSwitching]), hardware: both)
        }
        #expect(thrown == .invalidRequest)
        #expect(registry.registrations.isEmpty)
    }

    /// Each row breaks one register rule of domain.md.
    static let registerRules:
        [(
            String, Configuration, AccessoryControlDevice.Capabilities, AccessoryControlDevice.Error.Code,
            AccessoryControlDevice.Error.Field?
        )] = [
            (
                "empty capabilities", Configuration(deviceCapabilities: []), [.audioSwitching, .placement], .invalidRequest,
                .deviceCapabilities
            ),
            (
                "beyond hardware", Configuration(deviceCapabilities: [.audioSwitching, .placement]), [.audioSwitching],
                .accessoryNotCapable, .deviceCapabilities
            ),
            (
                "placement without capability", Configuration(devicePlacement: .inEar, deviceCapabilities: [.audioSwitching]),
                [.audioSwitching, .placement], .invalidRequest, .devicePlacement
            ),
            (
                "primary without audioSwitching",
                Configuration(deviceCapabilities: [.placement], primaryAudioSourceDeviceIdentifier: Fixtures.phone),
                [.audioSwitching, .placement], .invalidRequest, .primaryAudioSourceDeviceIdentifier
            ),
            (
                "secondary without audioSwitching",
                Configuration(deviceCapabilities: [.placement], secondaryAudioSourceDeviceIdentifier: Fixtures.phone),
                [.audioSwitching, .placement], .invalidRequest, .secondaryAudioSourceDeviceIdentifier
            ),
            (
                "secondary without primary",
                Configuration(deviceCapabilities: [.audioSwitching], secondaryAudioSourceDeviceIdentifier: Fixtures.phone),
                [.audioSwitching], .invalidRequest, .secondaryAudioSourceDeviceIdentifier
            ),
            (
                "primary == secondary",
                Configuration(
                    deviceCapabilities: [.audioSwitching], primaryAudioSourceDeviceIdentifier: Fixtures.phone,
                    secondaryAudioSourceDeviceIdentifier: Fixtures.phone), [.audioSwitching], .invalidRequest,
                .secondaryAudioSourceDeviceIdentifier
            ),
        ]

    @Test("register rules", arguments: registerRules.indices)
    func registerRule(row: Int) {
        let (name, configuration, hardware, code, field) = Self.registerRules[row]
        var registry = AccessoryControlRegistry()
        do {
            try registry.register(authorized, configuration, hardware: hardware)
            Issue.record("\(name) was accepted")
        } catch {
            #expect(error.code == code, "\(name)")
            #expect(error.field == field, "\(name)")
            #expect(error.operation == .register)
        }
        #expect(registry.registrations.isEmpty, "\(name) left a registration")
    }

    @Test("addresses that are not 6 bytes are invalidRequest", arguments: ["11:22:33:44:55", "11:22:33:44:55:66:77", "phone", ""])
    func sourceAddressMustBe6Bytes(text: String) {
        let request = RegistrationRequest(capabilities: ["audioSwitching"], primarySource: text)
        #expect(throws: AccessoryControlDevice.Error.self) { try request.configuration() }
        do {
            _ = try request.configuration()
        } catch {
            #expect(error.code == .invalidRequest)
            #expect(error.field == .primaryAudioSourceDeviceIdentifier)
        }
    }

    @Test func unknownCapabilityOrPlacementNamesAreInvalidRequest() {
        #expect(throws: AccessoryControlDevice.Error.self) { try RegistrationRequest(capabilities: ["teleport"]).configuration() }
        #expect(throws: AccessoryControlDevice.Error.self) {
            try RegistrationRequest(capabilities: ["placement"], placement: "onShoulder").configuration()
        }
    }

    @Test func placementCapabilityStartsOffHeadWhenNoneGiven() throws {
        let registry = try registered(Configuration(deviceCapabilities: both))
        #expect(registry[id]?.configuration.devicePlacement == .offHead)
        let withPlacement = try registered(Configuration(devicePlacement: .inEar, deviceCapabilities: both))
        #expect(withPlacement[id]?.configuration.devicePlacement == .inEar)
    }

    @Test func registerIsContainerRoleOnly() {
        var registry = AccessoryControlRegistry()
        let thrown = code { () throws(AccessoryControlDevice.Error) in
            try registry.register(authorized, Configuration(deviceCapabilities: [.audioSwitching]), hardware: both, role: .extension)
        }
        #expect(thrown == .invalidRequest)
        #expect(registry.registrations.isEmpty)
    }

    @Test func updateIsExtensionRoleOnly() throws {
        var registry = try registered(Configuration(deviceCapabilities: both))
        var configuration = try registry.current(for: authorized).configuration
        configuration.devicePlacement = .inEar
        let thrown = code { () throws(AccessoryControlDevice.Error) in try registry.update(configuration, for: authorized, role: .container)
        }
        #expect(thrown == .invalidRequest)
        #expect(registry[id]?.configuration.devicePlacement == .offHead)
    }

    @Test func currentFailsForNeverRegisteredAndInvalidated() throws {
        let empty = AccessoryControlRegistry()
        #expect(
            throws: AccessoryControlDevice.Error(
                .invalidRequest, operation: .current, field: .accessory, message: "accessory \(id) was never registered")
        ) {
            try empty.current(for: authorized)
        }
        var registry = try registered(Configuration(deviceCapabilities: both))
        #expect(try registry.current(for: authorized).configuration.devicePlacement == .offHead)
        registry.invalidate(id)
        do {
            _ = try registry.current(for: authorized)
            Issue.record("current succeeded after invalidation")
        } catch {
            #expect(error.code == .invalidated)
        }
    }

    /// Each row is one update rule: start from a registration, change the configuration, expect the error.
    static let updateRules:
        [(
            String, AccessoryControlDevice.Capabilities, @Sendable (inout Configuration) -> Void, AccessoryControlDevice.Error.Code,
            AccessoryControlDevice.Error.Field?
        )] = [
            ("placement without capability", [.audioSwitching], { $0.devicePlacement = .inEar }, .accessoryNotCapable, .devicePlacement),
            (
                "primary without audioSwitching", [.placement], { $0.primaryAudioSourceDeviceIdentifier = Fixtures.phone },
                .accessoryNotCapable, .primaryAudioSourceDeviceIdentifier
            ),
            (
                "changing capabilities", [.audioSwitching, .placement], { $0.deviceCapabilities = [.audioSwitching] }, .invalidRequest,
                .deviceCapabilities
            ),
            ("clearing placement", [.audioSwitching, .placement], { $0.devicePlacement = nil }, .invalidRequest, .devicePlacement),
            (
                "secondary without primary", [.audioSwitching], { $0.secondaryAudioSourceDeviceIdentifier = Fixtures.phone },
                .invalidRequest, .secondaryAudioSourceDeviceIdentifier
            ),
            (
                "primary == secondary", [.audioSwitching],
                {
                    $0.primaryAudioSourceDeviceIdentifier = Fixtures.phone
                    $0.secondaryAudioSourceDeviceIdentifier = Fixtures.phone
                }, .invalidRequest, .secondaryAudioSourceDeviceIdentifier
            ),
        ]

    @Test("update rules; on failure nothing changes", arguments: updateRules.indices)
    func updateRule(row: Int) throws {
        let (name, capabilities, change, code, field) = Self.updateRules[row]
        var registry = AccessoryControlRegistry()
        try registry.register(authorized, Configuration(deviceCapabilities: capabilities), hardware: both)
        let before = registry
        var configuration = try registry.current(for: authorized).configuration
        change(&configuration)
        do {
            try registry.update(configuration, for: authorized)
            Issue.record("\(name) was accepted")
        } catch {
            #expect(error.code == code, "\(name)")
            #expect(error.field == field, "\(name)")
            #expect(error.operation == .update)
        }
        #expect(registry == before, "\(name) changed state")
    }

    @Test func unchangedConfigurationIsNoUpdate() throws {
        var registry = try registered(Configuration(deviceCapabilities: both))
        let configuration = try registry.current(for: authorized).configuration
        #expect(try registry.update(configuration, for: authorized) == false)
    }

    @Test func invalidatedUpdatesFailWithRecoveryUntilRegisteredAgain() throws {
        var registry = try registered(Configuration(deviceCapabilities: both))
        #expect(registry.invalidate(id) == true)
        #expect(registry.invalidate(id) == false)
        var configuration = Configuration(devicePlacement: .inEar, deviceCapabilities: both)
        for _ in 0..<3 {
            do {
                try registry.update(configuration, for: authorized)
                Issue.record("update succeeded after invalidation")
            } catch {
                #expect(error.code == .invalidated)
                #expect(error.recovery == .needsContainerRegistrationEvaluation)
            }
        }
        try registry.register(authorized, Configuration(deviceCapabilities: both), hardware: both)
        #expect(registry[id]?.isInvalidated == false)
        configuration.devicePlacement = .inEar
        #expect(try registry.update(configuration, for: authorized))
    }

    @Test func registeringAgainReplacesTheRegistration() throws {
        var registry = try registered(
            Configuration(devicePlacement: .inEar, deviceCapabilities: both, primaryAudioSourceDeviceIdentifier: phone))
        try registry.register(
            authorized, Configuration(deviceCapabilities: [.audioSwitching], primaryAudioSourceDeviceIdentifier: laptop), hardware: both)
        #expect(
            registry[id]?.configuration == Configuration(deviceCapabilities: [.audioSwitching], primaryAudioSourceDeviceIdentifier: laptop))
    }

    @Test("nil invariants: no placement without .placement, no sources without .audioSwitching")
    func nilInvariants() throws {
        let switching = try registered(Configuration(deviceCapabilities: [.audioSwitching], primaryAudioSourceDeviceIdentifier: phone))
        #expect(switching[id]?.configuration.devicePlacement == nil)
        let placement = try registered(Configuration(deviceCapabilities: [.placement]))
        #expect(placement[id]?.configuration.primaryAudioSourceDeviceIdentifier == nil)
        #expect(placement[id]?.configuration.secondaryAudioSourceDeviceIdentifier == nil)
        #expect(placement[id]?.configuration.devicePlacement != nil)
    }

    @Test(
        "errors: four codes, each with a non-retry disposition; only invalidated carries the recovery",
        arguments: AccessoryControlDevice.Error.Code.allCases)
    func errorDisposition(code: AccessoryControlDevice.Error.Code) {
        let expected: [AccessoryControlDevice.Error.Code: AccessoryControlDevice.Error.Disposition] = [
            .accessoryNotCapable: .correctCapability, .invalidRequest: .correctRequest,
            .invalidated: .discardHandleAndReevaluateRegistration, .unknown: .surface,
        ]
        #expect(code.disposition == expected[code])
        let error = AccessoryControlDevice.Error(code, operation: .update, message: "x")
        #expect((error.recovery == .needsContainerRegistrationEvaluation) == (code == .invalidated))
        #expect(
            AccessoryControlDevice.Error.Code.allCases.map(\.rawValue) == [
                "accessoryNotCapable", "invalidRequest", "invalidated", "unknown",
            ])
    }
}
