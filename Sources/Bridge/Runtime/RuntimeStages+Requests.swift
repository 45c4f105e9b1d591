import AccessoryKit
import JSON

/// The request path: `bridge/request/<name>`, the console's `POST /api/request/<name>` and the
/// forms' presses all end here, each with where its answer goes.
extension RuntimeStages {
    /// Exactly one answer, to `answer`, given only after the change is committed to storage
    /// (``RuntimeCore/handleRequest(_:name:at:)``).
    func handle(_ request: IncomingRequest, answer: RequestAnswer, at now: Timestamp) async {
        guard ownership.answers(request) else {
            // Another instance answers it on MQTT; over HTTP this one must say something:
            // 421 Misdirected Request, with why.
            if case .http(let reply) = answer {
                let refusal = Result<JSONValue, ResponseError>.failure(.misdirected(request, partitioning: ownership.partitioning))
                reply.answer(
                    refusal, body: publisher.stamped(publisher.payloads.response(refusal, transaction: request.transaction), for: nil),
                    status: 421)
            }
            return
        }
        switch request.decoded {
        case .failure(let error):
            respond(request, .failure(error), to: answer)
        case .success(.health):
            countDroppedMessages(at: now)
            respond(request, .success(publisher.health(at: now)), to: answer)
        case .success(.engine(let asked)):
            // What only Ingest knows first: a hex key's byte order, whose address a re-attachment takes.
            let engineRequest: Request
            switch ingest.prepare(asked, at: now) {
            case .success(let prepared): engineRequest = prepared
            case .failure(let error): return respond(request, .failure(error), to: answer)
            }
            let outcome = await perform(.request(engineRequest, name: request.name), at: now)
            if let error = outcome.notStored {
                return respond(
                    request, .failure(.unknown("not stored: \(error.message)", accessoryControl: request.isAccessoryControl)), to: answer)
            }
            // An AccessoryControlDevice failure is also among the outputs (accessory/<ID>/error),
            // where publishing it counted it already: one error, counted once.
            if case .reattach(let id, let address) = engineRequest, case .success = outcome.result {
                logger.announce("re-attached accessory \(id) to \(address) (\(RequestName.reattach.name))")
            }
            let counted = outcome.outputs.contains { if case .accessoryError = $0 { true } else { false } }
            respond(request, publisher.responseBody(outcome.result), to: answer, countError: !counted)
        }
    }

    func respond(
        _ request: IncomingRequest, _ result: Result<JSONValue, ResponseError>, to answer: RequestAnswer, countError: Bool = true
    ) {
        respond(request.name, result, transaction: request.transaction, to: answer, countError: countError, accessory: request.accessory)
    }

    /// Answers request `name`: on `bridge/response/<name>`, or to the HTTP caller; either way
    /// `bridge/last_response` says how it went. In a cluster the answer carries the instance
    /// and the epoch of the accessory's partition (partition 0's for the bridge's requests).
    func respond(
        _ name: String, _ result: Result<JSONValue, ResponseError>, transaction: JSONValue?, to answer: RequestAnswer,
        countError: Bool = true, accessory: BluetoothAddress? = nil
    ) {
        if case .failure(let error) = result {
            if countError { diagnostics.countError(error.code) }
            logger.debug("request \(name) failed: \(error.code): \(error.message)")
        }
        var overHTTP = false
        if case .http(let reply) = answer {
            overHTTP = true
            reply.answer(result, body: publisher.stamped(publisher.payloads.response(result, transaction: transaction), for: accessory))
        }
        diagnostics.countRequest(name, result, overHTTP: overHTTP)
        publisher.respond(name, result, transaction: transaction, at: clock(), publishResponse: !overHTTP, accessory: accessory)
    }
}
