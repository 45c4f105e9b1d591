import AccessoryKit
import JSON
import MQTT

/// The pairing form behind Home Assistant's Pair button, as a component: it owns the form
/// (``PairingForm``), claims `bridge/pairing/set`, and keeps `bridge/pairing` retained.
///
/// The form is not stored: a restart ends the picker, and with it any choice of candidate.
/// In a cluster only the holder of partition 0, whose picker it is, acts on the form.
final class PairingFormComponent: RuntimeComponent {
    private(set) var form = PairingForm()

    var claims: Set<TopicClaim> { [.pairingForm] }

    func handle(_ message: MQTTMessage, route: IngestRoute, _ runtime: BridgeRuntime) async {
        guard case .pairing = route else { return }
        // A retained press would be carried out again after every reconnect.
        if message.retain { return runtime.logger.warning(Ingest.retainedRefusal(message.topic)) }
        let command = PairingForm.decode(message.payload)
        guard runtime.ownership.ownsBridge else { return }
        await handle(command, runtime)
    }

    /// `bridge/pairing/set`: fills in the form (answered on `bridge/response/pairing/set`), or
    /// sends its `picker/select` for "Pair" (answered on `bridge/response/picker/select`).
    private func handle(_ command: PairingForm.Command, _ runtime: BridgeRuntime) async {
        let answer = { (result: Result<JSONValue, ResponseError>) in
            runtime.respond(PairingForm.requestName, result, transaction: command.transaction, to: .mqtt)
        }
        switch command.decoded {
        case .failure(let error):
            answer(.failure(error))
        case .success(.pair):
            let chosen = form.candidate
            await runtime.handle(form.selectRequest(transaction: command.transaction), answer: .mqtt, at: runtime.clock())
            // Set up: the candidate has left the picker (applied(_:_:) clears it) and the name
            // was given; a refused select leaves the form as it was, for another try.
            if let chosen, runtime.engine.picker?.candidate(chosen) == nil, runtime.engine.status(of: chosen) != nil {
                form.name = nil
                runtime.publisher.publishPairing(form)
            }
        case .success(.fill(let candidate, let name)):
            var filled = form
            switch candidate {
            case .keep: break
            case .clear: filled.candidate = nil
            case .set(let id):
                guard runtime.engine.picker?.candidate(id) != nil else {
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
            runtime.publisher.publishPairing(form)
            answer(.success(form.payload))
        }
    }

    /// A chosen candidate that left the picker (chosen, dismissed, timed out) is no longer
    /// chosen: the form never offers Pair for something the picker cannot select.
    func applied(_ outputs: [EngineOutput], _ runtime: BridgeRuntime) {
        guard let candidate = form.candidate, outputs.contains(where: { if case .pickerChanged = $0 { true } else { false } }),
            runtime.engine.picker?.candidate(candidate) == nil
        else { return }
        form.candidate = nil
        runtime.publisher.publishPairing(form)
    }

    func republish(_ runtime: BridgeRuntime) {
        runtime.publisher.publishPairing(form)
    }
}
