import AccessoryKit
import JSON
import MQTT

extension BridgeRuntime {
    /// `bridge/request/<name>`: exactly one response, published only after the change is
    /// committed to storage. On a storage failure the engine keeps its previous state (the
    /// request ran on a copy), the response is `unknown` and nothing is acknowledged.
    func handleRequest(name: String, payload bytes: [UInt8]) {
        let now = clock()
        let control = RequestDecoder.isAccessoryControl(name)
        var transaction: JSONValue?
        let parsed: JSONValue
        do {
            parsed = try JSONParser.parse(bytes)
            transaction = parsed["transaction"]
        } catch {
            respond(name, .failure(.invalidRequest("the payload is not JSON: \(error.description)", accessoryControl: control)), transaction: nil)
            return
        }
        switch RequestDecoder.decode(name: name, payload: parsed) {
        case .failure(let error):
            respond(name, .failure(error), transaction: transaction)
        case .success(.health):
            respond(name, .success(healthPayload), transaction: transaction)
        case .success(.engine(let request)):
            var candidate = engine
            let step = candidate.handle(.request(request, role: .container), at: now)
            // Telemetry's deferred writes first, so the request's come after them on disk. If
            // they fail, the request is still tried on its own (its writes supersede them).
            flushDeferredWrites(context: "before request \(name)")
            if let storageError = commit(step.outputs, context: "request \(name)") {
                respond(name, .failure(.unknown("not stored: \(storageError.message)", accessoryControl: control)), transaction: transaction)
                return
            }
            dropDeferredWrites(supersededBy: step.outputs)
            engine = candidate
            publish(step.outputs, at: now)
            if accessoriesDirty { publishAccessoryList() }
            // An AccessoryControlDevice failure is also among the outputs (accessory/<ID>/error),
            // where publishing it counted it already: one error, counted once.
            let counted = step.outputs.contains { if case .accessoryError = $0 { true } else { false } }
            respond(name, result(step.result), transaction: transaction, countError: !counted)
        }
    }

    func result(_ result: RequestResult?) -> Result<JSONValue, ResponseError> {
        switch result {
        case nil, .success(.empty)?: return .success(.object([]))
        case .success(.accessory(let accessory))?: return .success(payloads.accessory(accessory))
        case .success(.configuration(let configuration))?: return .success(payloads.configuration(configuration))
        case .success(.device(let device))?:
            return .success(["accessory": payloads.accessory(device.accessory), "configuration": payloads.configuration(device.configuration)])
        case .success(.picker(let picker))?: return .success(payloads.picker(picker))
        case .failure(let error)?: return .failure(ResponseError(error))
        }
    }

    func respond(_ name: String, _ result: Result<JSONValue, ResponseError>, transaction: JSONValue?,
                 countError: Bool = true) {
        if case .failure(let error) = result {
            if countError { counters.errors += 1 }
            logger.debug("request \(name) failed: \(error.code): \(error.message)")
        }
        client.post(topic: topics.response(name), payload: payloads.response(result, transaction: transaction).bytes, qos: .atLeastOnce)
    }
}
