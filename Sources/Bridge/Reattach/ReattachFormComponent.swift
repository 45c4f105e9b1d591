import AccessoryKit
import Configuration
import JSON
import MQTT

/// The re-attach form (``ReattachForm``) as a component: it claims `bridge/reattach/set`,
/// keeps each accessory's choice retained on `accessory/<ID>/reattach`, and turns "Re-attach"
/// into `accessory/reattach`.
///
/// In a cluster every instance hears the form; the one that owns the accessory acts on it and
/// publishes its choice, as it answers the accessory's requests.
final class ReattachFormComponent: FormComponent {
    private(set) var form = ReattachForm()
    private let topics: Topics

    init(topics: Topics) { self.topics = topics }

    var formTopic: String { topics.bridgeReattachSet }

    func press(_ payload: [UInt8], _ context: ComponentContext) async {
        let command = ReattachForm.decode(payload)
        let answer = { (result: Result<JSONValue, ResponseError>) in
            context.respond(ReattachForm.requestName, result, transaction: command.transaction)
        }
        switch command.decoded {
        case .failure(let error):
            // A refusal that names no accessory is answered by the bridge's owner alone.
            if context.ownsBridge { answer(.failure(error)) }
        case .success(.choose(let id, let lookalike)):
            guard context.owns(id) else { return }
            guard context.engine.status(of: id) != nil else {
                return answer(.failure(.invalidRequest("unknown accessory \(id)", accessoryControl: false)))
            }
            form.choose(lookalike, for: id)
            context.publishAccessory(id, topics.reattachChoice(id), form.payload(of: id))
            answer(.success(["id": .string(id.description), "lookalike": lookalike.map { .string($0.description) } ?? .null]))
        case .success(.reattach(let id)):
            guard context.owns(id) else { return }
            await context.handle(form.reattachRequest(id, transaction: command.transaction), answer: .mqtt)
            // Re-attached: the choice is spent (a refusal keeps it, for another try).
            if let chosen = form.choice(of: id), context.engine.followedAddress(of: id) == chosen {
                form.choose(nil, for: id)
                context.publishAccessory(id, topics.reattachChoice(id), form.payload(of: id))
            }
        }
    }

    /// A removed accessory's choice goes, and its topic is cleared.
    func applied(_ outputs: [EngineOutput], at now: Timestamp, _ context: ComponentContext) {
        for case .accessoryRemoved(let id) in outputs {
            form.choose(nil, for: id)
            context.publishAccessory(id, topics.reattachChoice(id), nil)
        }
    }

    /// Every owned accessory's choice (none after a restart, which also replaces a choice the
    /// broker kept from before it).
    func republish(at now: Timestamp, _ context: ComponentContext) {
        for id in context.engine.engine.accessories.map(\.id) where context.owns(id) {
            context.publishAccessory(id, topics.reattachChoice(id), form.payload(of: id))
        }
    }
}
