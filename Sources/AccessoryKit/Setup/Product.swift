/// A product from the configuration: a picker display item plus what its hardware can do.
public struct Product: Hashable, Sendable {
    /// `setup_options` (AccessorySetupKit's `ASPickerDisplayItem.SetupOptions`).
    public struct SetupOptions: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// The user may give a new name during setup (`pickerSetupRename`).
        public static let rename = SetupOptions(rawValue: 1 << 0)
        /// The accessory waits in `awaitingAuthorization` until authorized or failed.
        public static let confirmAuthorization = SetupOptions(rawValue: 1 << 1)
        /// Setup continues outside the picker; the picker still dismisses after adding.
        public static let finishInApp = SetupOptions(rawValue: 1 << 2)
    }

    public var name: String
    public var hardware: HardwareType
    /// What the hardware supports; registration may not ask for more.
    public var capabilities: AccessoryControlDevice.Capabilities
    /// Register right after pairing (initial placement `offHead`).
    public var autoRegister: Bool
    public var setupOptions: SetupOptions
    public var descriptor: DiscoveryDescriptor

    /// Creates a product.
    public init(
        name: String, hardware: HardwareType, capabilities: AccessoryControlDevice.Capabilities,
        autoRegister: Bool = false, setupOptions: SetupOptions = [], descriptor: DiscoveryDescriptor
    ) {
        self.name = name
        self.hardware = hardware
        self.capabilities = capabilities
        self.autoRegister = autoRegister
        self.setupOptions = setupOptions
        self.descriptor = descriptor
    }
}
