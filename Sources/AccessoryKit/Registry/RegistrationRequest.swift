/// A container-role `register` request as it arrives (`accessory/register`):
/// names and address strings, checked here so every AudioAccessoryKit rule,
/// including "an address that is not 6 bytes", is decided by the engine.
public struct RegistrationRequest: Hashable, Sendable {
    /// Capability names (`audioSwitching`, `placement`).
    public var capabilities: [String]
    /// An initial placement name, if given.
    public var placement: String?
    /// The primary source address text, if given.
    public var primarySource: String?
    /// The secondary source address text, if given.
    public var secondarySource: String?

    /// Creates a request from raw values.
    public init(capabilities: [String], placement: String? = nil, primarySource: String? = nil, secondarySource: String? = nil) {
        self.capabilities = capabilities
        self.placement = placement
        self.primarySource = primarySource
        self.secondarySource = secondarySource
    }

    /// Creates a request from typed values.
    public init(
        capabilities: AccessoryControlDevice.Capabilities, placement: AccessoryControlDevice.Placement? = nil,
        primarySource: BluetoothAddress? = nil, secondarySource: BluetoothAddress? = nil
    ) {
        self.init(
            capabilities: capabilities.names, placement: placement?.rawValue,
            primarySource: primarySource?.description, secondarySource: secondarySource?.description)
    }

    /// The requested configuration, before the registry's rules; `invalidRequest` for
    /// unknown names and addresses that are not six bytes.
    public func configuration() throws(AccessoryControlDevice.Error) -> AccessoryControlDevice.Configuration {
        var capabilities: AccessoryControlDevice.Capabilities = []
        for name in self.capabilities {
            guard let capability = AccessoryControlDevice.Capabilities(name: name) else {
                throw .init(.invalidRequest, operation: .register, field: .deviceCapabilities, message: "unknown capability '\(name)'")
            }
            capabilities.insert(capability)
        }
        var placement: AccessoryControlDevice.Placement?
        if let name = self.placement {
            guard let value = AccessoryControlDevice.Placement(rawValue: name) else {
                throw .init(.invalidRequest, operation: .register, field: .devicePlacement, message: "unknown placement '\(name)'")
            }
            placement = value
        }
        func address(_ text: String?, _ field: AccessoryControlDevice.Error.Field) throws(AccessoryControlDevice.Error) -> BluetoothAddress?
        {
            guard let text else { return nil }
            guard let address = BluetoothAddress(text) else {
                throw .init(.invalidRequest, operation: .register, field: field, message: "'\(text)' is not a 6-byte Bluetooth address")
            }
            return address
        }
        return .init(
            devicePlacement: placement, deviceCapabilities: capabilities,
            primaryAudioSourceDeviceIdentifier: try address(primarySource, .primaryAudioSourceDeviceIdentifier),
            secondaryAudioSourceDeviceIdentifier: try address(secondarySource, .secondaryAudioSourceDeviceIdentifier))
    }
}
