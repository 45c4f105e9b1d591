import AccessoryKit
import Configuration
import JSON
import MQTT

/// The pairing form behind Home Assistant's Pair button, as a component: it owns the form
/// (``PairingForm``), claims `bridge/pairing/set`, and keeps `bridge/pairing` retained.
///
/// The form is not stored: a restart ends the picker, and with it any choice of candidate.
/// In a cluster only the holder of partition 0, whose picker it is, acts on the form.
final class PairingFormComponent: FormComponent {
    private(set) var form = PairingForm()
    private let topics: Topics

    init(topics: Topics) { self.topics = topics }

    var formTopic: String { topics.bridgePairingSet }

    func press(_ payload: [UInt8], _ context: ComponentContext) async {
        let command = PairingForm.decode(payload)
        guard context.ownsBridge else { return }
        await handle(command, context)
    }

    /// `bridge/pairing/set`: fills in the form (answered on `bridge/response/pairing/set`), or
    /// sends its `picker/select` for "Pair" (answered on `bridge/response/picker/select`).
    private func handle(_ command: PairingForm.Command, _ context: ComponentContext) async {
        let answer = { (result: Result<JSONValue, ResponseError>) in
            context.respond(PairingForm.requestName, result, transaction: command.transaction)
        }
        switch command.decoded {
        case .failure(let error):
            answer(.failure(error))
        case .success(.pair):
            let chosen = form.candidate
            await context.handle(form.selectRequest(transaction: command.transaction), answer: .mqtt)
            // Set up: the candidate has left the picker (applied(_:_:) clears it) and the name
            // was given; a refused select leaves the form as it was, for another try.
            if let chosen, context.engine.picker?.candidate(chosen) == nil, context.engine.status(of: chosen) != nil {
                form.name = nil
                publish(context)
            }
        case .success(.fill(let candidate, let name)):
            var filled = form
            switch candidate {
            case .keep: break
            case .clear: filled.candidate = nil
            case .set(let id):
                guard context.engine.picker?.candidate(id) != nil else {
                    return answer(.failure(.invalidRequest("'candidate' \(id) is not a candidate of the picker", accessoryControl: false)))
                }
                filled.candidate = id
            }
            switch name {
            case .keep: break
            case .clear: filled.name = nil
            case .set(let text): filled.name = text
            }
            form = filled
            publish(context)
            answer(.success(form.payload))
        }
    }

    /// A chosen candidate that left the picker (chosen, dismissed, timed out) is no longer
    /// chosen: the form never offers Pair for something the picker cannot select.
    func applied(_ outputs: [EngineOutput], at now: Timestamp, _ context: ComponentContext) {
        guard let candidate = form.candidate, outputs.contains(where: { if case .pickerChanged = $0 { true } else { false } }),
            context.engine.picker?.candidate(candidate) == nil
        else { return }
        form.candidate = nil
        publish(context)
    }

    func republish(at now: Timestamp, _ context: ComponentContext) { publish(context) }

    /// `bridge/pairing`: the form's state.
    private func publish(_ context: ComponentContext) { context.publishBridge(topics.bridgePairing, form.payload) }
}
