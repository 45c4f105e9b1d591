/// iOS 27's `AudioAccessoryError`: why a head-tracking sensor frame was refused. Apart from
/// ``AccessoryControlDevice/Error`` as in Apple's API, because it is not a registry call's
/// failure; published on `accessory/<ID>/error` with operation `headTracking`.
public struct AudioAccessoryError: Swift.Error, Hashable, Sendable {
    /// Apple's two cases.
    public enum Code: String, CaseIterable, Hashable, Sendable {
        /// The frame is empty or longer than ``BridgeEngine/maximumSensorFrameSize`` bytes.
        case invalidDataSize
        /// The accessory's head-tracking session is not active (or it has none).
        case notActivated
    }

    public var code: Code
    public var message: String

    /// Creates an error.
    public init(_ code: Code, message: String) {
        self.code = code
        self.message = message
    }

    /// The operation every such error belongs to.
    public var operation: AccessoryControlDevice.Operation { .headTracking }
}
