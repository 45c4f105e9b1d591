import AccessoryKit
import JSON

/// A `bridge/request/<name>` message, parsed and decoded by ``Ingest``: what ``RuntimeCore``
/// carries out, or the error it is answered with.
struct IncomingRequest: Sendable {
    var name: String
    /// The request's `transaction`, echoed in its response (nil when the payload was not JSON).
    var transaction: JSONValue?
    var decoded: Result<RequestDecoder.Decoded, ResponseError>

    /// Whether the request belongs to AccessoryControlDevice (its errors use that domain).
    var isAccessoryControl: Bool { RequestDecoder.isAccessoryControl(name) }
}

extension IncomingRequest {
    /// A request a form sends on the user's behalf: `members`, with the transaction, decoded
    /// as any client's request is.
    init(_ request: RequestName, members: [(String, JSONValue)], transaction: JSONValue?) {
        var members = members
        if let transaction { members.append(("transaction", transaction)) }
        self.init(
            name: request.name, transaction: transaction, decoded: RequestDecoder.decode(name: request.name, payload: .object(members)))
    }
}
