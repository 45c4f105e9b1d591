/// An AccessorySetupKit error (`ASError`, domain `ASErrorDomain`).
public struct SetupError: Error, Hashable, Sendable, CustomStringConvertible {
    /// ASError codes with their raw values.
    public enum Code: Int, CaseIterable, Hashable, Sendable {
        case success = 0
        case unknown = 1
        case activationFailed = 100
        case connectionFailed = 150
        case discoveryTimeout = 200
        case extensionNotFound = 300
        case invalidated = 400
        case invalidRequest = 450
        case pickerAlreadyActive = 500
        case pickerRestricted = 550
        case userCancelled = 700
        case userRestricted = 750

        /// The API name (`discoveryTimeout`).
        public var name: String { String(describing: self) }
    }

    /// The error domain.
    public static let domain = "ASErrorDomain"

    public var code: Code
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(Self.domain) \(code.name) (\(code.rawValue)): \(message)" }
}
