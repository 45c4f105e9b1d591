import JSON

/// A message to one of the forms behind Home Assistant's buttons (`bridge/pairing/set`,
/// `bridge/reattach/set`): a JSON object, its `transaction`, and the keys it carries besides.
/// Each form decodes its own keys; what is no JSON object is refused the same way for both.
struct FormMessage {
    var payload: JSONValue
    var transaction: JSONValue?
    /// Its keys other than `transaction`.
    var keys: Set<String>

    /// The message in `bytes`, or the request API's `invalidRequest` saying why it is none.
    static func parse(_ bytes: [UInt8]) -> Result<FormMessage, ResponseError> {
        let payload: JSONValue
        do {
            payload = try JSONParser.parse(bytes)
        } catch {
            return .failure(.invalidRequest("the payload is not JSON: \(error.description)", accessoryControl: false))
        }
        guard case .object(let pairs) = payload else {
            return .failure(.invalidRequest("the payload must be a JSON object", accessoryControl: false))
        }
        return .success(
            FormMessage(payload: payload, transaction: payload["transaction"], keys: Set(pairs.map(\.0)).subtracting(["transaction"])))
    }
}
