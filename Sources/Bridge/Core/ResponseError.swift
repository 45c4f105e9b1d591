import AccessoryKit

/// The error half of a response: a domain error from the engine, or `invalidRequest` /
/// `unknown` raised by the bridge itself (malformed payload, storage failure).
public struct ResponseError: Error, Hashable, Sendable {
    /// What failed, by kind: the kind decides the HTTP status of the request API, its name is
    /// the response's `code`.
    public enum Kind: Hashable, Sendable {
        /// A malformed request: a key missing or of the wrong type, an unknown name.
        case invalidRequest
        /// A failure of the bridge itself (storage), or a request it cannot answer here.
        case unknown
        /// The request was understood but the bridge's state refuses it, by the domain
        /// error's code name (`pickerAlreadyActive`, `accessoryNotCapable`).
        case refused(String)

        /// A domain error's code; its own `invalidRequest` and `unknown` are those kinds.
        public init(_ error: RequestError) {
            switch error {
            case .setup(let error) where error.code == .invalidRequest: self = .invalidRequest
            case .setup(let error) where error.code == .unknown: self = .unknown
            case .accessoryControl(let error) where error.code == .invalidRequest: self = .invalidRequest
            case .accessoryControl(let error) where error.code == .unknown: self = .unknown
            default: self = .refused(error.code)
            }
        }

        /// The name a response carries as `code` (the same in both domains).
        public var name: String {
            switch self {
            case .invalidRequest: AccessoryControlDevice.Error.Code.invalidRequest.rawValue
            case .unknown: AccessoryControlDevice.Error.Code.unknown.rawValue
            case .refused(let name): name
            }
        }
    }

    public var kind: Kind
    public var domain: String
    public var raw: Int?
    public var message: String

    /// The response's `code`: `invalidRequest`, `unknown`, or the domain error's own.
    public var code: String { kind.name }

    public init(kind: Kind, domain: String, raw: Int?, message: String) {
        self.kind = kind
        self.domain = domain
        self.raw = raw
        self.message = message
    }

    public init(_ error: RequestError) {
        self.init(kind: Kind(error), domain: error.domain, raw: error.raw, message: error.message)
    }

    /// A malformed request, in the domain of the operation it tried.
    public static func invalidRequest(_ message: String, accessoryControl: Bool) -> ResponseError {
        accessoryControl
            ? ResponseError(kind: .invalidRequest, domain: AccessoryControlDevice.Error.domain, raw: nil, message: message)
            : ResponseError(
                kind: .invalidRequest, domain: SetupError.domain, raw: SetupError.Code.invalidRequest.rawValue, message: message)
    }

    /// A failure of the bridge itself (storage), never acknowledged as success.
    public static func unknown(_ message: String, accessoryControl: Bool) -> ResponseError {
        accessoryControl
            ? ResponseError(kind: .unknown, domain: AccessoryControlDevice.Error.domain, raw: nil, message: message)
            : ResponseError(kind: .unknown, domain: SetupError.domain, raw: SetupError.Code.unknown.rawValue, message: message)
    }
}
