/// AudioAccessoryKit's registry: `register(_:_:)`, `current(for:)`, `update(_:)` and
/// invalidation, with every gating rule. A value type; a failed call changes nothing.
public struct AccessoryControlRegistry: Hashable, Sendable {
    /// Registrations by accessory id, including invalidated ones.
    public private(set) var registrations: [BluetoothAddress: Registration]

    /// Creates a registry, e.g. restored from storage.
    public init(registrations: [BluetoothAddress: Registration] = [:]) {
        self.registrations = registrations
    }

    /// The registration for an accessory, if any.
    public subscript(id: BluetoothAddress) -> Registration? {
        registrations[id]
    }

    /// Registers (or re-registers, clearing an invalidation) an authorized accessory.
    /// - Parameters:
    ///   - accessory: the accessory as the setup session knows it.
    ///   - configuration: the requested configuration; `.placement` without a placement starts `offHead`.
    ///   - hardware: the product's hardware capabilities.
    ///   - role: must be `.container`.
    /// - Returns: the stored configuration.
    @discardableResult
    public mutating func register(
        _ accessory: Accessory, _ configuration: AccessoryControlDevice.Configuration,
        hardware: AccessoryControlDevice.Capabilities, role: AccessoryControlDevice.Role = .container
    ) throws(AccessoryControlDevice.Error) -> AccessoryControlDevice.Configuration {
        func fail(
            _ code: AccessoryControlDevice.Error.Code, _ field: AccessoryControlDevice.Error.Field?, _ message: String
        ) -> AccessoryControlDevice.Error {
            .init(code, operation: .register, field: field, message: message)
        }
        guard role == .container else {
            throw fail(.invalidRequest, nil, "register is a container-role operation; it cannot come through the telemetry path")
        }
        guard accessory.state == .authorized else {
            throw fail(
                .invalidRequest, .accessory, "accessory \(accessory.id) is \(accessory.state.name), not authorized by the setup session")
        }
        let capabilities = configuration.deviceCapabilities
        guard !capabilities.isEmpty else {
            throw fail(.invalidRequest, .deviceCapabilities, "capabilities must not be empty")
        }
        guard hardware.isSuperset(of: capabilities) else {
            throw fail(
                .accessoryNotCapable, .deviceCapabilities,
                "the product supports \(hardware), not \(capabilities)")
        }
        var stored = configuration
        if capabilities.contains(.placement) {
            stored.devicePlacement = configuration.devicePlacement ?? .offHead
        } else if configuration.devicePlacement != nil {
            throw fail(.invalidRequest, .devicePlacement, "devicePlacement needs the placement capability")
        }
        if !capabilities.contains(.audioSwitching) {
            if configuration.primaryAudioSourceDeviceIdentifier != nil {
                throw fail(.invalidRequest, .primaryAudioSourceDeviceIdentifier, "source identifiers need the audioSwitching capability")
            }
            if configuration.secondaryAudioSourceDeviceIdentifier != nil {
                throw fail(.invalidRequest, .secondaryAudioSourceDeviceIdentifier, "source identifiers need the audioSwitching capability")
            }
        }
        try Self.checkSources(stored, operation: .register)
        registrations[accessory.id] = Registration(configuration: stored)
        return stored
    }

    /// The handle for a registered accessory (`current(for:)`).
    public func current(
        for accessory: Accessory, operation: AccessoryControlDevice.Operation = .current
    ) throws(AccessoryControlDevice.Error) -> AccessoryControlDevice {
        AccessoryControlDevice(accessory: accessory, configuration: try configuration(of: accessory.id, operation: operation))
    }

    /// The current configuration by id: what `current(for:)` checks, without copying the accessory
    /// (the engine's telemetry path only needs the configuration).
    public func configuration(
        of id: BluetoothAddress, operation: AccessoryControlDevice.Operation = .current
    ) throws(AccessoryControlDevice.Error) -> AccessoryControlDevice.Configuration {
        guard let registration = registrations[id] else {
            throw .init(.invalidRequest, operation: operation, field: .accessory, message: "accessory \(id) was never registered")
        }
        guard !registration.isInvalidated else {
            throw .init(
                .invalidated, operation: operation, field: .accessory,
                message: "the registration of \(id) was invalidated; register it again")
        }
        return registration.configuration
    }

    /// Applies an extension-role `update(_:)`: the caller read `current(for:)`, changed
    /// what the telemetry said, and passes the whole configuration back.
    /// - Returns: whether anything changed (an unchanged configuration is not an update).
    @discardableResult
    public mutating func update(
        _ configuration: AccessoryControlDevice.Configuration, for accessory: Accessory,
        role: AccessoryControlDevice.Role = .extension
    ) throws(AccessoryControlDevice.Error) -> Bool {
        try update(configuration, id: accessory.id, role: role)
    }

    /// `update(_:for:role:)` by id.
    @discardableResult
    public mutating func update(
        _ configuration: AccessoryControlDevice.Configuration, id: BluetoothAddress,
        role: AccessoryControlDevice.Role = .extension
    ) throws(AccessoryControlDevice.Error) -> Bool {
        guard role == .extension else {
            throw .init(.invalidRequest, operation: .update, message: "update is an extension-role operation")
        }
        let current = try self.configuration(of: id, operation: .update)
        let capabilities = current.deviceCapabilities
        guard configuration.deviceCapabilities == capabilities else {
            throw .init(.invalidRequest, operation: .update, field: .deviceCapabilities, message: "capabilities are fixed by registration")
        }
        if configuration.devicePlacement != current.devicePlacement {
            guard capabilities.contains(.placement) else {
                throw .init(.accessoryNotCapable, operation: .update, field: .devicePlacement, message: "placement was not registered")
            }
            guard configuration.devicePlacement != nil else {
                throw .init(
                    .invalidRequest, operation: .update, field: .devicePlacement,
                    message: "a placement-capable accessory always has a placement")
            }
        }
        if configuration.primaryAudioSourceDeviceIdentifier != current.primaryAudioSourceDeviceIdentifier
            || configuration.secondaryAudioSourceDeviceIdentifier != current.secondaryAudioSourceDeviceIdentifier
        {
            guard capabilities.contains(.audioSwitching) else {
                let field: AccessoryControlDevice.Error.Field =
                    configuration.primaryAudioSourceDeviceIdentifier != current.primaryAudioSourceDeviceIdentifier
                    ? .primaryAudioSourceDeviceIdentifier : .secondaryAudioSourceDeviceIdentifier
                throw .init(.accessoryNotCapable, operation: .update, field: field, message: "audioSwitching was not registered")
            }
        }
        try Self.checkSources(configuration, operation: .update)
        guard configuration != current else { return false }
        registrations[id]?.configuration = configuration
        return true
    }

    /// The system invalidates a registration (as iOS may); returns whether it was active.
    @discardableResult
    public mutating func invalidate(_ id: BluetoothAddress) -> Bool {
        guard let registration = registrations[id], !registration.isInvalidated else { return false }
        registrations[id]?.isInvalidated = true
        return true
    }

    /// Takes an accessory's registration as storage holds it (nil: it has none), written by
    /// another bridge instance sharing the database. Nothing is checked: the instance that
    /// stored it registered or updated it through the rules above, and refusing it here would
    /// only make the two instances disagree.
    public mutating func adoptStored(_ registration: Registration?, for id: BluetoothAddress) {
        registrations[id] = registration
    }

    static func checkSources(
        _ configuration: AccessoryControlDevice.Configuration, operation: AccessoryControlDevice.Operation
    ) throws(AccessoryControlDevice.Error) {
        if configuration.secondaryAudioSourceDeviceIdentifier != nil && configuration.primaryAudioSourceDeviceIdentifier == nil {
            throw .init(
                .invalidRequest, operation: operation, field: .secondaryAudioSourceDeviceIdentifier,
                message: "a secondary source needs a primary source")
        }
        if let primary = configuration.primaryAudioSourceDeviceIdentifier, primary == configuration.secondaryAudioSourceDeviceIdentifier {
            throw .init(
                .invalidRequest, operation: operation, field: .secondaryAudioSourceDeviceIdentifier,
                message: "primary and secondary source are the same device \(primary)")
        }
    }
}
