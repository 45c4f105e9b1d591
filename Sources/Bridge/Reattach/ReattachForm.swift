import AccessoryKit
import JSON

/// The re-attach form behind Home Assistant's per-accessory "Look-alike" select and
/// "Re-attach" button (mqtt-api.md, "Re-attach form"): the look-alike chosen for each
/// accessory, kept by the bridge between the choice and the press.
///
/// A Home Assistant button publishes a fixed payload, so "Re-attach" cannot carry the address.
/// The select fills this form in on `bridge/reattach/set` (`{"id","lookalike"}`); the button
/// (`{"id","action":"reattach"}` there) makes the runtime send `accessory/reattach` with the
/// chosen address through the request path, so it is validated, answered and counted like any
/// client's. Each accessory's choice is retained on `accessory/<ID>/reattach`, where the
/// select reads it. Not stored: a restart forgets the choices (and the look-alikes with them).
struct ReattachForm: Hashable, Sendable {
    /// The look-alike chosen per accessory.
    private(set) var choices: [BluetoothAddress: BluetoothAddress] = [:]

    /// What a `bridge/reattach/set` message asks for.
    enum Action: Hashable, Sendable {
        /// Choose a look-alike for the accessory (nil: clear the choice).
        case choose(BluetoothAddress, lookalike: BluetoothAddress?)
        /// Re-attach the accessory to its chosen look-alike.
        case reattach(BluetoothAddress)
    }

    /// A decoded `bridge/reattach/set` message: the action, or the error it is answered with.
    typealias Command = FormCommand<Action>

    /// The request name the form's answers and refusals use (`bridge/response/reattach/set`,
    /// `bridge/last_response`); "Re-attach" itself is answered as `accessory/reattach`.
    static let requestName = FormName.reattach

    /// What Home Assistant's select shows for no choice (a select state `none` shows as unknown).
    static let noChoice = "(none)"

    /// The accessory's choice.
    func choice(of id: BluetoothAddress) -> BluetoothAddress? { choices[id] }

    /// `accessory/<ID>/reattach`.
    func payload(of id: BluetoothAddress) -> JSONValue {
        ["lookalike": choices[id].map { .string($0.description) } ?? .null]
    }

    mutating func choose(_ lookalike: BluetoothAddress?, for id: BluetoothAddress) { choices[id] = lookalike }

    /// The `accessory/reattach` request "Re-attach" sends (the address left out when none was
    /// chosen, so the request API refuses the missing key itself).
    func reattachRequest(_ id: BluetoothAddress, transaction: JSONValue?) -> IncomingRequest {
        var members: [(String, JSONValue)] = [("id", .string(id.description))]
        if let address = choices[id] { members.append(("address", .string(address.description))) }
        return IncomingRequest(.reattach, members: members, transaction: transaction)
    }

    /// Decodes a `bridge/reattach/set` payload: `id` (an accessory) with either `lookalike` (an
    /// address; `null`, `""`, `"none"` or `"(none)"` clears it) or `"action":"reattach"`.
    /// Refusals are the request API's `invalidRequest`, with a message naming the key.
    static func decode(_ bytes: [UInt8]) -> Command { Command.decoding(bytes, command(in:)) }

    /// What a message that is a JSON object asks for.
    private static func command(in message: FormMessage) -> Command {
        let (payload, transaction, keys) = (message.payload, message.transaction, message.keys.subtracting(["id"]))
        do throws(RequestDecoder.DecodeError) {
            let id = try RequestDecoder.address(payload, "id")
            if let action = payload["action"] {
                guard action.stringValue == "reattach" else { return Command.invalid("'action' must be \"reattach\"", transaction) }
                guard keys == ["action"] else { return Command.invalid("'action' takes no other keys than 'id'", transaction) }
                return Command(transaction: transaction, decoded: .success(.reattach(id)))
            }
            guard keys == ["lookalike"], let value = payload["lookalike"] else {
                return Command.invalid("expected 'lookalike' or 'action' with 'id'", transaction)
            }
            if value.isNull || ["", "none", noChoice].contains(value.stringValue) {
                return Command(transaction: transaction, decoded: .success(.choose(id, lookalike: nil)))
            }
            return Command(
                transaction: transaction, decoded: .success(.choose(id, lookalike: try RequestDecoder.address(payload, "lookalike"))))
        } catch {
            return Command.invalid(error.message, transaction)
        }
    }
}
