import AccessoryKit
import JSON

/// The pairing form behind Home Assistant's bridge controls (mqtt-api.md, "Pairing form"):
/// the candidate chosen and the name to give, kept by the bridge between presses.
///
/// A Home Assistant button publishes a fixed payload, so "Pair" cannot carry a candidate or
/// a name. The "Candidate" select and the "Name to give" text fill this form in on
/// `bridge/pairing/set`; "Pair" (`{"action":"pair"}` there) makes the runtime send
/// `picker/select` with the form's content through the request path, so it is validated,
/// answered and counted like any client's `picker/select`. The form's state is retained on
/// `bridge/pairing`, where the select and the text read it.
struct PairingForm: Hashable, Sendable {
    var candidate: BluetoothAddress?
    var name: String?

    /// One field of a `bridge/pairing/set` message.
    enum Update<Value: Hashable & Sendable>: Hashable, Sendable {
        case keep
        case clear
        case set(Value)
    }

    /// What a `bridge/pairing/set` message asks for.
    enum Action: Hashable, Sendable {
        case fill(candidate: Update<BluetoothAddress>, name: Update<String>)
        case pair
    }

    /// A decoded `bridge/pairing/set` message: the action, or the error it is answered with.
    typealias Command = FormCommand<Action>

    /// The request name the form's answers and refusals use (`bridge/response/pairing/set`,
    /// `bridge/last_response`); "Pair" itself is answered as `picker/select`.
    static let requestName = FormName.pairing

    /// `bridge/pairing`.
    var payload: JSONValue {
        ["candidate": candidate.map { .string($0.description) } ?? .null, "name": name.map(JSONValue.string) ?? .null]
    }

    /// The `picker/select` request "Pair" sends: the form's candidate and name (each left
    /// out when not filled in, so the request API refuses a missing candidate itself).
    func selectRequest(transaction: JSONValue?) -> IncomingRequest {
        var members: [(String, JSONValue)] = []
        if let candidate { members.append(("id", .string(candidate.description))) }
        if let name { members.append(("name", .string(name))) }
        return IncomingRequest(.selectCandidate, members: members, transaction: transaction)
    }

    /// Decodes a `bridge/pairing/set` payload: any of `candidate` (an address; `null`, `""`
    /// or `"none"` clears it) and `name` (1-128 characters once trimmed, as picker/select
    /// wants; `null` or blank clears it), or `"action":"pair"` alone. Refusals are the
    /// request API's `invalidRequest`, with a message naming the key.
    static func decode(_ bytes: [UInt8]) -> Command { Command.decoding(bytes, command(in:)) }

    /// What a message that is a JSON object asks for.
    private static func command(in message: FormMessage) -> Command {
        let (payload, transaction, keys) = (message.payload, message.transaction, message.keys)
        if let action = payload["action"] {
            guard action.stringValue == "pair" else { return Command.invalid("'action' must be \"pair\"", transaction) }
            guard keys == ["action"] else { return Command.invalid("'action' takes no other keys", transaction) }
            return Command(transaction: transaction, decoded: .success(.pair))
        }
        guard !keys.isEmpty, keys.isSubset(of: ["candidate", "name"]) else {
            return Command.invalid("expected 'candidate' and/or 'name', or 'action'", transaction)
        }
        var candidate = Update<BluetoothAddress>.keep
        var name = Update<String>.keep
        do throws(RequestDecoder.DecodeError) {
            if let value = payload["candidate"] {
                if value.isNull || value.stringValue == "" || value.stringValue == "none" {
                    candidate = .clear
                } else {
                    candidate = .set(try RequestDecoder.address(payload, "candidate"))
                }
            }
            if let value = payload["name"] {
                let blank = value.stringValue.map { $0.allSatisfy(\.isWhitespace) } ?? false
                if value.isNull || blank {
                    name = .clear
                } else if let text = try RequestDecoder.displayName(payload) {
                    name = .set(text)
                }
            }
        } catch {
            return Command.invalid(error.message, transaction)
        }
        return Command(transaction: transaction, decoded: .success(.fill(candidate: candidate, name: name)))
    }
}
