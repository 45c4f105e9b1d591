// libFuzzer target: the request API's parsing, as BridgeRuntime.handleRequest runs it.
// Input: the request name (up to the first newline; may be anything, `+`, `#`, `/`
// included) and the payload bytes. Checks, for any input:
//   - JSONParser.parse never crashes; what it accepts serializes and parses back equal;
//   - RequestDecoder.decode never crashes; a refusal is `invalidRequest` with a message;
//   - the response payload (what the bridge publishes) is valid JSON that parses back.
import JSON

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let buffer = UnsafeRawBufferPointer(start: data, count: size)
    var name = ""
    var payload = Array(buffer)
    if let newline = buffer.firstIndex(of: 0x0A) {
        name = String(decoding: UnsafeRawBufferPointer(rebasing: buffer[..<newline]), as: UTF8.self)
        payload = Array(buffer[(newline + 1)...])
    }
    let payloads = Payloads(sourceNames: [:])
    let control = RequestDecoder.isAccessoryControl(name)
    let parsed: JSONValue
    do {
        parsed = try JSONParser.parse(payload)
    } catch {
        precondition(!error.reason.isEmpty, "parse error without a reason")
        precondition(error.offset >= 0 && error.offset <= payload.count, "parse error offset out of range")
        let response = payloads.response(
            .failure(
                .invalidRequest(
                    "the payload is not JSON: \(error.description)",
                    accessoryControl: control)), transaction: nil)
        precondition((try? JSONParser.parse(response.bytes)) != nil, "response is not JSON")
        return 0
    }
    // Round trip: what the bridge accepts it can write back, and reading that gives the same value.
    let reparsed = try? JSONParser.parse(parsed.bytes)
    precondition(reparsed != nil, "serialized value does not parse: \(parsed.serialized.prefix(200))")
    precondition(reparsed == parsed, "round trip changed the value")
    let transaction = parsed["transaction"]
    let result: Result<JSONValue, ResponseError>
    switch RequestDecoder.decode(name: name, payload: parsed) {
    case .failure(let error):
        precondition(error.code == "invalidRequest", "decoder refused with \(error.code)")
        precondition(!error.message.isEmpty, "refusal without a message")
        result = .failure(error)
    case .success:
        precondition(RequestDecoder.names.contains(name), "accepted an unknown request name")
        result = .success(.object([]))
    }
    let response = payloads.response(result, transaction: transaction)
    precondition((try? JSONParser.parse(response.bytes)) != nil, "response is not JSON")
    return 0
}
