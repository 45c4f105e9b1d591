import AccessoryKit
import JSON
import MQTT

/// The re-attach form (``ReattachForm``) as a component: it claims `bridge/reattach/set`,
/// keeps each accessory's choice retained on `accessory/<ID>/reattach`, and turns "Re-attach"
/// into `accessory/reattach`.
///
/// In a cluster every instance hears the form; the one that owns the accessory acts on it and
/// publishes its choice, as it answers the accessory's requests.
final class ReattachFormComponent: RuntimeComponent {
    private(set) var form = ReattachForm()

    var claims: Set<TopicClaim> { [.reattachForm] }

    func handle(_ message: MQTTMessage, route: IngestRoute, _ runtime: BridgeRuntime) async {
        guard case .reattach = route else { return }
        // A retained press would be carried out again after every reconnect.
        if message.retain { return runtime.logger.warning(Ingest.retainedRefusal(message.topic)) }
        let command = ReattachForm.decode(message.payload)
        let answer = { (result: Result<JSONValue, ResponseError>) in
            runtime.respond(ReattachForm.requestName, result, transaction: command.transaction, to: .mqtt)
        }
        switch command.decoded {
        case .failure(let error):
            // A refusal that names no accessory is answered by the bridge's owner alone.
            if runtime.ownership.ownsBridge { answer(.failure(error)) }
        case .success(.choose(let id, let lookalike)):
            guard runtime.ownership.owns(id) else { return }
            guard runtime.engine.status(of: id) != nil else {
                return answer(.failure(.invalidRequest("unknown accessory \(id)", accessoryControl: false)))
            }
            form.choose(lookalike, for: id)
            runtime.publisher.publishReattachChoice(id, form.payload(of: id))
            answer(.success(["id": .string(id.description), "lookalike": lookalike.map { .string($0.description) } ?? .null]))
        case .success(.reattach(let id)):
            guard runtime.ownership.owns(id) else { return }
            await runtime.handle(form.reattachRequest(id, transaction: command.transaction), answer: .mqtt, at: runtime.clock())
            // Re-attached: the choice is spent (a refusal keeps it, for another try).
            if let chosen = form.choice(of: id), runtime.engine.followedAddress(of: id) == chosen {
                form.choose(nil, for: id)
                runtime.publisher.publishReattachChoice(id, form.payload(of: id))
            }
        }
    }

    /// A removed accessory's choice goes, and its topic is cleared.
    func applied(_ outputs: [EngineOutput], _ runtime: BridgeRuntime) {
        for case .accessoryRemoved(let id) in outputs {
            form.choose(nil, for: id)
            runtime.publisher.publishReattachChoice(id, nil)
        }
    }

    /// Every owned accessory's choice (none after a restart, which also replaces a choice the
    /// broker kept from before it).
    func republish(_ runtime: BridgeRuntime) {
        for id in runtime.engine.engine.accessories.map(\.id) where runtime.ownership.owns(id) {
            runtime.publisher.publishReattachChoice(id, form.payload(of: id))
        }
    }
}
