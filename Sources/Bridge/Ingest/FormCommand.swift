import JSON

/// A decoded message to one of the forms behind Home Assistant's buttons (``PairingForm``,
/// ``ReattachForm``): the form's action, or the error it is answered with.
struct FormCommand<Action: Sendable>: Sendable {
    var transaction: JSONValue?
    var decoded: Result<Action, ResponseError>

    /// A refusal with the request API's `invalidRequest`, naming the key at fault.
    static func invalid(_ message: String, _ transaction: JSONValue?) -> FormCommand {
        FormCommand(transaction: transaction, decoded: .failure(.invalidRequest(message, accessoryControl: false)))
    }

    /// The form's message in `bytes` handed to `decode`, or the refusal of what is no JSON
    /// object (the same for every form).
    static func decoding(_ bytes: [UInt8], _ decode: (FormMessage) -> FormCommand) -> FormCommand {
        switch FormMessage.parse(bytes) {
        case .success(let message): decode(message)
        case .failure(let error): FormCommand(transaction: nil, decoded: .failure(error))
        }
    }
}
