import AccessoryKit

/// The error half of a response: a domain error from the engine, or `invalidRequest` /
/// `unknown` raised by the bridge itself (malformed payload, storage failure).
public struct ResponseError: Error, Hashable, Sendable {
    public var code: String
    public var domain: String
    public var raw: Int?
    public var message: String

    public init(code: String, domain: String, raw: Int?, message: String) {
        self.code = code
        self.domain = domain
        self.raw = raw
        self.message = message
    }

    public init(_ error: RequestError) {
        self.init(code: error.code, domain: error.domain, raw: error.raw, message: error.message)
    }

    /// A malformed request, in the domain of the operation it tried.
    public static func invalidRequest(_ message: String, accessoryControl: Bool) -> ResponseError {
        accessoryControl
            ? ResponseError(code: "invalidRequest", domain: AccessoryControlDevice.Error.domain, raw: nil, message: message)
            : ResponseError(
                code: "invalidRequest", domain: SetupError.domain, raw: SetupError.Code.invalidRequest.rawValue, message: message)
    }

    /// A failure of the bridge itself (storage), never acknowledged as success.
    public static func unknown(_ message: String, accessoryControl: Bool) -> ResponseError {
        accessoryControl
            ? ResponseError(code: "unknown", domain: AccessoryControlDevice.Error.domain, raw: nil, message: message)
            : ResponseError(code: "unknown", domain: SetupError.domain, raw: SetupError.Code.unknown.rawValue, message: message)
    }
}
