extension AccessoryControlDevice {
    /// An AudioAccessoryKit error, with what the bridge publishes on `accessory/<ID>/error`.
    public struct Error: Swift.Error, Hashable, Sendable {
        /// AudioAccessoryKit's four cases.
        public enum Code: String, CaseIterable, Hashable, Sendable {
            case accessoryNotCapable
            case invalidRequest
            case invalidated
            case unknown

            /// What the caller must do; no case is transient, so none says "retry".
            public var disposition: Disposition {
                switch self {
                case .accessoryNotCapable: .correctCapability
                case .invalidRequest: .correctRequest
                case .invalidated: .discardHandleAndReevaluateRegistration
                case .unknown: .surface
                }
            }
        }

        /// The documented response to each error; the bridge never retries by itself.
        public enum Disposition: String, CaseIterable, Hashable, Sendable {
            case correctCapability
            case correctRequest
            case discardHandleAndReevaluateRegistration
            case surface
        }

        /// The configuration field (or request part) an error is about.
        public enum Field: String, Hashable, Sendable {
            case devicePlacement
            case deviceCapabilities
            case primaryAudioSourceDeviceIdentifier
            case secondaryAudioSourceDeviceIdentifier
            case accessory
        }

        /// What the container role must do after the error.
        public enum Recovery: String, Hashable, Sendable {
            case needsContainerRegistrationEvaluation
        }

        /// The error domain in responses.
        public static let domain = "AccessoryControlDevice"

        public var code: Code
        public var operation: Operation
        public var field: Field?
        public var message: String
        public var recovery: Recovery?

        /// Creates an error; `invalidated` always carries the registration recovery.
        public init(_ code: Code, operation: Operation, field: Field? = nil, message: String) {
            self.code = code
            self.operation = operation
            self.field = field
            self.message = message
            self.recovery = code == .invalidated ? .needsContainerRegistrationEvaluation : nil
        }
    }
}
