extension AccessoryControlDevice {
    /// The state the system routes audio by (AudioAccessoryKit's `Configuration`).
    ///
    /// Source identifiers are `BluetoothAddress` rather than `Data`, so "exactly six
    /// bytes" holds by construction once a value exists; raw input is checked where
    /// it enters (`RegistrationRequest`).
    public struct Configuration: Hashable, Sendable {
        /// The current placement; always nil without `.placement`.
        public var devicePlacement: Placement?
        /// The registered capabilities; fixed after registration.
        public var deviceCapabilities: Capabilities
        /// The first connected source device; always nil without `.audioSwitching`.
        public var primaryAudioSourceDeviceIdentifier: BluetoothAddress?
        /// The second connected source device; never without a primary.
        public var secondaryAudioSourceDeviceIdentifier: BluetoothAddress?

        /// Creates a configuration.
        public init(
            devicePlacement: Placement? = nil, deviceCapabilities: Capabilities,
            primaryAudioSourceDeviceIdentifier: BluetoothAddress? = nil,
            secondaryAudioSourceDeviceIdentifier: BluetoothAddress? = nil
        ) {
            self.devicePlacement = devicePlacement
            self.deviceCapabilities = deviceCapabilities
            self.primaryAudioSourceDeviceIdentifier = primaryAudioSourceDeviceIdentifier
            self.secondaryAudioSourceDeviceIdentifier = secondaryAudioSourceDeviceIdentifier
        }

        /// The source identifiers that are set, primary first.
        public var sources: [BluetoothAddress] {
            [primaryAudioSourceDeviceIdentifier, secondaryAudioSourceDeviceIdentifier].compactMap { $0 }
        }
    }
}
